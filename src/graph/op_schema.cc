#include "graph/op_schema.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "graph/shape_rules.h"

namespace rknn::graph {
namespace {

using namespace rules;  // NOLINT: the table below names every rule

constexpr int kVariadic = -1;

// clang-format off
const OpSchema kSchemas[] = {
    {OpType::kConv,                  2, 4, 1, 1, conv},  // input 3: fused residual
    {OpType::kConvTranspose,         2, 3, 1, 1, conv_transpose},
    {OpType::kGemm,                  2, 4, 1, 1, gemm},  // input 3: fused residual
    {OpType::kMatMul,                2, 3, 1, 1, matmul},  // input 2: fused residual
    {OpType::kBatchNormalization,    5, 5, 1, 3, batch_normalization},
    {OpType::kAdd,                   2, 2, 1, 1, broadcast_binary},
    {OpType::kSub,                   2, 2, 1, 1, broadcast_binary},
    {OpType::kMul,                   2, 2, 1, 1, broadcast_binary},
    {OpType::kDiv,                   2, 2, 1, 1, broadcast_binary},
    {OpType::kMax,                   1, kVariadic, 1, 1, broadcast_variadic},
    {OpType::kMin,                   1, kVariadic, 1, 1, broadcast_variadic},
    {OpType::kSum,                   1, kVariadic, 1, 1, broadcast_variadic},
    {OpType::kMean,                  1, kVariadic, 1, 1, broadcast_variadic},
    {OpType::kPow,                   2, 2, 1, 1, broadcast_binary},
    {OpType::kSqrt,                  1, 1, 1, 1, same_as_input0},
    {OpType::kReciprocal,            1, 1, 1, 1, same_as_input0},
    {OpType::kAbs,                   1, 1, 1, 1, same_as_input0},
    {OpType::kNeg,                   1, 1, 1, 1, same_as_input0},
    {OpType::kExp,                   1, 1, 1, 1, same_as_input0},
    {OpType::kLog,                   1, 1, 1, 1, same_as_input0},
    {OpType::kErf,                   1, 1, 1, 1, same_as_input0},
    {OpType::kFloor,                 1, 1, 1, 1, same_as_input0},
    {OpType::kCeil,                  1, 1, 1, 1, same_as_input0},
    {OpType::kRelu,                  1, 1, 1, 1, same_as_input0},
    {OpType::kClip,                  1, 3, 1, 1, same_as_input0},
    {OpType::kLeakyRelu,             1, 1, 1, 1, same_as_input0},
    {OpType::kPRelu,                 2, 2, 1, 1, same_as_input0},
    {OpType::kSigmoid,               1, 1, 1, 1, same_as_input0},
    {OpType::kHardSigmoid,           1, 1, 1, 1, same_as_input0},
    {OpType::kHardSwish,             1, 1, 1, 1, same_as_input0},
    {OpType::kTanh,                  1, 1, 1, 1, same_as_input0},
    {OpType::kElu,                   1, 1, 1, 1, same_as_input0},
    {OpType::kSelu,                  1, 1, 1, 1, same_as_input0},
    {OpType::kSoftplus,              1, 1, 1, 1, same_as_input0},
    {OpType::kGelu,                  1, 1, 1, 1, same_as_input0},
    {OpType::kMaxPool,               1, 1, 1, 2, pool},
    {OpType::kAveragePool,           1, 1, 1, 1, pool},
    {OpType::kGlobalAveragePool,     1, 1, 1, 1, global_pool},
    {OpType::kGlobalMaxPool,         1, 1, 1, 1, global_pool},
    {OpType::kInstanceNormalization, 3, 3, 1, 1, same_as_input0},
    {OpType::kLayerNormalization,    2, 3, 1, 3, layer_normalization},
    {OpType::kConcat,                1, kVariadic, 1, 1, concat},
    {OpType::kSplit,                 1, 2, 1, kVariadic, split},
    {OpType::kSlice,                 1, 5, 1, 1, slice},
    {OpType::kReshape,               2, 2, 1, 1, reshape},
    {OpType::kFlatten,               1, 1, 1, 1, flatten},
    {OpType::kSqueeze,               1, 2, 1, 1, squeeze},
    {OpType::kUnsqueeze,             1, 2, 1, 1, unsqueeze},
    {OpType::kTranspose,             1, 1, 1, 1, transpose},
    {OpType::kPad,                   1, 4, 1, 1, pad},
    {OpType::kResize,                1, 4, 1, 1, resize},
    {OpType::kUpsample,              1, 2, 1, 1, resize},
    {OpType::kSoftmax,               1, 1, 1, 1, same_as_input0},
    {OpType::kLogSoftmax,            1, 1, 1, 1, same_as_input0},
    {OpType::kReduceMean,            1, 2, 1, 1, reduce},
    {OpType::kReduceSum,             1, 2, 1, 1, reduce},
    {OpType::kReduceMax,             1, 2, 1, 1, reduce},
    {OpType::kReduceMin,             1, 2, 1, 1, reduce},
    {OpType::kArgMax,                1, 1, 1, 1, arg_reduce},
    {OpType::kArgMin,                1, 1, 1, 1, arg_reduce},
    {OpType::kGather,                2, 2, 1, 1, gather},
    {OpType::kDepthToSpace,          1, 1, 1, 1, depth_to_space},
    {OpType::kSpaceToDepth,          1, 1, 1, 1, space_to_depth},
    {OpType::kTile,                  2, 2, 1, 1, tile},
    {OpType::kExpand,                2, 2, 1, 1, expand},
    {OpType::kWhere,                 3, 3, 1, 1, where},
    {OpType::kEqual,                 2, 2, 1, 1, broadcast_compare},
    {OpType::kGreater,               2, 2, 1, 1, broadcast_compare},
    {OpType::kLess,                  2, 2, 1, 1, broadcast_compare},
    {OpType::kCast,                  1, 1, 1, 1, cast},
    {OpType::kIdentity,              1, 1, 1, 1, same_as_input0},
    {OpType::kDropout,               1, 3, 1, 2, dropout},
    {OpType::kConstant,              0, 0, 1, 1, constant},
    {OpType::kShape,                 1, 1, 1, 1, shape_of},
    {OpType::kConstantOfShape,       1, 1, 1, 1, constant_of_shape},
    {OpType::kQuantizeLinear,        2, 3, 1, 1, quantize_linear},
    {OpType::kDequantizeLinear,      2, 3, 1, 1, dequantize_linear},
    {OpType::kSilu,                  1, 1, 1, 1, same_as_input0},
    {OpType::kCustom,                0, kVariadic, 1, kVariadic, nullptr},
};
// clang-format on

}  // namespace

const OpSchema* op_schema(OpType type) {
    for (const OpSchema& schema : kSchemas) {
        if (schema.type == type) return &schema;
    }
    return nullptr;
}

Status check_arity(const Op& op) {
    const OpSchema* schema = op_schema(op.type);
    if (schema == nullptr) return Status(StatusCode::kModelInvalid, "unknown op type");
    const int n_in = static_cast<int>(op.inputs.size());
    const int n_out = static_cast<int>(op.outputs.size());
    if (n_in < schema->min_inputs || (schema->max_inputs >= 0 && n_in > schema->max_inputs)) {
        return make_status(StatusCode::kModelInvalid, "%s \"%s\" has %d inputs (expects %d..%d)",
                           op_type_name(op.type), op.name.c_str(), n_in, schema->min_inputs, schema->max_inputs);
    }
    if (n_out < schema->min_outputs || (schema->max_outputs >= 0 && n_out > schema->max_outputs)) {
        return make_status(StatusCode::kModelInvalid, "%s \"%s\" has %d outputs (expects %d..%d)",
                           op_type_name(op.type), op.name.c_str(), n_out, schema->min_outputs, schema->max_outputs);
    }
    for (int i = 0; i < schema->min_inputs && i < n_in; ++i) {
        if (op.inputs[i] < 0 && op.type != OpType::kCustom) {
            return make_status(StatusCode::kModelInvalid, "%s \"%s\": required input %d is missing",
                               op_type_name(op.type), op.name.c_str(), i);
        }
    }
    return Status::ok();
}

Status infer_op(const Op& op, const std::vector<const ValueInfo*>& inputs, std::vector<ValueInfo>* outputs) {
    RKNN_RETURN_IF_ERROR(check_arity(op));
    const OpSchema* schema = op_schema(op.type);
    if (schema->infer == nullptr) {
        return Status(StatusCode::kUnimplemented, "no shape rule for custom op " + op.custom_type);
    }
    outputs->assign(op.outputs.size(), ValueInfo{});
    Status status = schema->infer(op, inputs, *outputs);
    if (!status.is_ok()) return status.with_context(std::string(op_type_name(op.type)) + " \"" + op.name + "\"");
    for (const ValueInfo& out : *outputs) {
        int64_t elements = 0;
        if (!checked_num_elements(out.shape, &elements)) {
            return make_status(StatusCode::kInvalidArgument, "%s \"%s\": output shape %s is invalid or too large",
                               op_type_name(op.type), op.name.c_str(), shape_to_string(out.shape).c_str());
        }
    }
    return Status::ok();
}

StatusOr<std::vector<int64_t>> read_int_values(const ValueInfo* value, const char* what) {
    if (value == nullptr) return make_status(StatusCode::kInvalidArgument, "%s is missing", what);
    if (value->data == nullptr) {
        return make_status(StatusCode::kFailedPrecondition, "%s must be a constant (its value decides a shape)", what);
    }
    int64_t count = 0;
    if (!checked_num_elements(value->shape, &count)) return make_status(StatusCode::kInvalidArgument, "%s shape", what);
    std::vector<int64_t> result(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
        switch (value->dtype) {
        case DType::kInt64: std::memcpy(&result[i], static_cast<const int64_t*>(value->data) + i, 8); break;
        case DType::kInt32: {
            int32_t v;
            std::memcpy(&v, static_cast<const int32_t*>(value->data) + i, 4);
            result[i] = v;
            break;
        }
        default: return make_status(StatusCode::kInvalidArgument, "%s must be int32 or int64", what);
        }
    }
    return result;
}

StatusOr<std::vector<double>> read_float_values(const ValueInfo* value, const char* what) {
    if (value == nullptr) return make_status(StatusCode::kInvalidArgument, "%s is missing", what);
    if (value->data == nullptr) {
        return make_status(StatusCode::kFailedPrecondition, "%s must be a constant (its value decides a shape)", what);
    }
    int64_t count = 0;
    if (!checked_num_elements(value->shape, &count)) return make_status(StatusCode::kInvalidArgument, "%s shape", what);
    std::vector<double> result(static_cast<size_t>(count));
    const auto* bytes = static_cast<const uint8_t*>(value->data);
    for (int64_t i = 0; i < count; ++i) {
        switch (value->dtype) {
        case DType::kFloat32: {
            float v;
            std::memcpy(&v, bytes + i * 4, 4);
            result[i] = v;
            break;
        }
        case DType::kFloat64: std::memcpy(&result[i], bytes + i * 8, 8); break;
        case DType::kInt64: {
            int64_t v;
            std::memcpy(&v, bytes + i * 8, 8);
            result[i] = static_cast<double>(v);
            break;
        }
        case DType::kInt32: {
            int32_t v;
            std::memcpy(&v, bytes + i * 4, 4);
            result[i] = v;
            break;
        }
        default: return make_status(StatusCode::kInvalidArgument, "%s must be float32/64 or int32/64", what);
        }
    }
    return result;
}

StatusOr<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
    const size_t rank = std::max(a.size(), b.size());
    Shape out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        if (da == db || db == 1) {
            out[i] = da;
        } else if (da == 1) {
            out[i] = db;
        } else {
            return Status(StatusCode::kInvalidArgument,
                          "shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
        }
    }
    return out;
}

StatusOr<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* op_name) {
    const int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized >= rank) {  // a scalar has no axis
        return make_status(StatusCode::kInvalidArgument, "%s: axis %lld is out of range for rank %lld", op_name,
                           static_cast<long long>(axis), static_cast<long long>(rank));
    }
    return normalized;
}

}  // namespace rknn::graph
