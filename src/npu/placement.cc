#include "npu/placement.h"

#include "base/log.h"
#include "graph/topology.h"
#include "npu/concat_plan.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

namespace {

Placement on_cpu(std::string reason) { return {Target::kCpu, NpuForm::kTasks, std::move(reason), nullptr}; }

// Shape-only ops whose input and output are the same native cube (a
// [1, C, 1, 1] cube flattened to [1, C], say) need no task at all.
bool is_alias(const graph::Graph& g, const graph::Op& op) {
    using graph::OpType;
    if (op.type != OpType::kFlatten && op.type != OpType::kReshape && op.type != OpType::kSqueeze &&
        op.type != OpType::kUnsqueeze && op.type != OpType::kIdentity)
        return false;
    if (op.inputs.empty() || op.outputs.size() != 1) return false;
    const auto valid = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (!valid(op.inputs[0]) || !valid(op.outputs[0])) return false;
    const graph::Tensor& x = g.tensors[static_cast<size_t>(op.inputs[0])];
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    CubeShape cx, cy;
    const bool native = x.dtype == graph::DType::kInt8 || x.dtype == graph::DType::kFloat16;
    // Equal cubes hold equal bytes, but the element order agrees only for one
    // pixel, an unchanged shape or two matrices ([1, M, K] and [M, K]): a
    // [1, C, H, 1] cube and an [H, C] matrix share a cube yet order their
    // values differently.
    if (!native || y.dtype != x.dtype || !(x.quant == y.quant) || g.is_constant(op.inputs[0]) ||
        !cube_of_shape(x.shape, &cx) || !cube_of_shape(y.shape, &cy) || cx.c != cy.c || cx.h != cy.h || cx.w != cy.w)
        return false;
    return (cx.h == 1 && cx.w == 1) || x.shape == y.shape || (matrix_rows(x.shape) > 0 && matrix_rows(y.shape) > 0);
}

}  // namespace

Placement place_op(const graph::Graph& g, const graph::Op& op, const hw::SocProfile& soc, uint32_t core_mask) {
    const bool rk356x = soc.arch == hw::NpuArch::kRk356x;
    if (is_alias(g, op) && !(rk356x && g.tensors[static_cast<size_t>(op.inputs[0])].dtype != graph::DType::kInt8))
        return {Target::kNpu, NpuForm::kAlias, "an alias of its input: the same cube bytes (no task)", nullptr};
    if (op.type == graph::OpType::kConcat) {
        auto plan = plan_concat_in_place(g, op, soc.arch);
        if (!plan.is_ok()) return on_cpu(plan.status().message());
        return {Target::kNpu, NpuForm::kConcatInPlace,
                "in place: its producers write at their channel offsets (no task)", nullptr};
    }
    if (op.type == graph::OpType::kSplit) {
        auto plan = plan_split_in_place(g, op, soc.arch);
        if (!plan.is_ok()) return on_cpu(plan.status().message());
        return {Target::kNpu, NpuForm::kSplitInPlace, "in place: its consumers read the input's surfaces (no task)",
                nullptr};
    }
    auto prepared = prepare_op(g, op, soc);
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
    return {Target::kNpu, NpuForm::kTasks, p.describe(soc, core_mask), std::move(prepared).value()};
}

void keep_lone_aliases_on_cpu(const graph::Graph& g, std::vector<Placement>* placements) {
    std::vector<Placement>& placed = *placements;
    const auto is_alias_op = [&](int32_t op) { return placed[static_cast<size_t>(op)].target == Target::kNpu &&
                                                      placed[static_cast<size_t>(op)].form == NpuForm::kAlias; };
    std::vector<int32_t> aliases;
    for (size_t i = 0; i < placed.size() && i < g.ops.size(); ++i)
        if (is_alias_op(static_cast<int32_t>(i))) aliases.push_back(static_cast<int32_t>(i));
    if (aliases.empty()) return;
    const std::vector<int32_t> producer = graph::producers(g);
    const std::vector<std::vector<int32_t>> readers = graph::consumers(g);
    // An alias next to a cube-using NPU op keeps its cube, and so does one
    // next to such an alias: spread that to a fixed point.
    std::vector<bool> anchored(placed.size(), false);
    const auto holds_cube = [&](int32_t op) {
        return op >= 0 && placed[static_cast<size_t>(op)].target == Target::kNpu &&
               (!is_alias_op(op) || anchored[static_cast<size_t>(op)]);
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (int32_t a : aliases) {
            if (anchored[static_cast<size_t>(a)]) continue;
            const graph::Op& op = g.ops[static_cast<size_t>(a)];
            bool near_npu = holds_cube(producer[static_cast<size_t>(op.inputs[0])]);
            for (int32_t reader : readers[static_cast<size_t>(op.outputs[0])]) near_npu = near_npu || holds_cube(reader);
            if (near_npu) anchored[static_cast<size_t>(a)] = changed = true;
        }
    }
    for (int32_t a : aliases) {
        if (anchored[static_cast<size_t>(a)]) continue;
        placed[static_cast<size_t>(a)] =
            on_cpu("an alias with no NPU op on either side: a cube would only add a pack and an unpack");
        RKNN_LOG_AT(3, "op %d %s (%s): CPU, %s", a, g.ops[static_cast<size_t>(a)].name.c_str(),
                    graph::op_type_name(g.ops[static_cast<size_t>(a)].type), placed[static_cast<size_t>(a)].reason.c_str());
    }
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
    keep_lone_aliases_on_cpu(g, &placements);
    return placements;
}

}  // namespace rknn::npu
