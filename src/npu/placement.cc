#include "npu/placement.h"

#include "base/log.h"
#include "npu/conv_lowering.h"
#include "npu/graph_conv.h"

namespace rknn::npu {

namespace {

Placement on_cpu(std::string reason) { return {Target::kCpu, std::move(reason)}; }

}  // namespace

Placement place_op(const graph::Graph& g, const graph::Op& op, const hw::SocProfile& soc, uint32_t core_mask) {
    if (op.type != graph::OpType::kConv)
        return on_cpu(std::string(graph::op_type_name(op.type)) + " is not lowered to the NPU yet");
    auto prepared = prepare_int8_conv(g, op);
    if (!prepared.is_ok()) return on_cpu(prepared.status().message());
    auto plan = plan_conv(prepared.value()->geometry, soc, core_mask);
    if (!plan.is_ok()) return on_cpu(plan.status().message());
    return {Target::kNpu, std::string(prepared.value()->geometry.depthwise ? "depthwise " : "") + "convolution in " +
                              std::to_string(plan.value().task_count()) + " task(s)"};
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
