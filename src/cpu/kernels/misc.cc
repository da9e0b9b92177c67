// Cast, Shape, ConstantOfShape, QuantizeLinear, DequantizeLinear.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/parallel.h"
#include "cpu/convert.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "cpu/kernels/quantize_math.h"

namespace rknn::cpu::kernels {
namespace {

// Per-axis parameter index of element i, or 0 for per-tensor parameters.
struct AxisParam {
    int64_t inner = 1;
    int64_t axis_size = 1;
    bool per_axis = false;
    int64_t index_of(int64_t i) const { return per_axis ? (i / inner) % axis_size : 0; }
};

StatusOr<AxisParam> axis_param(const KernelArgs& args, const HostTensor& scale) {
    const HostTensor& x = *args.inputs[0];
    AxisParam p;
    if (scale.numel() <= 1 && scale.rank() == 0) return p;
    if (scale.numel() == 1) return p;
    RKNN_ASSIGN_OR_RETURN(int64_t axis, graph::normalize_axis(args.op.attrs.get_int("axis", 1), x.rank(), "axis"));
    const AxisSplit s = split_at_axis(x.shape(), axis);
    if (scale.numel() != s.axis) return Status(StatusCode::kInvalidArgument, "one scale per channel of the axis");
    p.inner = s.inner;
    p.axis_size = s.axis;
    p.per_axis = true;
    return p;
}

}  // namespace

Status cast(const KernelArgs& args) { return cast_tensor(*args.inputs[0], args.outputs[0]); }

Status shape(const KernelArgs& args) {
    const Shape& s = args.inputs[0]->shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    int64_t start = args.op.attrs.get_int("start", 0);
    if (start < 0) start += rank;
    start = std::min(std::max<int64_t>(start, 0), rank);
    for (int64_t i = 0; i < args.outputs[0]->numel(); ++i) args.outputs[0]->data<int64_t>()[i] = s[start + i];
    return Status::ok();
}

Status constant_of_shape(const KernelArgs& args) {
    HostTensor* out = args.outputs[0];
    // The fill value is stored as attribute "value" (floats or ints) with value_dtype.
    const graph::Attribute* value = args.op.attrs.find("value");
    double fill = 0.0;
    if (value != nullptr && value->kind == graph::Attribute::Kind::kFloats && !value->floats.empty())
        fill = value->floats[0];
    if (value != nullptr && value->kind == graph::Attribute::Kind::kInts && !value->ints.empty())
        fill = static_cast<double>(value->ints[0]);
    HostTensor one(graph::DType::kFloat64, {1});
    one.data<double>()[0] = fill;
    HostTensor typed(out->dtype(), {1});
    RKNN_RETURN_IF_ERROR(cast_tensor(one, &typed));
    const size_t esize = graph::dtype_size(out->dtype());
    auto* dst = static_cast<uint8_t*>(out->raw());
    for (int64_t i = 0; i < out->numel(); ++i) std::memcpy(dst + i * esize, typed.raw(), esize);
    return Status::ok();
}

Status quantize_linear(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    const HostTensor& scale = *args.inputs[1];
    const HostTensor* zp = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    HostTensor* y = args.outputs[0];
    RKNN_ASSIGN_OR_RETURN(const AxisParam p, axis_param(args, scale));
    const double lo = y->dtype() == DType::kInt8 ? -128.0 : 0.0;
    const double hi = y->dtype() == DType::kInt8 ? 127.0 : 255.0;
    if (x.dtype() == DType::kFloat32 && y->dtype() == DType::kInt8 && scale.numel() == 1 && (!zp || zp->numel() == 1)) {
        // One scale (the converter's precision boundaries): the same arithmetic without per-element lookups.
        const double s = element_as_double(scale, 0);
        const double z = zp ? element_as_double(*zp, 0) : 0.0;
        const float* in = x.data<float>();
        int8_t* out = y->data<int8_t>();
        if (s > 0) {  // the same codes, vectorised; fmax makes a NaN the low bound
            quantize_int8(in, x.numel(), s, z, out, static_cast<int8_t>(lo));
            return Status::ok();
        }
        for (int64_t i = 0; i < x.numel(); ++i)
            out[i] = static_cast<int8_t>(quantize_value(in[i], s, z, lo, hi));
        return Status::ok();
    }
    for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t c = p.index_of(i);
        const double s = element_as_double(scale, c);
        const double z = zp ? element_as_double(*zp, c) : 0.0;
        const double q = quantize_value(element_as_double(x, i), s, z, lo, hi);
        if (y->dtype() == DType::kInt8) y->data<int8_t>()[i] = static_cast<int8_t>(q);
        else y->data<uint8_t>()[i] = static_cast<uint8_t>(q);
    }
    return Status::ok();
}

Status dequantize_linear(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    const HostTensor& scale = *args.inputs[1];
    const HostTensor* zp = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    RKNN_ASSIGN_OR_RETURN(const AxisParam p, axis_param(args, scale));
    float* y = args.outputs[0]->data<float>();
    if (x.dtype() == DType::kInt8 && scale.numel() == 1 && (!zp || zp->numel() == 1)) {
        // One scale: int8 has 256 codes, so a table gives every value.
        const double s = element_as_double(scale, 0);
        const double z = zp ? element_as_double(*zp, 0) : 0.0;
        float table[256];
        for (int code = -128; code < 128; ++code) table[code + 128] = dequantize_value(code, s, z);
        const int8_t* in = x.data<int8_t>();
        // Large tensors (a model's input image) over the host's threads.
        const int64_t n = x.numel();
        parallel_for(n, n >= (int64_t{1} << 16) ? (int64_t{1} << 15) : std::max<int64_t>(n, 1), [&](int64_t i0, int64_t i1) {
            for (int64_t i = i0; i < i1; ++i) y[i] = table[in[i] + 128];
        });
        return Status::ok();
    }
    for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t c = p.index_of(i);
        const double z = zp ? element_as_double(*zp, c) : 0.0;
        y[i] = dequantize_value(element_as_double(x, i), element_as_double(scale, c), z);
    }
    return Status::ok();
}

Status constant(const KernelArgs&) {
    return Status(StatusCode::kFailedPrecondition, "Constant ops become constant tensors when a model is converted");
}

}  // namespace rknn::cpu::kernels
