// Highway re-includes this file once per SIMD target (foreach_target.h); the
// part under HWY_ONCE is compiled once and dispatches to the best target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/kernels/activation_simd.cc"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>

#include "cpu/kernels/activation_simd.h"

HWY_BEFORE_NAMESPACE();
namespace rknn::cpu::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using graph::OpType;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// Runs f over whole vectors, then over the tail through a padded copy
// (zeros in the unused lanes, which every f below accepts).
template <class F>
HWY_INLINE void map_in_place(float* values, int64_t n, const F& f) {
    const D d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) hn::StoreU(f(hn::LoadU(d, values + i)), d, values + i);
    if (i == n) return;
    HWY_ALIGN float tail[hn::MaxLanes(d)] = {};
    const size_t rest = static_cast<size_t>(n - i);
    std::memcpy(tail, values + i, rest * sizeof(float));
    hn::Store(f(hn::Load(d, tail)), d, tail);
    std::memcpy(values + i, tail, rest * sizeof(float));
}

// map_in_place with f followed by the activation's post affine
// (post_scale * y + post_bias, multiply then add), in the same pass.
template <class F>
HWY_INLINE void map_activation(const Activation& act, float* values, int64_t n, const F& f) {
    if (!act.has_post_affine()) return map_in_place(values, n, f);
    const D d;
    const V scale = hn::Set(d, act.post_scale), bias = hn::Set(d, act.post_bias);
    map_in_place(values, n, [&](V x) { return hn::Add(hn::Mul(scale, f(x)), bias); });
}

// The scalar forms' comparisons, lane by lane: x > bound ? x : bound (a NaN x
// gives the bound, as in scalar_math.cc), and x < bound ? x : bound.
HWY_INLINE V max_with(V x, V bound) { return hn::IfThenElse(hn::Gt(x, bound), x, bound); }
HWY_INLINE V min_with(V x, V bound) { return hn::IfThenElse(hn::Lt(x, bound), x, bound); }

// exp(x) for any x: Highway's Exp is defined on [-FLT_MAX, +104]; above that
// the float result is +inf anyway, and -inf goes in as -FLT_MAX (whose exp is
// 0 as well; taken as it is, -inf would turn into a NaN inside Exp and meet a
// float-to-int conversion). NaN lanes are restored by the caller.
HWY_INLINE V exp_any(D d, V x) {
    return hn::Exp(d, max_with(min_with(x, hn::Set(d, 104.0f)), hn::Set(d, std::numeric_limits<float>::lowest())));
}

// tanh(x) for any x: Highway's Tanh is defined on finite floats; the
// infinities go in as +-FLT_MAX (tanh is +-1 there too) and NaNs as
// -FLT_MAX, which the callers' keep_nan replaces. (Inside Tanh a NaN or an
// infinity would reach a float-to-int conversion.)
HWY_INLINE V tanh_any(D d, V x) {
    const V finite = min_with(max_with(x, hn::Set(d, std::numeric_limits<float>::lowest())),
                              hn::Set(d, std::numeric_limits<float>::max()));
    return hn::Tanh(d, finite);
}

// The transcendental forms give a NaN input back as NaN, as libm does.
HWY_INLINE V keep_nan(V x, V y) { return hn::IfThenElse(hn::IsNaN(x), x, y); }

