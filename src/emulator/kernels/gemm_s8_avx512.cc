// The AVX-512 VNNI path of the int8 GEMM (compiled with those ISA flags;
// chosen at run time only on CPUs that have them). A comes as row addresses
// and per-4-k offsets (gemm_s8.h), so convolutions read their windows from
// the input cube in place.
//
// Register tile: 8 rows x 32 columns, 16 accumulators (x 16 columns for a
// lone last block); one vpdpbusd per row and column block per 4 k, issued
// in place (dot_accumulate). Cache blocking: rows go in panels whose A bytes
// stay in L2; each pair of column blocks (k x 32 bytes of weights) is loaded
// once per panel and serves all of its row tiles, instead of streaming the
// whole weight matrix once per 8 rows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "emulator/kernels/gemm_s8.h"
#include "emulator/kernels/vnni_accumulate.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kCb = PackedWeightsS8::kColumnBlock;
constexpr int kDg = PackedWeightsS8::kDepthGroup;
constexpr int kTileRows = 8;
constexpr size_t kPanelBytes = size_t{192} << 10;  // A bytes per panel
constexpr int kMaxPanelRows = 512;

inline __mmask16 first_columns(int count) {
    return count >= kCb ? static_cast<__mmask16>(0xffff) : (count <= 0 ? 0 : static_cast<__mmask16>((1u << count) - 1));
}

// kBlocks (1 or 2) column blocks of kRows rows, stored less the column bias:
// one broadcast of each row's 4 k values feeds a vpdpbusd per block. The
// accumulators are locals of this one function (not an array handed in), so
// that they stay in registers through the k loop; kFlip makes int8 bytes
// the +128-biased form the instruction takes (an immediate, not a register).
template <int kRows, int kBlocks, bool kFlip>
void tile(const uint8_t* const* rows, const uint32_t* offsets, const int8_t* b0, size_t block_bytes, int groups,
          const int32_t* bias, int32_t* c, size_t ldc, int cols) {
    const uint8_t* row[kRows];
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) row[r] = rows[r];
    __m512i acc0[kRows], acc1[kRows];
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) acc0[r] = acc1[r] = _mm512_setzero_si512();
    const int8_t* b = b0;
#pragma GCC unroll 1
    for (int g = 0; g < groups; ++g, b += kCb * kDg) {
        const __m512i w0 = _mm512_loadu_si512(b);
        const __m512i w1 = kBlocks == 2 ? _mm512_loadu_si512(b + block_bytes) : w0;
        const uint32_t off = offsets[g];
#pragma GCC unroll 16
        for (int r = 0; r < kRows; ++r) {
            uint32_t a4;
            std::memcpy(&a4, row[r] + off, 4);
            const __m512i x = _mm512_set1_epi32(static_cast<int>(kFlip ? a4 ^ 0x80808080u : a4));
            dot_accumulate(acc0[r], x, w0);
            if (kBlocks == 2) dot_accumulate(acc1[r], x, w1);
        }
    }
    const __m512i bias0 = _mm512_loadu_si512(bias);
    if (kBlocks == 1) {
        const __mmask16 m0 = first_columns(cols);
#pragma GCC unroll 16
        for (int r = 0; r < kRows; ++r)
            _mm512_mask_storeu_epi32(c + static_cast<size_t>(r) * ldc, m0, _mm512_sub_epi32(acc0[r], bias0));
        return;
    }
    const __m512i bias1 = _mm512_loadu_si512(bias + kCb);
    if (cols == 2 * kCb) {  // whole blocks: plain stores (masked ones cost more on some cores)
#pragma GCC unroll 16
        for (int r = 0; r < kRows; ++r) {
            int32_t* out = c + static_cast<size_t>(r) * ldc;
            _mm512_storeu_si512(out, _mm512_sub_epi32(acc0[r], bias0));
            _mm512_storeu_si512(out + kCb, _mm512_sub_epi32(acc1[r], bias1));
        }
        return;
    }
    const __mmask16 m1 = first_columns(cols - kCb);
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
        int32_t* out = c + static_cast<size_t>(r) * ldc;
        _mm512_storeu_si512(out, _mm512_sub_epi32(acc0[r], bias0));
        _mm512_mask_storeu_epi32(out + kCb, m1, _mm512_sub_epi32(acc1[r], bias1));
    }
}

// The columns of blocks blk and blk + 1 (those that exist) for kRows rows.
// A pair whose second block holds no column takes the one-block tile.
template <int kRows, bool kFlip>
void pair_tile(const uint8_t* const* rows, const uint32_t* offsets, const PackedWeightsS8& b, int blk, int32_t* c,
               size_t ldc) {
    const int groups = b.k_padded / kDg;
    const size_t block_bytes = static_cast<size_t>(groups) * kCb * kDg;
    const int8_t* b0 = b.data.data() + static_cast<size_t>(blk) * block_bytes;
    const int col0 = blk * kCb;
    const int cols = std::min(2 * kCb, b.n - col0);
    const int32_t* bias = b.column_bias.data() + col0;
    if (cols <= kCb)
        tile<kRows, 1, kFlip>(rows, offsets, b0, block_bytes, groups, bias, c + col0, ldc, cols);
    else
        tile<kRows, 2, kFlip>(rows, offsets, b0, block_bytes, groups, bias, c + col0, ldc, cols);
}

template <bool kFlip>
void pair_rows(int rows_left, const uint8_t* const* rows, const uint32_t* offsets, const PackedWeightsS8& b, int blk,
               int32_t* c, size_t ldc) {
    switch (rows_left) {
    case 7: pair_tile<7, kFlip>(rows, offsets, b, blk, c, ldc); break;
    case 6: pair_tile<6, kFlip>(rows, offsets, b, blk, c, ldc); break;
    case 5: pair_tile<5, kFlip>(rows, offsets, b, blk, c, ldc); break;
    case 4: pair_tile<4, kFlip>(rows, offsets, b, blk, c, ldc); break;
    case 3: pair_tile<3, kFlip>(rows, offsets, b, blk, c, ldc); break;
    case 2: pair_tile<2, kFlip>(rows, offsets, b, blk, c, ldc); break;
    case 1: pair_tile<1, kFlip>(rows, offsets, b, blk, c, ldc); break;
    default: pair_tile<kTileRows, kFlip>(rows, offsets, b, blk, c, ldc); break;
    }
}

template <bool kFlip>
void rows_panels(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block, int last_block, int32_t* c,
                 size_t ldc) {
    const size_t k = static_cast<size_t>(std::max(b.k_padded, 1));
    const int panel = std::clamp(static_cast<int>(kPanelBytes / k) / kTileRows * kTileRows, kTileRows, kMaxPanelRows);
    for (int p0 = 0; p0 < m; p0 += panel) {
        const int p1 = std::min(m, p0 + panel);
        for (int blk = first_block; blk < last_block; blk += 2) {
            for (int r = p0; r < p1; r += kTileRows)
                pair_rows<kFlip>(std::min(kTileRows, p1 - r), a.rows + r, a.offsets, b, blk,
                                 c + static_cast<size_t>(r) * ldc, ldc);
        }
    }
}

}  // namespace

void gemm_u8s8_rows_avx512vnni(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block, int last_block,
                               int32_t* c, size_t ldc) {
    if (a.flip != 0)
        rows_panels<true>(m, a, b, first_block, last_block, c, ldc);
    else
        rows_panels<false>(m, a, b, first_block, last_block, c, ldc);
}

}  // namespace rknn::emulator::detail
