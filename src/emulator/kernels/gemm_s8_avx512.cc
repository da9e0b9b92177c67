// The AVX-512 VNNI path of the int8 GEMM (compiled with those ISA flags;
// chosen at run time only on CPUs that have them). A comes as row addresses
// and per-4-k offsets (gemm_s8.h), so convolutions read their windows from
// the input cube in place.
//
// Register tile: 8 rows x 32 columns, 16 accumulators (x 16 columns for a
// lone last block); one vpdpbusd per row and column block per 4 k. Cache blocking: rows go in panels whose A bytes
// stay in L2; each pair of column blocks (k x 32 bytes of weights) is loaded
// once per panel and serves all of its row tiles, instead of streaming the
// whole weight matrix once per 8 rows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "emulator/kernels/gemm_s8.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kCb = PackedWeightsS8::kColumnBlock;
constexpr int kDg = PackedWeightsS8::kDepthGroup;
constexpr int kTileRows = 8;
constexpr size_t kPanelBytes = size_t{192} << 10;  // A bytes per panel
constexpr int kMaxPanelRows = 512;

// kBlocks (1 or 2) column blocks of kRows rows: one broadcast of each row's
// 4 k values feeds a vpdpbusd per block.
template <int kRows, int kBlocks>
void tile(const uint8_t* const* rows, const uint32_t* offsets, uint32_t flip, const int8_t* b0, const int8_t* b1,
          int groups, __m512i* acc) {
    const uint8_t* row[kRows];
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) row[r] = rows[r];
#pragma GCC unroll 16
    for (int r = 0; r < kBlocks * kRows; ++r) acc[r] = _mm512_setzero_si512();
#pragma GCC unroll 1
    for (int g = 0; g < groups; ++g) {
        const __m512i w0 = _mm512_loadu_si512(b0 + static_cast<size_t>(g) * kCb * kDg);
        const __m512i w1 = kBlocks == 2 ? _mm512_loadu_si512(b1 + static_cast<size_t>(g) * kCb * kDg) : w0;
        const uint32_t off = offsets[g];
#pragma GCC unroll 16
        for (int r = 0; r < kRows; ++r) {
            uint32_t a4;
            std::memcpy(&a4, row[r] + off, 4);
            const __m512i x = _mm512_set1_epi32(static_cast<int>(a4 ^ flip));
            acc[kBlocks * r] = _mm512_dpbusd_epi32(acc[kBlocks * r], x, w0);
            if (kBlocks == 2) acc[2 * r + 1] = _mm512_dpbusd_epi32(acc[2 * r + 1], x, w1);
        }
    }
}

inline __mmask16 first_columns(int count) {
    return count >= kCb ? static_cast<__mmask16>(0xffff) : (count <= 0 ? 0 : static_cast<__mmask16>((1u << count) - 1));
}

// The columns of blocks blk and blk + 1 (those that exist) for kRows rows.
// A pair whose second block holds no column takes the one-block tile.
template <int kRows>
void pair_tile(const uint8_t* const* rows, const uint32_t* offsets, uint32_t flip, const PackedWeightsS8& b, int blk,
               int32_t* c, size_t ldc) {
    const int groups = b.k_padded / kDg;
    const size_t block_bytes = static_cast<size_t>(groups) * kCb * kDg;
    const int8_t* b0 = b.data.data() + static_cast<size_t>(blk) * block_bytes;
    const int col0 = blk * kCb;
    const int cols = std::min(2 * kCb, b.n - col0);
    const __m512i bias0 = _mm512_loadu_si512(b.column_bias.data() + col0);
    __m512i acc[2 * kRows];
    if (cols <= kCb) {
        tile<kRows, 1>(rows, offsets, flip, b0, b0, groups, acc);
        const __mmask16 m0 = first_columns(cols);
        for (int r = 0; r < kRows; ++r)
            _mm512_mask_storeu_epi32(c + static_cast<size_t>(r) * ldc + col0, m0, _mm512_sub_epi32(acc[r], bias0));
        return;
    }
    tile<kRows, 2>(rows, offsets, flip, b0, b0 + block_bytes, groups, acc);
    const __m512i bias1 = _mm512_loadu_si512(b.column_bias.data() + col0 + kCb);
    if (cols == 2 * kCb) {  // whole blocks: plain stores (masked ones cost more on some cores)
        for (int r = 0; r < kRows; ++r) {
            int32_t* out = c + static_cast<size_t>(r) * ldc + col0;
            _mm512_storeu_si512(out, _mm512_sub_epi32(acc[2 * r], bias0));
            _mm512_storeu_si512(out + kCb, _mm512_sub_epi32(acc[2 * r + 1], bias1));
        }
        return;
    }
    const __mmask16 m1 = first_columns(cols - kCb);
    for (int r = 0; r < kRows; ++r) {
        int32_t* out = c + static_cast<size_t>(r) * ldc + col0;
        _mm512_storeu_si512(out, _mm512_sub_epi32(acc[2 * r], bias0));
        _mm512_mask_storeu_epi32(out + kCb, m1, _mm512_sub_epi32(acc[2 * r + 1], bias1));
    }
}

void pair_rows(int rows_left, const uint8_t* const* rows, const uint32_t* offsets, uint32_t flip,
               const PackedWeightsS8& b, int blk, int32_t* c, size_t ldc) {
    switch (rows_left) {
    case 7: pair_tile<7>(rows, offsets, flip, b, blk, c, ldc); break;
    case 6: pair_tile<6>(rows, offsets, flip, b, blk, c, ldc); break;
    case 5: pair_tile<5>(rows, offsets, flip, b, blk, c, ldc); break;
    case 4: pair_tile<4>(rows, offsets, flip, b, blk, c, ldc); break;
    case 3: pair_tile<3>(rows, offsets, flip, b, blk, c, ldc); break;
    case 2: pair_tile<2>(rows, offsets, flip, b, blk, c, ldc); break;
    case 1: pair_tile<1>(rows, offsets, flip, b, blk, c, ldc); break;
    default: pair_tile<kTileRows>(rows, offsets, flip, b, blk, c, ldc); break;
    }
}

}  // namespace

void gemm_u8s8_rows_avx512vnni(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block, int last_block,
                               int32_t* c, size_t ldc) {
    const uint32_t flip = 0x01010101u * a.flip;
    const size_t k = static_cast<size_t>(std::max(b.k_padded, 1));
    const int panel = std::clamp(static_cast<int>(kPanelBytes / k) / kTileRows * kTileRows, kTileRows, kMaxPanelRows);
    for (int p0 = 0; p0 < m; p0 += panel) {
        const int p1 = std::min(m, p0 + panel);
        for (int blk = first_block; blk < last_block; blk += 2) {
            for (int r = p0; r < p1; r += kTileRows)
                pair_rows(std::min(kTileRows, p1 - r), a.rows + r, a.offsets, flip, b, blk,
                          c + static_cast<size_t>(r) * ldc, ldc);
        }
    }
}

}  // namespace rknn::emulator::detail
