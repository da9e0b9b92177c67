// The AVX-512 path of depthwise_row_s8 (compiled with -mavx512f -mavx512bw;
// chosen at run time on CPUs that have them): a 16-lane atom per step; atoms
// of 8 lanes take the AVX2 path.
// GCC 12's AVX-512 header starts some intrinsics from _mm512_undefined_epi32(),
// which -Wmaybe-uninitialized reports once they are inlined at -O3.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include "emulator/kernels/depthwise_s8.h"

namespace rknn::emulator::detail {

void depthwise_row_s8_avx512(const DepthwiseRow& row) {
    if (row.lanes != 16) {
        depthwise_row_s8_avx2(row);
        return;
    }
    const __mmask16 mask = static_cast<__mmask16>((1u << row.store_lanes) - 1);
    int x = 0;
    // Two pixels a step: each weight load serves both.
    for (; x + 2 <= row.width; x += 2) {
        const uint8_t* window = row.origin + x * row.step;
        __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
        const int32_t* w = row.weights;
        for (int t = 0; t < row.taps; ++t, w += 16) {
            const uint8_t* px = window + row.tap_offsets[t];
            const __m512i wt = _mm512_loadu_si512(w);
            const __m512i x0 = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(px)));
            const __m512i x1 = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(px + row.step)));
            acc0 = _mm512_add_epi32(acc0, _mm512_mullo_epi32(x0, wt));
            acc1 = _mm512_add_epi32(acc1, _mm512_mullo_epi32(x1, wt));
        }
        int32_t* out = row.out + static_cast<size_t>(x) * row.out_stride;
        _mm512_mask_storeu_epi32(out, mask, acc0);
        _mm512_mask_storeu_epi32(out + row.out_stride, mask, acc1);
    }
    for (; x < row.width; ++x) {
        const uint8_t* window = row.origin + x * row.step;
        __m512i acc = _mm512_setzero_si512();
        const int32_t* w = row.weights;
        for (int t = 0; t < row.taps; ++t, w += 16) {
            const __m512i x0 =
                _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(window + row.tap_offsets[t])));
            acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(x0, _mm512_loadu_si512(w)));
        }
        _mm512_mask_storeu_epi32(row.out + static_cast<size_t>(x) * row.out_stride, mask, acc);
    }
}

}  // namespace rknn::emulator::detail
