// Broadcasting element-wise kernels: arithmetic, comparisons, Where, PRelu.
#include <cmath>
#include <limits>
#include <type_traits>

#include "cpu/convert.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"

namespace rknn::cpu::kernels {
namespace {

template <typename T, typename R, typename F>
void binary_loop(const HostTensor& a, const HostTensor& b, HostTensor* out, F f) {
    const std::vector<std::vector<int64_t>> strides = {broadcast_strides(a.shape(), out->shape()),
                                                       broadcast_strides(b.shape(), out->shape())};
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    R* po = out->data<R>();
    for_each_broadcast(out->shape(), strides, [&](int64_t i, int64_t oa, int64_t ob, int64_t) { po[i] = f(pa[oa], pb[ob]); });
}

// Integer division that cannot trap: x/0 and MIN/-1 give 0 and MIN.
template <typename T>
T safe_divide(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        if (b == 0) return 0;
        if constexpr (std::is_signed_v<T>) {
            if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
        }
        return static_cast<T>(a / b);
    } else {
        return a / b;
    }
}

// Wrapping arithmetic for integers (two's complement, computed in a wide
// unsigned type so that no promotion to int can overflow), plain for floats.
template <typename T, typename F>
T wrap(T a, T b, F f) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;
        return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
    } else {
        return static_cast<T>(f(a, b));
    }
}

template <typename T>
T max_of(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return a > b ? a : b;
}

template <typename T>
T min_of(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return a < b ? a : b;
}

enum class Arith { kAdd, kSub, kMul, kDiv, kMax, kMin };

template <typename T>
T apply(Arith op, T a, T b) {
    switch (op) {
    case Arith::kAdd: return wrap(a, b, [](auto x, auto y) { return x + y; });
    case Arith::kSub: return wrap(a, b, [](auto x, auto y) { return x - y; });
    case Arith::kMul: return wrap(a, b, [](auto x, auto y) { return x * y; });
    case Arith::kDiv: return safe_divide(a, b);
    case Arith::kMax: return max_of(a, b);
    case Arith::kMin: return min_of(a, b);
    }
    return a;
}

Status arithmetic(const KernelArgs& args, Arith op) {
    const HostTensor& a = *args.inputs[0];
    const HostTensor& b = *args.inputs[1];
    RKNN_RETURN_IF_ERROR(require(a.dtype() == b.dtype(), "both operands must have the same type"));
    return visit_numeric(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        binary_loop<T, T>(a, b, args.outputs[0], [op](T x, T y) { return apply(op, x, y); });
        return Status::ok();
    });
}

// Max, Min, Sum, Mean over any number of broadcast inputs.
Status variadic(const KernelArgs& args, Arith op, bool mean) {
    HostTensor* out = args.outputs[0];
    const DType dtype = args.inputs[0]->dtype();
    for (const HostTensor* in : args.inputs) {
        RKNN_RETURN_IF_ERROR(require(in != nullptr && in->dtype() == dtype, "all inputs must have the same type"));
    }
    return visit_numeric(dtype, [&](auto tag) {
        using T = decltype(tag);
        T* po = out->data<T>();
        // Start from input 0 broadcast to the output shape, then fold the rest in.
        const std::vector<std::vector<int64_t>> first = {broadcast_strides(args.inputs[0]->shape(), out->shape())};
        const T* p0 = args.inputs[0]->data<T>();
        for_each_broadcast(out->shape(), first, [&](int64_t i, int64_t o, int64_t, int64_t) { po[i] = p0[o]; });
        for (size_t k = 1; k < args.inputs.size(); ++k) {
            const std::vector<std::vector<int64_t>> s = {broadcast_strides(args.inputs[k]->shape(), out->shape())};
            const T* pk = args.inputs[k]->data<T>();
            for_each_broadcast(out->shape(), s,
                               [&](int64_t i, int64_t o, int64_t, int64_t) { po[i] = apply(op, po[i], pk[o]); });
        }
        if (mean) {
            const int64_t n = static_cast<int64_t>(args.inputs.size());
            for (int64_t i = 0; i < out->numel(); ++i) po[i] = static_cast<T>(po[i] / static_cast<T>(n));
        }
        return Status::ok();
    });
}

enum class Compare { kEqual, kGreater, kLess };

