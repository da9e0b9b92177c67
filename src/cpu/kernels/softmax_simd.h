// Softmax of contiguous rows with Highway's vector exp (float32) in place of
// libm's double exp, which took most of the time of PP-OCRv4 rec's last
// layer (40 rows of 6625 classes). The sum stays in double and each result
// is one rounding of exp / sum. Each value is within kSoftmaxSimdTolerance of
// the reference form's (double exp and division, normalization.cc):
//   |simd - reference| <= kSoftmaxSimdTolerance * |reference| + FLT_MIN
// (tests/cpu/softmax_simd_test.cc). Rows with a NaN or an infinity are left
// to the reference form.
#pragma once

#include <cstdint>

namespace rknn::cpu::kernels {

constexpr float kSoftmaxSimdTolerance = 1.0f / (1 << 20);

// dst = softmax(src) over one row of n values; false, writing nothing, when
// the row holds a NaN or an infinity (or n < 1).
bool softmax_row_simd(const float* src, float* dst, int64_t n);

// The SIMD target it runs on now, as Highway names it.
const char* softmax_simd_target();

}  // namespace rknn::cpu::kernels
