// The AVX2 path of depthwise_row_s8 (compiled with -mavx2; chosen at run time):
// eight lanes per step, sign-extended to int32 and multiplied exactly.
#include <immintrin.h>

#include "emulator/kernels/depthwise_s8.h"

namespace rknn::emulator::detail {

namespace {

__m256i store_mask(int lanes) {
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), index);
}

}  // namespace

void depthwise_row_s8_avx2(const DepthwiseRow& row) {
    const bool wide = row.lanes == 16;
    const __m256i mask0 = store_mask(row.store_lanes), mask1 = store_mask(row.store_lanes - 8);
    for (int x = 0; x < row.width; ++x) {
        const uint8_t* window = row.origin + x * row.step;
        __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
        const int32_t* w = row.weights;
        for (int t = 0; t < row.taps; ++t, w += row.lanes) {
            const uint8_t* px = window + row.tap_offsets[t];
            const __m256i x0 = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(px)));
            acc0 = _mm256_add_epi32(acc0, _mm256_mullo_epi32(x0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w))));
            if (wide) {
                const __m256i x1 = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(px + 8)));
                acc1 = _mm256_add_epi32(acc1,
                                        _mm256_mullo_epi32(x1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 8))));
            }
        }
        int* out = reinterpret_cast<int*>(row.out + static_cast<size_t>(x) * row.out_stride);
        _mm256_maskstore_epi32(out, mask0, acc0);
        if (wide) _mm256_maskstore_epi32(out + 8, mask1, acc1);
    }
}

}  // namespace rknn::emulator::detail
