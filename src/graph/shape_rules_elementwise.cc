// Shape rules of element-wise, comparison, normalisation and reduction ops.
#include <algorithm>

#include "graph/shape_rules.h"

namespace rknn::graph::rules {
namespace {

ValueInfo like(const ValueInfo& source, DType dtype) {
    ValueInfo out;
    out.dtype = dtype;
    out.shape = source.shape;
    return out;
}

}  // namespace

Status same_as_input0(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    out[0] = like(*in[0], in[0]->dtype);
    return Status::ok();
}

Status broadcast_binary(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(out[0].shape, broadcast_shapes(in[0]->shape, in[1]->shape));
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

Status broadcast_compare(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_RETURN_IF_ERROR(broadcast_binary(op, in, out));
    out[0].dtype = DType::kBool;
    return Status::ok();
}

Status broadcast_variadic(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    Shape shape = in[0]->shape;
    for (size_t i = 1; i < in.size(); ++i) {
        if (in[i] == nullptr) return Status(StatusCode::kInvalidArgument, "an input is missing");
        RKNN_ASSIGN_OR_RETURN(shape, broadcast_shapes(shape, in[i]->shape));
    }
    out[0].shape = shape;
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

Status where(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_ASSIGN_OR_RETURN(Shape shape, broadcast_shapes(in[0]->shape, in[1]->shape));
    RKNN_ASSIGN_OR_RETURN(out[0].shape, broadcast_shapes(shape, in[2]->shape));
    out[0].dtype = in[1]->dtype;
    return Status::ok();
}

Status cast(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const DType to = dtype_from_name(op.attrs.get_string("to", ""));
    if (to == DType::kUndefined) return Status(StatusCode::kInvalidArgument, "Cast needs a known target type");
    out[0] = like(*in[0], to);
    return Status::ok();
}

Status dropout(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    out[0] = like(*in[0], in[0]->dtype);
    if (out.size() > 1) out[1] = like(*in[0], DType::kBool);
    return Status::ok();
}

Status quantize_linear(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const DType dtype = in.size() > 2 && in[2] != nullptr ? in[2]->dtype : DType::kUInt8;
    if (dtype != DType::kUInt8 && dtype != DType::kInt8) {
        return Status(StatusCode::kInvalidArgument, "QuantizeLinear outputs int8 or uint8 only");
    }
    out[0] = like(*in[0], dtype);
    return Status::ok();
}

Status dequantize_linear(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    out[0] = like(*in[0], DType::kFloat32);
    return Status::ok();
}

Status reduce(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
    std::vector<int64_t> axes = op.attrs.get_ints("axes");
    if (in.size() > 1 && in[1] != nullptr) {
        RKNN_ASSIGN_OR_RETURN(axes, read_int_values(in[1], "axes"));
    }
    const bool keepdims = op.attrs.get_int("keepdims", 1) != 0;
    const bool noop_when_empty = op.attrs.get_int("noop_with_empty_axes", 0) != 0;
    if (axes.empty() && noop_when_empty) {
        out[0] = like(*in[0], in[0]->dtype);
        return Status::ok();
    }
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
    for (int64_t axis : axes) {
        RKNN_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, rank, op_type_name(op.type)));
        reduced[a] = true;
    }
    Shape shape;
    for (int64_t d = 0; d < rank; ++d) {
        if (!reduced[d]) shape.push_back(in[0]->shape[d]);
        else if (keepdims) shape.push_back(1);
    }
    out[0].shape = shape;
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

Status arg_reduce(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
    RKNN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(op.attrs.get_int("axis", 0), rank, op_type_name(op.type)));
    Shape shape = in[0]->shape;
    if (op.attrs.get_int("keepdims", 1) != 0) {
        shape[axis] = 1;
    } else {
        shape.erase(shape.begin() + axis);
    }
    out[0].shape = shape;
    out[0].dtype = DType::kInt64;
    return Status::ok();
}

Status layer_normalization(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const int64_t rank = static_cast<int64_t>(in[0]->shape.size());
    RKNN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(op.attrs.get_int("axis", -1), rank, "LayerNormalization"));
    out[0] = like(*in[0], in[0]->dtype);
    Shape stats = in[0]->shape;
    for (int64_t d = axis; d < rank; ++d) stats[d] = 1;
    for (size_t i = 1; i < out.size(); ++i) {
        out[i].shape = stats;
        out[i].dtype = DType::kFloat32;
    }
    return Status::ok();
}

Status batch_normalization(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    if (in[0]->shape.size() < 2) return Status(StatusCode::kInvalidArgument, "input needs at least 2 dims");
    out[0] = like(*in[0], in[0]->dtype);
    for (size_t i = 1; i < out.size(); ++i) out[i] = like(*in[3], in[3]->dtype);
    return Status::ok();
}

}  // namespace rknn::graph::rules
