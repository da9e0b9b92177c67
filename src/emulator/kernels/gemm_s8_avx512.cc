// The AVX-512 VNNI path of gemm_u8s8 (compiled with those ISA flags; chosen
// at run time only on CPUs that have them). Register tile: 8 rows x 32
// columns, 16 accumulators; one vpdpbusd per row and column block per 4 k.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "emulator/kernels/gemm_s8.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kCb = PackedWeightsS8::kColumnBlock;
constexpr int kDg = PackedWeightsS8::kDepthGroup;

template <int kRows>
void tile(const uint8_t* a, size_t lda, const int8_t* b0, const int8_t* b1, int groups, __m512i* acc) {
    for (int r = 0; r < 2 * kRows; ++r) acc[r] = _mm512_setzero_si512();
    for (int g = 0; g < groups; ++g) {
        const __m512i w0 = _mm512_loadu_si512(b0 + static_cast<size_t>(g) * kCb * kDg);
        const __m512i w1 = _mm512_loadu_si512(b1 + static_cast<size_t>(g) * kCb * kDg);
        for (int r = 0; r < kRows; ++r) {
            int32_t a4;
            std::memcpy(&a4, a + static_cast<size_t>(r) * lda + static_cast<size_t>(g) * kDg, 4);
            const __m512i x = _mm512_set1_epi32(a4);
            acc[2 * r] = _mm512_dpbusd_epi32(acc[2 * r], x, w0);
            acc[2 * r + 1] = _mm512_dpbusd_epi32(acc[2 * r + 1], x, w1);
        }
    }
}

template <int kRows>
void run_rows(const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block, int last_block, int32_t* c,
              size_t ldc) {
    const int groups = b.k_padded / kDg;
    const size_t block_bytes = static_cast<size_t>(groups) * kCb * kDg;
    for (int blk = first_block; blk < last_block; blk += 2) {
        const int8_t* b0 = b.data.data() + static_cast<size_t>(blk) * block_bytes;
        __m512i acc[2 * kRows];
        tile<kRows>(a, lda, b0, b0 + block_bytes, groups, acc);
        const int col0 = blk * kCb;
        const __m512i bias0 = _mm512_loadu_si512(b.column_bias.data() + col0);
        const __m512i bias1 = _mm512_loadu_si512(b.column_bias.data() + col0 + kCb);
        const int cols = std::min(2 * kCb, b.n - col0);
        const __mmask16 m0 = cols >= kCb ? 0xffff : static_cast<__mmask16>((1u << cols) - 1);
        const __mmask16 m1 = cols <= kCb ? 0 : (cols >= 2 * kCb ? 0xffff : static_cast<__mmask16>((1u << (cols - kCb)) - 1));
        for (int r = 0; r < kRows; ++r) {
            int32_t* out = c + static_cast<size_t>(r) * ldc + col0;
            _mm512_mask_storeu_epi32(out, m0, _mm512_sub_epi32(acc[2 * r], bias0));
            if (m1) _mm512_mask_storeu_epi32(out + kCb, m1, _mm512_sub_epi32(acc[2 * r + 1], bias1));
        }
    }
}

}  // namespace

void gemm_u8s8_avx512vnni(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block,
                          int last_block, int32_t* c, size_t ldc) {
    int row = 0;
    for (; row + 8 <= m; row += 8) run_rows<8>(a + row * lda, lda, b, first_block, last_block, c + row * ldc, ldc);
    const uint8_t* ar = a + row * lda;
    int32_t* cr = c + row * ldc;
    switch (m - row) {
    case 7: run_rows<7>(ar, lda, b, first_block, last_block, cr, ldc); break;
    case 6: run_rows<6>(ar, lda, b, first_block, last_block, cr, ldc); break;
    case 5: run_rows<5>(ar, lda, b, first_block, last_block, cr, ldc); break;
    case 4: run_rows<4>(ar, lda, b, first_block, last_block, cr, ldc); break;
    case 3: run_rows<3>(ar, lda, b, first_block, last_block, cr, ldc); break;
    case 2: run_rows<2>(ar, lda, b, first_block, last_block, cr, ldc); break;
    case 1: run_rows<1>(ar, lda, b, first_block, last_block, cr, ldc); break;
    default: break;
    }
}

}  // namespace rknn::emulator::detail
