#include "npu/placement.h"

#include "base/log.h"
#include "npu/concat_plan.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

namespace {

Placement on_cpu(std::string reason) { return {Target::kCpu, std::move(reason)}; }

}  // namespace

Placement place_op(const graph::Graph& g, const graph::Op& op, const hw::SocProfile& soc, uint32_t core_mask) {
    if (op.type == graph::OpType::kConcat) {
        auto plan = plan_concat_in_place(g, op, soc.c2_int8);
        if (!plan.is_ok()) return on_cpu(plan.status().message());
        return {Target::kNpu, "in place: its producers write at their channel offsets (no task)"};
    }
    auto prepared = prepare_op(g, op);
    if (!prepared.is_ok()) return on_cpu(prepared.status().message());
    // Lowering against placeholder buffers proves the op fits the SoC (tiling, fields).
    const PreparedOp& p = *prepared.value();
    OpBuffers buffers;
    for (size_t i = 0; i < p.feature_inputs().size(); ++i) buffers.features.push_back(BufferRef(static_cast<int32_t>(i), 0));
    for (size_t i = 0; i < p.constants().size(); ++i) buffers.constants.push_back(BufferRef(static_cast<int32_t>(i), 0));
    buffers.output = BufferRef(0, 0);
    buffers.scratch = BufferRef(0, 0);
    ProgramBuilder program(soc);
    const Status lowered = p.lower(buffers, soc, core_mask, &program);
    if (!lowered.is_ok()) return on_cpu(lowered.message());
    return {Target::kNpu, p.describe(soc, core_mask)};
}

std::vector<Placement> place_graph(const graph::Graph& g, const hw::SocProfile& soc, uint32_t core_mask) {
    std::vector<Placement> placements;
    placements.reserve(g.ops.size());
    for (size_t i = 0; i < g.ops.size(); ++i) {
        placements.push_back(place_op(g, g.ops[i], soc, core_mask));
        const Placement& p = placements.back();
        RKNN_LOG_AT(3, "op %zu %s (%s): %s, %s", i, g.ops[i].name.c_str(), graph::op_type_name(g.ops[i].type),
                    p.target == Target::kNpu ? "NPU" : "CPU", p.reason.c_str());
    }
    return placements;
}

}  // namespace rknn::npu
