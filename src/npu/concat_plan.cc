#include "npu/concat_plan.h"

namespace rknn::npu {

namespace {

// What names the two sides of an in-place channel join or split.
struct Sides {
    const char* op;     // "Concat" / "Split"
    const char* whole;  // the tensor holding every channel: "output" / "input"
    const char* part;   // the tensors it is made of: "input" / "output"
};

Status needs_copy(const Sides& s, std::string why) {
    return Status(StatusCode::kUnimplemented, std::string(s.op) + " needs a copy: " + std::move(why));
}

// Byte offsets of `parts` (in channel order) inside the cube of `whole`:
// every part starts on an atom (so all but the last hold whole atoms) and
// shares the whole's dtype, quantisation, height and width.
StatusOr<std::vector<uint64_t>> part_offsets(const graph::Graph& g, const graph::Op& op, int32_t whole,
                                             const std::vector<int32_t>& parts, int64_t axis, const Sides& s) {
    const auto valid = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (parts.empty() || !valid(whole))
        return RKNN_INVALID_ARGUMENT("%s %s has malformed inputs or outputs", s.op, op.name.c_str());
    const graph::Tensor& y = g.tensors[static_cast<size_t>(whole)];
    if ((y.dtype != graph::DType::kInt8 && y.dtype != graph::DType::kFloat16) || y.shape.size() != 4 || y.shape[0] != 1)
        return needs_copy(s, std::string("the ") + s.whole + " is not an int8 or fp16 [1, C, H, W] cube");
    const int c2 = y.dtype == graph::DType::kInt8 ? 16 : 8;
    if (axis < 0) axis += 4;
    if (axis != 1) return needs_copy(s, "it works along axis " + std::to_string(axis) + ", not the channels");
    const int64_t surface = y.shape[2] * y.shape[3] * 16;
    std::vector<uint64_t> offsets;
    int64_t channel = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        const std::string name = std::string(s.part) + " " + std::to_string(i);
        if (!valid(parts[i])) return RKNN_INVALID_ARGUMENT("%s %s has a bad %s", s.op, op.name.c_str(), s.part);
        if (g.is_constant(parts[i])) return needs_copy(s, name + " is a constant");
        const graph::Tensor& x = g.tensors[static_cast<size_t>(parts[i])];
        if (x.dtype != y.dtype || x.shape.size() != 4 || x.shape[0] != 1 || x.shape[1] <= 0 ||
            x.shape[2] != y.shape[2] || x.shape[3] != y.shape[3])
            return needs_copy(s, name + " is not a cube of the " + s.whole + "'s height and width");
        if (!(x.quant == y.quant)) return needs_copy(s, name + " has its own quantisation");
        if (channel % c2 != 0)
            return needs_copy(s, name + " starts at channel " + std::to_string(channel) + ", inside an atom of " +
                                     std::to_string(c2));
        offsets.push_back(static_cast<uint64_t>(channel / c2 * surface));
        channel += x.shape[1];
    }
    if (channel != y.shape[1]) return RKNN_INVALID_ARGUMENT("%s %s: channels do not add up", s.op, op.name.c_str());
    return offsets;
}

}  // namespace

StatusOr<ConcatPlan> plan_concat_in_place(const graph::Graph& g, const graph::Op& op) {
    if (op.type != graph::OpType::kConcat) return RKNN_INVALID_ARGUMENT("%s is not a Concat", op.name.c_str());
    if (op.outputs.size() != 1) return RKNN_INVALID_ARGUMENT("Concat %s has malformed inputs or outputs", op.name.c_str());
    const Sides sides{"Concat", "output", "input"};
    RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets,
                          part_offsets(g, op, op.outputs[0], op.inputs, op.attrs.get_int("axis", 1), sides));
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    const int64_t c2 = y.dtype == graph::DType::kInt8 ? 16 : 8;
    ConcatPlan plan;
    plan.input_offsets = std::move(offsets);
    plan.output_bytes = static_cast<uint64_t>((y.shape[1] + c2 - 1) / c2 * y.shape[2] * y.shape[3] * 16);
    return plan;
}

StatusOr<SplitPlan> plan_split_in_place(const graph::Graph& g, const graph::Op& op) {
    if (op.type != graph::OpType::kSplit) return RKNN_INVALID_ARGUMENT("%s is not a Split", op.name.c_str());
    if (op.inputs.empty()) return RKNN_INVALID_ARGUMENT("Split %s has malformed inputs or outputs", op.name.c_str());
    const Sides sides{"Split", "input", "output"};
    RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets,
                          part_offsets(g, op, op.inputs[0], op.outputs, op.attrs.get_int("axis", 0), sides));
    if (g.is_constant(op.inputs[0])) return needs_copy(sides, "the input is a constant");
    SplitPlan plan;
    plan.output_offsets = std::move(offsets);
    return plan;
}

}  // namespace rknn::npu
