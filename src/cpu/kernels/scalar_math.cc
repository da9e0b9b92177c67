#include "cpu/kernels/scalar_math.h"

#include <algorithm>
#include <cmath>

#include "base/parallel.h"
#include "cpu/kernels/activation_simd.h"

namespace rknn::cpu::kernels {

using graph::OpType;

bool is_activation(OpType type) {
    switch (type) {
    case OpType::kRelu:
    case OpType::kClip:
    case OpType::kLeakyRelu:
    case OpType::kSigmoid:
    case OpType::kHardSigmoid:
    case OpType::kHardSwish:
    case OpType::kTanh:
    case OpType::kElu:
    case OpType::kSelu:
    case OpType::kSoftplus:
    case OpType::kGelu:
    case OpType::kSilu:
    case OpType::kIdentity: return true;
    default: return false;
    }
}

Activation activation_from_attrs(OpType type, const graph::Attributes& attrs) {
    Activation act;
    act.type = type;
    switch (type) {
    case OpType::kLeakyRelu: act.alpha = attrs.get_float("alpha", 0.01f); break;
    case OpType::kHardSigmoid:
        act.alpha = attrs.get_float("alpha", 0.2f);
        act.beta = attrs.get_float("beta", 0.5f);
        break;
    case OpType::kElu: act.alpha = attrs.get_float("alpha", 1.0f); break;
    case OpType::kSelu:
        act.alpha = attrs.get_float("alpha", 1.67326319217681884765625f);
        act.gamma = attrs.get_float("gamma", 1.05070102214813232421875f);
        break;
    case OpType::kGelu: act.tanh_approximation = attrs.get_string("approximate", "none") == "tanh"; break;
    case OpType::kClip:
        // The converter stores Clip bounds as attributes (opset 6 form) once constant.
        act.min = attrs.get_float("min", -INFINITY);
        act.max = attrs.get_float("max", INFINITY);
        break;
    default: break;
    }
    act.post_scale = attrs.get_float("post_scale", 1.0f);
    act.post_bias = attrs.get_float("post_bias", 0.0f);
    return act;
}

namespace {

// fmax(x, lo) and fmin(x, hi) for a bound that is not NaN, written as the
// comparisons vector units have: a NaN x gives the bound, as fmax/fmin do.
inline float max_with(float x, float lo) { return x > lo ? x : lo; }
inline float min_with(float x, float hi) { return x < hi ? x : hi; }

// The clamp-like activations (activation_simd.cc has their vector forms,
// which round alike).
inline float relu_of(float x) { return x > 0.0f ? x : 0.0f; }
// fmax/fmin order -0 below +0 on aarch64 (fmaxnm) and not on x86, so bounds
// that are numbers take the comparisons, which give the same zero everywhere.
inline float clip_of(const Activation& act, float x) {
    if (std::isnan(act.min) || std::isnan(act.max)) return std::fmin(std::fmax(x, act.min), act.max);
    return min_with(max_with(x, act.min), act.max);
}
inline float leaky_relu_of(const Activation& act, float x) { return x >= 0.0f ? x : act.alpha * x; }
inline float hard_sigmoid_of(const Activation& act, float x) {
    return max_with(min_with(act.alpha * x + act.beta, 1.0f), 0.0f);
}
inline float hard_swish_of(float x) { return x * max_with(min_with(x / 6.0f + 0.5f, 1.0f), 0.0f); }

float activation_core(const Activation& act, float x) {
    switch (act.type) {
    case OpType::kRelu: return relu_of(x);
    case OpType::kClip: return clip_of(act, x);
    case OpType::kLeakyRelu: return leaky_relu_of(act, x);
    case OpType::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case OpType::kHardSigmoid: return hard_sigmoid_of(act, x);
    case OpType::kHardSwish: return hard_swish_of(x);
    case OpType::kTanh: return std::tanh(x);
    case OpType::kElu: return x >= 0.0f ? x : act.alpha * (std::exp(x) - 1.0f);
    case OpType::kSelu: return act.gamma * (x > 0.0f ? x : act.alpha * (std::exp(x) - 1.0f));
    case OpType::kSoftplus: return x > 20.0f ? x : std::log1p(std::exp(x));
    case OpType::kGelu:
        if (act.tanh_approximation) {
            const float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
            return 0.5f * x * (1.0f + std::tanh(inner));
        }
        return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
    case OpType::kSilu: return x / (1.0f + std::exp(-x));
    default: return x;
    }
}

float post_affine(const Activation& act, float y) { return act.has_post_affine() ? act.post_scale * y + act.post_bias : y; }

}  // namespace

float apply_activation(const Activation& act, float x) { return post_affine(act, activation_core(act, x)); }

namespace {

// The vector forms where Highway has one, else the scalar form per value.
void activation_run(const Activation& act, float* v, int64_t n) {
    if (activation_span_simd(act, v, n)) return;
    for (int64_t i = 0; i < n; ++i) v[i] = apply_activation(act, v[i]);
}

}  // namespace

void apply_activation(const Activation& act, float* values, int64_t n) {
    constexpr int64_t kChunk = 16384;
    parallel_for(n, n >= 4 * kChunk ? kChunk : std::max<int64_t>(n, 1), [&](int64_t i0, int64_t i1) {
        activation_run(act, values + i0, i1 - i0);
    });
}

}  // namespace rknn::cpu::kernels