// One activation over a span; false when it has no vector form here.
bool ActivationSpan(const Activation& act, float* v, int64_t n) {
    const D d;
    const V zero = hn::Zero(d);
    const V one = hn::Set(d, 1.0f);
    switch (act.type) {
    case OpType::kIdentity:
        if (act.has_post_affine()) map_activation(act, v, n, [](V x) { return x; });
        return true;
    case OpType::kRelu: map_activation(act, v, n, [&](V x) { return hn::IfThenElseZero(hn::Gt(x, zero), x); }); return true;
    case OpType::kClip: {
        if (std::isnan(act.min) || std::isnan(act.max)) return false;  // fmin/fmax semantics: scalar
        const V lo = hn::Set(d, act.min), hi = hn::Set(d, act.max);
        map_activation(act, v, n, [&](V x) { return min_with(max_with(x, lo), hi); });
        return true;
    }
    case OpType::kLeakyRelu: {
        const V alpha = hn::Set(d, act.alpha);
        map_activation(act, v, n, [&](V x) { return hn::IfThenElse(hn::Ge(x, zero), x, hn::Mul(alpha, x)); });
        return true;
    }
    case OpType::kHardSigmoid: {
        const V alpha = hn::Set(d, act.alpha), beta = hn::Set(d, act.beta);
        // Multiply, then add (no fused multiply-add): the scalar form's rounding.
        map_activation(act, v, n, [&](V x) { return max_with(min_with(hn::Add(hn::Mul(alpha, x), beta), one), zero); });
        return true;
    }
    case OpType::kHardSwish: {
        const V six = hn::Set(d, 6.0f), half = hn::Set(d, 0.5f);
        map_activation(act, v, n, [&](V x) {
            return hn::Mul(x, max_with(min_with(hn::Add(hn::Div(x, six), half), one), zero));
        });
        return true;
    }
    case OpType::kSigmoid:
        map_activation(act, v, n, [&](V x) { return keep_nan(x, hn::Div(one, hn::Add(one, exp_any(d, hn::Neg(x))))); });
        return true;
    case OpType::kSilu:
        map_activation(act, v, n, [&](V x) { return keep_nan(x, hn::Div(x, hn::Add(one, exp_any(d, hn::Neg(x))))); });
        return true;
    case OpType::kTanh: map_activation(act, v, n, [&](V x) { return keep_nan(x, tanh_any(d, x)); }); return true;
    case OpType::kElu:
    case OpType::kSelu: {
        const V alpha = hn::Set(d, act.alpha);
        const bool selu = act.type == OpType::kSelu;
        const V gamma = hn::Set(d, act.gamma);
        map_activation(act, v, n, [&](V x) {
            // As the scalar forms: Elu keeps x >= 0 (so -0 stays -0), Selu x > 0.
            const V negative = hn::Mul(alpha, hn::Sub(exp_any(d, x), one));
            const auto keep = selu ? hn::Gt(x, zero) : hn::Ge(x, zero);
            const V y = hn::IfThenElse(keep, x, negative);
            return keep_nan(x, selu ? hn::Mul(gamma, y) : y);
        });
        return true;
    }
    case OpType::kSoftplus: {
        const V twenty = hn::Set(d, 20.0f);
        map_activation(act, v, n, [&](V x) {
            const V soft = hn::Log1p(d, exp_any(d, min_with(x, twenty)));
            return keep_nan(x, hn::IfThenElse(hn::Gt(x, twenty), x, soft));
        });
        return true;
    }
    case OpType::kGelu: {
        if (!act.tanh_approximation) return false;  // erf: Highway has no vector form
        const V k0 = hn::Set(d, 0.7978845608028654f), k1 = hn::Set(d, 0.044715f), half = hn::Set(d, 0.5f);
        map_activation(act, v, n, [&](V x) {
            const V inner = hn::Mul(k0, hn::Add(x, hn::Mul(hn::Mul(hn::Mul(k1, x), x), x)));
            return keep_nan(x, hn::Mul(hn::Mul(half, x), hn::Add(one, tanh_any(d, inner))));
        });
        return true;
    }
    default: return false;
    }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace rknn::cpu::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rknn::cpu::kernels {

HWY_EXPORT(ActivationSpan);
HWY_EXPORT(TargetName);

const char* activation_simd_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

bool activation_span_simd(const Activation& act, float* values, int64_t n) {
    if (n <= 0) return true;
    return HWY_DYNAMIC_DISPATCH(ActivationSpan)(act, values, n);
}

}  // namespace rknn::cpu::kernels
#endif  // HWY_ONCE
