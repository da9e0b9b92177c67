#include "cpu/kernels/sgemm.h"

#include <algorithm>
#include <cstring>

namespace rknn::cpu::kernels {
namespace {

constexpr int64_t kBlockK = 256;
constexpr int64_t kBlockN = 512;

}  // namespace

void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
           int64_t ldc, bool accumulate) {
    if (!accumulate) {
        for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, sizeof(float) * static_cast<size_t>(n));
    }
    // Panels of B stay in cache while every row of A streams over them.
    for (int64_t n0 = 0; n0 < n; n0 += kBlockN) {
        const int64_t n1 = std::min(n, n0 + kBlockN);
        for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
            const int64_t k1 = std::min(k, k0 + kBlockK);
            for (int64_t i = 0; i < m; ++i) {
                float* __restrict crow = c + i * ldc;
                const float* arow = a + i * lda;
                for (int64_t p = k0; p < k1; ++p) {
                    const float av = arow[p];
                    const float* __restrict brow = b + p * ldb;
                    for (int64_t j = n0; j < n1; ++j) crow[j] += av * brow[j];
                }
            }
        }
    }
}

}  // namespace rknn::cpu::kernels