Status compare(const KernelArgs& args, Compare op) {
    const HostTensor& a = *args.inputs[0];
    const HostTensor& b = *args.inputs[1];
    RKNN_RETURN_IF_ERROR(require(a.dtype() == b.dtype(), "both operands must have the same type"));
    return visit_numeric_or_bool(a.dtype(), [&](auto tag) {
        using T = decltype(tag);
        binary_loop<T, uint8_t>(a, b, args.outputs[0], [op](T x, T y) -> uint8_t {
            switch (op) {
            case Compare::kEqual: return x == y;
            case Compare::kGreater: return x > y;
            case Compare::kLess: return x < y;
            }
            return 0;
        });
        return Status::ok();
    });
}

}  // namespace

Status add(const KernelArgs& args) { return arithmetic(args, Arith::kAdd); }
Status sub(const KernelArgs& args) { return arithmetic(args, Arith::kSub); }
Status mul(const KernelArgs& args) { return arithmetic(args, Arith::kMul); }
Status div(const KernelArgs& args) { return arithmetic(args, Arith::kDiv); }
Status max(const KernelArgs& args) { return variadic(args, Arith::kMax, false); }
Status min(const KernelArgs& args) { return variadic(args, Arith::kMin, false); }
Status sum(const KernelArgs& args) { return variadic(args, Arith::kAdd, false); }
Status mean(const KernelArgs& args) { return variadic(args, Arith::kAdd, true); }
Status equal(const KernelArgs& args) { return compare(args, Compare::kEqual); }
Status greater(const KernelArgs& args) { return compare(args, Compare::kGreater); }
Status less(const KernelArgs& args) { return compare(args, Compare::kLess); }

// The base keeps its type; the exponent may be any numeric type.
Status pow(const KernelArgs& args) {
    const HostTensor& base = *args.inputs[0];
    const HostTensor& exponent = *args.inputs[1];
    HostTensor* out = args.outputs[0];
    const std::vector<std::vector<int64_t>> strides = {broadcast_strides(base.shape(), out->shape()),
                                                       broadcast_strides(exponent.shape(), out->shape())};
    return visit_numeric(base.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* pb = base.data<T>();
        T* po = out->data<T>();
        for_each_broadcast(out->shape(), strides, [&](int64_t i, int64_t ob, int64_t oe, int64_t) {
            const double e = element_as_double(exponent, oe);
            if constexpr (std::is_same_v<T, float>) {
                po[i] = std::pow(pb[ob], static_cast<float>(e));
            } else {
                const double r = std::pow(static_cast<double>(pb[ob]), e);
                po[i] = std::is_integral_v<T> && !std::isfinite(r) ? T(0) : static_cast<T>(r);
            }
        });
        return Status::ok();
    });
}

Status where(const KernelArgs& args) {
    const HostTensor& cond = *args.inputs[0];
    const HostTensor& x = *args.inputs[1];
    const HostTensor& y = *args.inputs[2];
    HostTensor* out = args.outputs[0];
    RKNN_RETURN_IF_ERROR(require(cond.dtype() == DType::kBool, "condition must be bool"));
    RKNN_RETURN_IF_ERROR(require(x.dtype() == y.dtype(), "both branches must have the same type"));
    const std::vector<std::vector<int64_t>> strides = {broadcast_strides(cond.shape(), out->shape()),
                                                       broadcast_strides(x.shape(), out->shape()),
                                                       broadcast_strides(y.shape(), out->shape())};
    const size_t esize = graph::dtype_size(x.dtype());
    const auto* pc = cond.data<uint8_t>();
    const auto* px = static_cast<const uint8_t*>(x.raw());
    const auto* py = static_cast<const uint8_t*>(y.raw());
    auto* po = static_cast<uint8_t*>(out->raw());
    for_each_broadcast(out->shape(), strides, [&](int64_t i, int64_t oc, int64_t ox, int64_t oy) {
        const uint8_t* src = pc[oc] ? px + ox * esize : py + oy * esize;
        for (size_t b = 0; b < esize; ++b) po[i * esize + b] = src[b];
    });
    return Status::ok();
}

Status prelu(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    const HostTensor& slope = *args.inputs[1];
    RKNN_RETURN_IF_ERROR(require(x.dtype() == DType::kFloat32 && slope.dtype() == DType::kFloat32,
                                 "PRelu works on float32"));
    RKNN_RETURN_IF_ERROR(require(broadcasts_into(slope.shape(), x.shape()), "slope does not broadcast to the input"));
    binary_loop<float, float>(x, slope, args.outputs[0], [](float v, float s) { return v < 0.0f ? v * s : v; });
    return Status::ok();
}

}  // namespace rknn::cpu::kernels
