// Shape rules of data-movement and shape-manipulation ops.
#include <algorithm>

#include "graph/op_params.h"
#include "graph/shape_rules.h"

namespace rknn::graph::rules {
namespace {

void set(ValueInfo& out, const Shape& shape, DType dtype) {
    out.shape = shape;
    out.dtype = dtype;
}

Status need_rank(const ValueInfo* v, size_t rank, const char* what) {
    if (v->shape.size() != rank) {
        return make_status(StatusCode::kInvalidArgument, "%s needs %zu dims, has %zu", what, rank, v->shape.size());
    }
    return Status::ok();
}

}  // namespace

Status concat(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    if (in.empty() || in[0] == nullptr) return Status(StatusCode::kInvalidArgument, "Concat needs an input");
    const Shape& first = in[0]->shape;
    const int64_t rank = static_cast<int64_t>(first.size());
    if (rank == 0) return Status(StatusCode::kInvalidArgument, "Concat cannot join scalars");
    if (!op.attrs.has("axis")) return Status(StatusCode::kInvalidArgument, "Concat needs an axis");
    RKNN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(op.attrs.get_int("axis", 0), rank, "Concat"));
    Shape shape = first;
    shape[axis] = 0;
    for (const ValueInfo* v : in) {
        if (v == nullptr) return Status(StatusCode::kInvalidArgument, "an input is missing");
        if (static_cast<int64_t>(v->shape.size()) != rank) return Status(StatusCode::kInvalidArgument, "ranks differ");
        for (int64_t d = 0; d < rank; ++d) {
            if (d != axis && v->shape[d] != first[d])
                return Status(StatusCode::kInvalidArgument, "shapes differ outside the concat axis");
        }
        shape[axis] += v->shape[axis];
    }
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status split(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(SplitParams p, split_params(op, in, out.size()));
    for (size_t i = 0; i < out.size(); ++i) {
        Shape shape = in[0]->shape;
        shape[p.axis] = p.sizes[i];
        set(out[i], shape, in[0]->dtype);
    }
    return Status::ok();
}

Status slice(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(SliceParams p, slice_params(op, in));
    set(out[0], p.out, in[0]->dtype);
    return Status::ok();
}

Status reshape(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(Shape shape, reshape_target(op, in));
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status flatten(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const Shape& s = in[0]->shape;
    const int64_t rank = static_cast<int64_t>(s.size());
    int64_t axis = op.attrs.get_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return Status(StatusCode::kInvalidArgument, "Flatten axis out of range");
    int64_t outer = 1;
    int64_t inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= s[d];
    set(out[0], {outer, inner}, in[0]->dtype);
    return Status::ok();
}

Status squeeze(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const Shape& s = in[0]->shape;
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, squeeze_axes(op, in, static_cast<int64_t>(s.size())));
    Shape shape;
    for (size_t d = 0; d < s.size(); ++d) {
        const bool listed = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
        if (listed && s[d] != 1) return Status(StatusCode::kInvalidArgument, "squeezing a dimension that is not 1");
        if (axes.empty() ? s[d] != 1 : !listed) shape.push_back(s[d]);
    }
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status unsqueeze(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const Shape& s = in[0]->shape;
    bool axes_given = op.attrs.has("axes") || (in.size() > 1 && in[1] != nullptr);
    if (!axes_given) return Status(StatusCode::kInvalidArgument, "Unsqueeze needs axes");
    // Axes refer to the output rank, which depends on how many there are: count them first.
    std::vector<int64_t> raw = op.attrs.get_ints("axes");
    if (in.size() > 1 && in[1] != nullptr) {
        RKNN_ASSIGN_OR_RETURN(raw, read_int_values(in[1], "axes"));
    }
    const int64_t out_rank = static_cast<int64_t>(s.size() + raw.size());
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, squeeze_axes(op, in, out_rank));
    Shape shape;
    size_t next = 0;
    for (int64_t d = 0; d < out_rank; ++d) {
        if (std::find(axes.begin(), axes.end(), d) != axes.end()) {
            shape.push_back(1);
        } else {
            if (next >= s.size()) return Status(StatusCode::kInvalidArgument, "bad axes");
            shape.push_back(s[next++]);
        }
    }
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status transpose(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const Shape& s = in[0]->shape;
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, transpose_perm(op, s.size()));
    Shape shape(s.size());
    for (size_t d = 0; d < s.size(); ++d) shape[d] = s[perm[d]];
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status pad(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(PadParams p, pad_params(op, in));
    set(out[0], p.out, in[0]->dtype);
    return Status::ok();
}

Status resize(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(ResizeParams p, resize_params(op, in));
    set(out[0], p.out, in[0]->dtype);
    return Status::ok();
}

Status gather(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const Shape& data = in[0]->shape;
    if (data.empty()) return Status(StatusCode::kInvalidArgument, "Gather needs data of rank >= 1");
    if (in[1]->dtype != DType::kInt64 && in[1]->dtype != DType::kInt32)
        return Status(StatusCode::kInvalidArgument, "Gather indices must be int32 or int64");
    RKNN_ASSIGN_OR_RETURN(int64_t axis,
                          normalize_axis(op.attrs.get_int("axis", 0), static_cast<int64_t>(data.size()), "Gather"));
    Shape shape(data.begin(), data.begin() + axis);
    shape.insert(shape.end(), in[1]->shape.begin(), in[1]->shape.end());
    shape.insert(shape.end(), data.begin() + axis + 1, data.end());
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status depth_to_space(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_RETURN_IF_ERROR(need_rank(in[0], 4, "DepthToSpace input"));
    const int64_t b = op.attrs.get_int("blocksize", 0);
    const Shape& s = in[0]->shape;
    if (b < 1 || s[1] % (b * b) != 0) return Status(StatusCode::kInvalidArgument, "blocksize does not divide C");
    set(out[0], {s[0], s[1] / (b * b), s[2] * b, s[3] * b}, in[0]->dtype);
    return Status::ok();
}

Status space_to_depth(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_RETURN_IF_ERROR(need_rank(in[0], 4, "SpaceToDepth input"));
    const int64_t b = op.attrs.get_int("blocksize", 0);
    const Shape& s = in[0]->shape;
    if (b < 1 || s[2] % b != 0 || s[3] % b != 0)
        return Status(StatusCode::kInvalidArgument, "blocksize does not divide H and W");
    set(out[0], {s[0], s[1] * b * b, s[2] / b, s[3] / b}, in[0]->dtype);
    return Status::ok();
}

Status tile(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, read_int_values(in[1], "repeats"));
    const Shape& s = in[0]->shape;
    if (repeats.size() != s.size()) return Status(StatusCode::kInvalidArgument, "repeats has the wrong length");
    Shape shape(s.size());
    for (size_t d = 0; d < s.size(); ++d) {
        if (repeats[d] < 0) return Status(StatusCode::kInvalidArgument, "negative repeat");
        if (repeats[d] != 0 && s[d] > kMaxTensorElements / repeats[d])
            return Status(StatusCode::kInvalidArgument, "repeat too large");
        shape[d] = s[d] * repeats[d];
    }
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status expand(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> target, read_int_values(in[1], "shape"));
    for (int64_t d : target) {
        if (d < 0) return Status(StatusCode::kInvalidArgument, "negative dimension in the shape");
    }
    RKNN_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(in[0]->shape, target));
    set(out[0], shape, in[0]->dtype);
    return Status::ok();
}

Status shape_of(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
    int64_t start = op.attrs.get_int("start", 0);
    int64_t end = op.attrs.get_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::min(std::max<int64_t>(start, 0), rank);
    end = std::min(std::max<int64_t>(end, 0), rank);
    set(out[0], {std::max<int64_t>(end - start, 0)}, DType::kInt64);
    return Status::ok();
}

Status constant_of_shape(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, read_int_values(in[0], "shape"));
    const DType dtype = dtype_from_name(op.attrs.get_string("value_dtype", "float32"));
    if (dtype == DType::kUndefined) return Status(StatusCode::kInvalidArgument, "unknown value type");
    for (int64_t d : shape) {
        if (d < 0) return Status(StatusCode::kInvalidArgument, "negative dimension in the shape");
    }
    set(out[0], shape, dtype);
    return Status::ok();
}

Status constant(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&) {
    return Status(StatusCode::kFailedPrecondition, "Constant ops become constant tensors when a model is converted");
}

}  // namespace rknn::graph::rules
