// Vector forms of the float activations (Highway), compiled for every SIMD
// target the host might have and chosen at run time.
//
// The clamp-like activations (Relu, Clip, LeakyRelu, HardSigmoid, HardSwish)
// and the post affine give exactly the scalar form's floats. The ones built
// on exp/tanh/log1p (Sigmoid, SiLU, Tanh, Elu, Selu, Softplus, Gelu's tanh
// form) use Highway's vector math instead of libm: each value is within
// kActivationSimdTolerance of the scalar form's (tests/cpu/activation_simd_test).
#pragma once

#include <cstdint>

#include "cpu/kernels/scalar_math.h"

namespace rknn::cpu::kernels {

// |simd - scalar| <= kActivationSimdTolerance * max(1, |x|, |scalar|), where
// x is the input value: a few float ulps, absolute near zero (where exp(x) - 1
// and 1 + tanh(x) cancel).
constexpr float kActivationSimdTolerance = 1.0f / (1 << 20);

// Applies `act` (and its post affine) to n values in place. Returns false,
// touching nothing, when `act` has no vector form (Gelu with erf, a Clip
// bound that is NaN, a per-channel slope): the caller uses the scalar form.
bool activation_span_simd(const Activation& act, float* values, int64_t n);

// The SIMD target the vector forms run on now, as Highway names it ("AVX2",
// "NEON", ...).
const char* activation_simd_target();

}  // namespace rknn::cpu::kernels
