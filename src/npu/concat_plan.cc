#include "npu/concat_plan.h"

#include "npu/native_layout.h"

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

// How far apart parts must start on the architecture: an atom of channels
// on RK3588; 32 channels on RK356x, whose depthwise groups write (and whose
// CNA reads) channels in thirty-twos and sixteens beyond a tensor's own.
int part_channel_step(graph::DType dtype, hw::NpuArch arch) {
    if (arch == hw::NpuArch::kRk356x) return 32;
    return dtype == graph::DType::kInt8 ? 16 : 8;
}

// Byte offsets of `parts` (in channel order) inside the cube of `whole`:
// every part starts on a step of part_channel_step (so all but the last hold
// whole steps) and shares the whole's dtype, quantisation, height and width.
StatusOr<std::vector<uint64_t>> part_offsets(const graph::Graph& g, const graph::Op& op, int32_t whole,
                                             const std::vector<int32_t>& parts, int64_t axis, const Sides& s,
                                             hw::NpuArch arch) {
    const auto valid = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (parts.empty() || !valid(whole))
        return RKNN_INVALID_ARGUMENT("%s %s has malformed inputs or outputs", s.op, op.name.c_str());
    const graph::Tensor& y = g.tensors[static_cast<size_t>(whole)];
    const bool rk356x = arch == hw::NpuArch::kRk356x;
    if ((y.dtype != graph::DType::kInt8 && (y.dtype != graph::DType::kFloat16 || rk356x)) || y.shape.size() != 4 ||
        y.shape[0] != 1)
        return needs_copy(s, std::string("the ") + s.whole + (rk356x ? " is not an int8" : " is not an int8 or fp16") +
                                 " [1, C, H, W] cube");
    const int step = part_channel_step(y.dtype, arch);
    if (axis < 0) axis += 4;
    if (axis != 1) return needs_copy(s, "it works along axis " + std::to_string(axis) + ", not the channels");
    // Bytes per channel of a surface: 16-byte atoms of 16 int8 or 8 fp16
    // channels on RK3588, 8-byte atoms of 8 channels on RK356x.
    const int atom_channels = rk356x ? 8 : (y.dtype == graph::DType::kInt8 ? 16 : 8);
    const int64_t surface = rk356x ? static_cast<int64_t>(rk356x_surface_bytes(static_cast<int>(y.shape[2]),
                                                                               static_cast<int>(y.shape[3])))
                                   : y.shape[2] * y.shape[3] * 16;
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
        if (channel % step != 0)
            return needs_copy(s, name + " starts at channel " + std::to_string(channel) + ", inside " +
                                     (rk356x ? "a group of " : "an atom of ") + std::to_string(step));
        offsets.push_back(static_cast<uint64_t>(channel / atom_channels * surface));
        channel += x.shape[1];
    }
    if (channel != y.shape[1]) return RKNN_INVALID_ARGUMENT("%s %s: channels do not add up", s.op, op.name.c_str());
    return offsets;
}

}  // namespace

StatusOr<ConcatPlan> plan_concat_in_place(const graph::Graph& g, const graph::Op& op, hw::NpuArch arch) {
    if (op.type != graph::OpType::kConcat) return RKNN_INVALID_ARGUMENT("%s is not a Concat", op.name.c_str());
    if (op.outputs.size() != 1) return RKNN_INVALID_ARGUMENT("Concat %s has malformed inputs or outputs", op.name.c_str());
    const Sides sides{"Concat", "output", "input"};
    RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets,
                          part_offsets(g, op, op.outputs[0], op.inputs, op.attrs.get_int("axis", 1), sides, arch));
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    const auto c = static_cast<int>(y.shape[1]), h = static_cast<int>(y.shape[2]), w = static_cast<int>(y.shape[3]);
    ConcatPlan plan;
    plan.input_offsets = std::move(offsets);
    if (arch == hw::NpuArch::kRk356x) {
        plan.output_bytes = rk356x_cube_bytes(align_up(c, 32), h, w);  // room for the last part's 32-channel writes
    } else {
        const int c2 = y.dtype == graph::DType::kInt8 ? 16 : 8;
        plan.output_bytes = static_cast<uint64_t>((c + c2 - 1) / c2) * static_cast<uint64_t>(h) * static_cast<uint64_t>(w) * 16;
    }
    return plan;
}

StatusOr<SplitPlan> plan_split_in_place(const graph::Graph& g, const graph::Op& op, hw::NpuArch arch) {
    if (op.type != graph::OpType::kSplit) return RKNN_INVALID_ARGUMENT("%s is not a Split", op.name.c_str());
    if (op.inputs.empty()) return RKNN_INVALID_ARGUMENT("Split %s has malformed inputs or outputs", op.name.c_str());
    const Sides sides{"Split", "input", "output"};
    RKNN_ASSIGN_OR_RETURN(std::vector<uint64_t> offsets,
                          part_offsets(g, op, op.inputs[0], op.outputs, op.attrs.get_int("axis", 0), sides, arch));
    if (g.is_constant(op.inputs[0])) return needs_copy(sides, "the input is a constant");
    SplitPlan plan;
    plan.output_offsets = std::move(offsets);
    return plan;
}

}  // namespace rknn::npu
