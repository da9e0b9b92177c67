// The AVX2 path of gemm_u8s8 (compiled with -mavx2; chosen at run time).
// AVX2 has no 8-bit dot product that cannot saturate, so inputs and weights
// are widened to int16 and multiplied in pairs with vpmaddwd, exactly.
// Register tile: 6 rows x 16 columns (12 accumulators).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "emulator/kernels/gemm_s8.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kCb = PackedWeightsS8::kColumnBlock;
constexpr int kMaxRows = 6;

template <int kRows>
void tile(const int16_t* a, size_t lda16, const int16_t* b, int pairs, int32_t* c, size_t ldc, int cols) {
    __m256i acc[kRows][2];
    for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int p = 0; p < pairs; ++p) {
        const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + static_cast<size_t>(p) * 2 * kCb));
        const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + static_cast<size_t>(p) * 2 * kCb + kCb));
        for (int r = 0; r < kRows; ++r) {
            int32_t pair;
            std::memcpy(&pair, a + static_cast<size_t>(r) * lda16 + 2 * static_cast<size_t>(p), 4);
            const __m256i x = _mm256_set1_epi32(pair);
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, w0));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, w1));
        }
    }
    for (int r = 0; r < kRows; ++r) {
        int32_t* out = c + static_cast<size_t>(r) * ldc;
        if (cols == kCb) {
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), acc[r][0]);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), acc[r][1]);
        } else {
            alignas(32) int32_t tmp[kCb];
            _mm256_store_si256(reinterpret_cast<__m256i*>(tmp), acc[r][0]);
            _mm256_store_si256(reinterpret_cast<__m256i*>(tmp + 8), acc[r][1]);
            std::memcpy(out, tmp, sizeof(int32_t) * static_cast<size_t>(cols));
        }
    }
}

template <int kRows>
void run_rows(const int16_t* a, size_t lda16, const PackedWeightsS8& b, int32_t* c, size_t ldc) {
    const int pairs = b.k_padded / 2;
    for (int blk = 0; blk * kCb < b.n; ++blk) {
        const int16_t* bb = b.data16.data() + static_cast<size_t>(blk) * pairs * 2 * kCb;
        tile<kRows>(a, lda16, bb, pairs, c + static_cast<size_t>(blk) * kCb, ldc, std::min(kCb, b.n - blk * kCb));
    }
}

}  // namespace

void gemm_u8s8_avx2(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int32_t* c, size_t ldc) {
    // Rows are widened (and un-biased) a tile at a time: they stay in L1.
    thread_local std::vector<int16_t> rows;
    const size_t k = static_cast<size_t>(b.k_padded);
    rows.resize(kMaxRows * k);
    for (int row = 0; row < m; row += kMaxRows) {
        const int n_rows = std::min(kMaxRows, m - row);
        for (int r = 0; r < n_rows; ++r) {
            const uint8_t* src = a + static_cast<size_t>(row + r) * lda;
            int16_t* dst = rows.data() + static_cast<size_t>(r) * k;
            for (size_t i = 0; i < k; ++i) dst[i] = static_cast<int16_t>(src[i] - 128);
        }
        int32_t* cr = c + static_cast<size_t>(row) * ldc;
        switch (n_rows) {
        case 6: run_rows<6>(rows.data(), k, b, cr, ldc); break;
        case 5: run_rows<5>(rows.data(), k, b, cr, ldc); break;
        case 4: run_rows<4>(rows.data(), k, b, cr, ldc); break;
        case 3: run_rows<3>(rows.data(), k, b, cr, ldc); break;
        case 2: run_rows<2>(rows.data(), k, b, cr, ldc); break;
        default: run_rows<1>(rows.data(), k, b, cr, ldc); break;
        }
    }
}

}  // namespace rknn::emulator::detail
