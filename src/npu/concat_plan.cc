#include "npu/concat_plan.h"

namespace rknn::npu {

namespace {
Status needs_copy(std::string why) { return Status(StatusCode::kUnimplemented, "Concat needs a copy: " + std::move(why)); }
Status split_needs_copy(std::string why) { return Status(StatusCode::kUnimplemented, "Split needs a copy: " + std::move(why)); }
}  // namespace

StatusOr<ConcatPlan> plan_concat_in_place(const graph::Graph& g, const graph::Op& op) {
    if (op.type != graph::OpType::kConcat) return RKNN_INVALID_ARGUMENT("%s is not a Concat", op.name.c_str());
    const auto valid = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (op.inputs.empty() || op.outputs.size() != 1 || !valid(op.outputs[0]))
        return RKNN_INVALID_ARGUMENT("Concat %s has malformed inputs or outputs", op.name.c_str());
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    if ((y.dtype != graph::DType::kInt8 && y.dtype != graph::DType::kFloat16) || y.shape.size() != 4 || y.shape[0] != 1)
        return needs_copy("the output is not an int8 or fp16 [1, C, H, W] cube");
    const int c2 = y.dtype == graph::DType::kInt8 ? 16 : 8;
    int64_t axis = op.attrs.get_int("axis", 1);
    if (axis < 0) axis += 4;
    if (axis != 1) return needs_copy("it joins along axis " + std::to_string(axis) + ", not the channels");
    const int64_t surface = y.shape[2] * y.shape[3] * 16;
    ConcatPlan plan;
    int64_t channel = 0;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        if (!valid(op.inputs[i])) return RKNN_INVALID_ARGUMENT("Concat %s has a bad input", op.name.c_str());
        if (g.is_constant(op.inputs[i])) return needs_copy("input " + std::to_string(i) + " is a constant");
        const graph::Tensor& x = g.tensors[static_cast<size_t>(op.inputs[i])];
        if (x.dtype != y.dtype || x.shape.size() != 4 || x.shape[0] != 1 || x.shape[2] != y.shape[2] ||
            x.shape[3] != y.shape[3])
            return needs_copy("input " + std::to_string(i) + " is not a cube of the output's height and width");
        if (!(x.quant == y.quant)) return needs_copy("input " + std::to_string(i) + " has its own quantisation");
        if (channel % c2 != 0)
            return needs_copy("input " + std::to_string(i) + " starts at channel " + std::to_string(channel) +
                              ", inside an atom of " + std::to_string(c2));
        plan.input_offsets.push_back(static_cast<uint64_t>(channel / c2 * surface));
        channel += x.shape[1];
    }
    if (channel != y.shape[1]) return RKNN_INVALID_ARGUMENT("Concat %s: channels do not add up", op.name.c_str());
    plan.output_bytes = static_cast<uint64_t>((channel + c2 - 1) / c2 * surface);
    return plan;
}

StatusOr<SplitPlan> plan_split_in_place(const graph::Graph& g, const graph::Op& op) {
    if (op.type != graph::OpType::kSplit) return RKNN_INVALID_ARGUMENT("%s is not a Split", op.name.c_str());
    const auto valid = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (op.inputs.empty() || op.outputs.empty() || !valid(op.inputs[0]))
        return RKNN_INVALID_ARGUMENT("Split %s has malformed inputs or outputs", op.name.c_str());
    if (g.is_constant(op.inputs[0])) return split_needs_copy("the input is a constant");
    const graph::Tensor& x = g.tensors[static_cast<size_t>(op.inputs[0])];
    if ((x.dtype != graph::DType::kInt8 && x.dtype != graph::DType::kFloat16) || x.shape.size() != 4 || x.shape[0] != 1)
        return split_needs_copy("the input is not an int8 or fp16 [1, C, H, W] cube");
    const int c2 = x.dtype == graph::DType::kInt8 ? 16 : 8;
    int64_t axis = op.attrs.get_int("axis", 0);
    if (axis < 0) axis += 4;
    if (axis != 1) return split_needs_copy("it splits along axis " + std::to_string(axis) + ", not the channels");
    const int64_t surface = x.shape[2] * x.shape[3] * 16;
    SplitPlan plan;
    int64_t channel = 0;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        if (!valid(op.outputs[i])) return RKNN_INVALID_ARGUMENT("Split %s has a bad output", op.name.c_str());
        const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[i])];
        if (y.dtype != x.dtype || y.shape.size() != 4 || y.shape[0] != 1 || y.shape[2] != x.shape[2] ||
            y.shape[3] != x.shape[3] || y.shape[1] <= 0)
            return split_needs_copy("output " + std::to_string(i) + " is not a cube of the input's height and width");
        if (!(y.quant == x.quant)) return split_needs_copy("output " + std::to_string(i) + " has its own quantisation");
        if (i + 1 < op.outputs.size() && y.shape[1] % c2 != 0)
            return split_needs_copy("output " + std::to_string(i) + " has " + std::to_string(y.shape[1]) +
                                    " channels, not whole atoms of " + std::to_string(c2));
        plan.output_offsets.push_back(static_cast<uint64_t>(channel / c2 * surface));
        channel += y.shape[1];
    }
    if (channel != x.shape[1]) return RKNN_INVALID_ARGUMENT("Split %s: channels do not add up", op.name.c_str());
    return plan;
}

}  // namespace rknn::npu
