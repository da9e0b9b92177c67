// Single-precision matrix multiply for the float reference kernels:
// C[M,N] (+)= A[M,K] * B[K,N], row-major with leading dimensions. Blocked so
// that the compiler vectorises the inner loop; exactness here means IEEE
// float arithmetic, not a fixed summation order.
#pragma once

#include <cstdint>

namespace rknn::cpu::kernels {

void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
           int64_t ldc, bool accumulate);

}  // namespace rknn::cpu::kernels
