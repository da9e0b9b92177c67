// The AVX-512 path of lut_lookup (compiled with -mavx512f -mavx512bw; chosen
// at run time on CPUs that have them).
// GCC 12's AVX-512 header starts some intrinsics from _mm512_undefined_epi32(),
// which -Wmaybe-uninitialized reports once they are inlined at -O3.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include "emulator/kernels/lut_lookup.h"

namespace rknn::emulator::detail {

int lut_lookup_avx512(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes) {
    const __m512i base = _mm512_set1_epi32(memo.first);
    const __m512i clamp_lo = _mm512_set1_epi32(memo.clamp_lo), clamp_hi = _mm512_set1_epi32(memo.clamp_hi);
    const __m512i limit = _mm512_set1_epi32(static_cast<int32_t>(memo.span));
    const __m512i unset = _mm512_set1_epi32(kLutMemoUnset);
    int i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m512i v = _mm512_min_epi32(_mm512_max_epi32(_mm512_loadu_si512(values + i), clamp_lo), clamp_hi);
        const __m512i index = _mm512_sub_epi32(v, base);
        const __mmask16 inside = _mm512_cmplt_epu32_mask(index, limit);
        const __m512i raw = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), inside, index, memo.table, 2);
        // The low 16 bits are the entry (an int8 code, or the unset mark).
        const __m512i entry = _mm512_and_si512(raw, _mm512_set1_epi32(0xffff));
        const __mmask16 filled = _mm512_mask_cmpneq_epi32_mask(inside, entry, unset);
        if (filled != 0xffff) break;
        // Truncating to bytes keeps each code's low byte: the code.
        _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + i), _mm512_maskz_cvtepi32_epi8(0xffff, raw));
    }
    // The rest, or the step with a miss: value by value up to the miss.
    const int rest = count - i < 16 ? count - i : 16;
    return i + lut_lookup_generic(memo, values + i, rest, codes + i);
}

}  // namespace rknn::emulator::detail
