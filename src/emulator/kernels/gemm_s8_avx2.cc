// The AVX2 path of gemm_u8s8 (compiled with -mavx2; chosen at run time).
// AVX2 has no 8-bit dot product that cannot saturate, so inputs and weights
// are widened to int16 and multiplied in pairs with vpmaddwd, exactly.
// Register tile: 6 rows x 16 columns (12 accumulators).
//
// Cache blocking: the reduction is taken in slices of kSlicePairs k pairs.
// For one slice, the rows are widened once into a buffer that stays in L2,
// and each column block's slice of weights (16 KiB) is then used by every
// row tile while it sits in L1. Without it, wide layers with few pixels (a
// 7x7x512 3x3 convolution: 4.7 MB of widened weights) read the whole weight
// matrix from memory again for every six rows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "emulator/kernels/gemm_s8.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kCb = PackedWeightsS8::kColumnBlock;
constexpr int kMaxRows = 6;
constexpr int kSlicePairs = 256;  // k pairs per slice: 16 KiB of one block's weights
constexpr int kSliceRows = 240;   // rows widened per slice pass (multiple of kMaxRows): 240 KiB

// C (+)= A x B for kRows rows and one column block over `pairs` k pairs.
template <int kRows>
void tile(const int16_t* a, size_t lda16, const int16_t* b, int pairs, bool accumulate, int32_t* c, size_t ldc,
          int cols) {
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
        alignas(32) int32_t tmp[kCb] = {};
        int32_t* dst = cols == kCb ? out : tmp;
        if (accumulate) {
            if (cols != kCb) std::memcpy(tmp, out, sizeof(int32_t) * static_cast<size_t>(cols));
            acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dst)));
            acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dst + 8)));
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), acc[r][0]);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8), acc[r][1]);
        if (cols != kCb) std::memcpy(out, tmp, sizeof(int32_t) * static_cast<size_t>(cols));
    }
}

void tile_rows(int rows, const int16_t* a, size_t lda16, const int16_t* b, int pairs, bool accumulate, int32_t* c,
               size_t ldc, int cols) {
    switch (rows) {
    case 6: tile<6>(a, lda16, b, pairs, accumulate, c, ldc, cols); break;
    case 5: tile<5>(a, lda16, b, pairs, accumulate, c, ldc, cols); break;
    case 4: tile<4>(a, lda16, b, pairs, accumulate, c, ldc, cols); break;
    case 3: tile<3>(a, lda16, b, pairs, accumulate, c, ldc, cols); break;
    case 2: tile<2>(a, lda16, b, pairs, accumulate, c, ldc, cols); break;
    default: tile<1>(a, lda16, b, pairs, accumulate, c, ldc, cols); break;
    }
}

// Rows [0, m) of A, k values [k0, k0 + 2 * pairs), widened and un-biased.
void widen_slice(int m, const uint8_t* a, size_t lda, size_t k0, int pairs, int16_t* out) {
    const size_t k = 2 * static_cast<size_t>(pairs);
    const __m256i bias = _mm256_set1_epi16(128);
    for (int r = 0; r < m; ++r) {
        const uint8_t* src = a + static_cast<size_t>(r) * lda + k0;
        int16_t* dst = out + static_cast<size_t>(r) * k;
        size_t i = 0;
        for (; i + 16 <= k; i += 16) {
            const __m256i v = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_sub_epi16(v, bias));
        }
        for (; i < k; ++i) dst[i] = static_cast<int16_t>(src[i] - 128);
    }
}

// Widened rows of one thread. Not a std::vector: std templates instantiated
// in this AVX2 file could be picked by the linker for the generic code too.
class RowScratch {
public:
    RowScratch() = default;
    RowScratch(const RowScratch&) = delete;
    RowScratch& operator=(const RowScratch&) = delete;
    ~RowScratch() { delete[] data_; }
    int16_t* get(size_t n) {
        if (n > size_) {
            delete[] data_;
            data_ = new int16_t[n];
            size_ = n;
        }
        return data_;
    }

private:
    int16_t* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace

void gemm_u8s8_avx2(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block, int last_block,
                    int32_t* c, size_t ldc) {
    thread_local RowScratch scratch;
    const int total_pairs = b.k_padded / 2;
    const int used_blocks = std::min(last_block, (b.n + kCb - 1) / kCb);
    for (int row0 = 0; row0 < m; row0 += kSliceRows) {
        const int n_rows = std::min(kSliceRows, m - row0);
        for (int p0 = 0; p0 < total_pairs; p0 += kSlicePairs) {
            const int pairs = std::min(kSlicePairs, total_pairs - p0);
            const size_t lda16 = 2 * static_cast<size_t>(pairs);
            int16_t* rows = scratch.get(static_cast<size_t>(n_rows) * lda16);
            widen_slice(n_rows, a + static_cast<size_t>(row0) * lda, lda, 2 * static_cast<size_t>(p0), pairs, rows);
            for (int blk = first_block; blk < used_blocks; ++blk) {
                const int16_t* bb = b.data16.data() + (static_cast<size_t>(blk) * total_pairs + p0) * 2 * kCb;
                const int cols = std::min(kCb, b.n - blk * kCb);
                for (int r = 0; r < n_rows; r += kMaxRows) {
                    tile_rows(std::min(kMaxRows, n_rows - r), rows + static_cast<size_t>(r) * lda16, lda16, bb,
                              pairs, p0 > 0, c + static_cast<size_t>(row0 + r) * ldc + static_cast<size_t>(blk) * kCb,
                              ldc, cols);
                }
            }
        }
    }
}

}  // namespace rknn::emulator::detail
