// Element-wise unary kernels: math functions and activations.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/convert.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "cpu/kernels/scalar_math.h"

namespace rknn::cpu::kernels {
namespace {

using graph::OpType;

template <typename F>
Status float_map(const KernelArgs& args, F f) {
    const HostTensor& in = *args.inputs[0];
    RKNN_RETURN_IF_ERROR(require(in.dtype() == DType::kFloat32, "this op works on float32"));
    const float* src = in.data<float>();
    float* dst = args.outputs[0]->data<float>();
    for (int64_t i = 0; i < in.numel(); ++i) dst[i] = f(src[i]);
    return Status::ok();
}

template <typename F>
Status numeric_map(const KernelArgs& args, F f) {
    const HostTensor& in = *args.inputs[0];
    return visit_numeric(in.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* src = in.data<T>();
        T* dst = args.outputs[0]->template data<T>();
        for (int64_t i = 0; i < in.numel(); ++i) dst[i] = f(src[i]);
        return Status::ok();
    });
}

// A scalar bound given as an optional input (Clip-11+) or attribute (Clip-6).
StatusOr<double> clip_bound(const KernelArgs& args, size_t index, const char* attr, double fallback) {
    if (index < args.inputs.size() && args.inputs[index] != nullptr) {
        const HostTensor& t = *args.inputs[index];
        if (t.numel() != 1) return Status(StatusCode::kInvalidArgument, "Clip bounds must be scalars");
        return element_as_double(t, 0);
    }
    return static_cast<double>(args.op.attrs.get_float(attr, static_cast<float>(fallback)));
}

}  // namespace

Status unary_math(const KernelArgs& args) {
    switch (args.op.type) {
    case OpType::kSqrt: return float_map(args, [](float x) { return std::sqrt(x); });
    case OpType::kReciprocal: return float_map(args, [](float x) { return 1.0f / x; });
    case OpType::kExp: return float_map(args, [](float x) { return std::exp(x); });
    case OpType::kLog: return float_map(args, [](float x) { return std::log(x); });
    case OpType::kErf: return float_map(args, [](float x) { return std::erf(x); });
    case OpType::kFloor: return float_map(args, [](float x) { return std::floor(x); });
    case OpType::kCeil: return float_map(args, [](float x) { return std::ceil(x); });
    default: return Status(StatusCode::kInternal, "unary_math called for another op");
    }
}

Status activation(const KernelArgs& args) {
    const Activation act = activation_from_attrs(args.op.type, args.op.attrs);
    const HostTensor& in = *args.inputs[0];
    RKNN_RETURN_IF_ERROR(require(in.dtype() == DType::kFloat32, "this op works on float32"));
    // The span form, as a fused activation runs: the same floats either way.
    float* out = args.outputs[0]->data<float>();
    if (out != in.data<float>()) std::memcpy(out, in.data<float>(), in.byte_size());
    apply_activation(act, out, in.numel());
    return Status::ok();
}

Status abs(const KernelArgs& args) {
    return numeric_map(args, [](auto x) -> decltype(x) {
        using T = decltype(x);
        if constexpr (std::is_unsigned_v<T>) return x;
        else if constexpr (std::is_floating_point_v<T>) return std::fabs(x);
        else return x == std::numeric_limits<T>::min() ? x : static_cast<T>(x < 0 ? -x : x);
    });
}

Status neg(const KernelArgs& args) {
    return numeric_map(args, [](auto x) -> decltype(x) {
        using T = decltype(x);
        if constexpr (std::is_integral_v<T>) {
            using U = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;
            return static_cast<T>(U(0) - static_cast<U>(x));
        } else {
            return -x;
        }
    });
}

Status relu(const KernelArgs& args) {
    return numeric_map(args, [](auto x) -> decltype(x) { return x > decltype(x)(0) ? x : decltype(x)(0); });
}

Status clip(const KernelArgs& args) {
    const DType dtype = args.inputs[0]->dtype();
    const bool is_float = graph::is_float(dtype);
    const double lowest = is_float ? -std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::max();
    const double highest = is_float ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::max();
    RKNN_ASSIGN_OR_RETURN(const double lo, clip_bound(args, 1, "min", lowest));
    RKNN_ASSIGN_OR_RETURN(const double hi, clip_bound(args, 2, "max", highest));
    return numeric_map(args, [lo, hi](auto x) -> decltype(x) {
        using T = decltype(x);
        const double v = static_cast<double>(x);
        if (v < lo) return static_cast<T>(lo);
        if (v > hi) return static_cast<T>(hi);
        return x;
    });
}

Status identity(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    std::memcpy(args.outputs[0]->raw(), in.raw(), in.byte_size());
    // Dropout's optional mask: inference keeps every element.
    if (args.outputs.size() > 1) std::memset(args.outputs[1]->raw(), 1, args.outputs[1]->byte_size());
    return Status::ok();
}

}  // namespace rknn::cpu::kernels
