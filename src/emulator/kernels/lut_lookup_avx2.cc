// The AVX2 path of lut_lookup (compiled with -mavx2; chosen at run time).
#include <immintrin.h>

#include "emulator/kernels/lut_lookup.h"

namespace rknn::emulator::detail {

int lut_lookup_avx2(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes) {
    const __m256i base = _mm256_set1_epi32(memo.first);
    const __m256i clamp_lo = _mm256_set1_epi32(memo.clamp_lo), clamp_hi = _mm256_set1_epi32(memo.clamp_hi);
    // Unsigned index < span, as a signed compare after flipping the sign bits.
    const __m256i flip = _mm256_set1_epi32(INT32_MIN);
    const __m256i limit = _mm256_set1_epi32(static_cast<int32_t>(memo.span ^ 0x80000000u));
    const __m256i unset = _mm256_set1_epi32(kLutMemoUnset);
    const auto* table32 = reinterpret_cast<const int*>(memo.table);
    int i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(values + i));
        const __m256i index = _mm256_sub_epi32(_mm256_min_epi32(_mm256_max_epi32(v, clamp_lo), clamp_hi), base);
        const __m256i inside = _mm256_cmpgt_epi32(limit, _mm256_xor_si256(index, flip));
        const __m256i raw = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), table32, index, inside, 2);
        const __m256i entry = _mm256_srai_epi32(_mm256_slli_epi32(raw, 16), 16);
        const __m256i miss = _mm256_or_si256(_mm256_cmpeq_epi32(entry, unset), _mm256_xor_si256(inside, _mm256_set1_epi32(-1)));
        if (!_mm256_testz_si256(miss, miss)) break;
        // Entries are int8 codes: pack 8 x int32 to 8 bytes.
        const __m256i words = _mm256_packs_epi32(entry, entry);
        const __m256i bytes = _mm256_packs_epi16(words, words);
        const __m128i lo_half = _mm256_castsi256_si128(bytes), hi_half = _mm256_extracti128_si256(bytes, 1);
        const __m128i eight = _mm_unpacklo_epi32(lo_half, hi_half);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(codes + i), eight);
    }
    // The rest, or the step with a miss: value by value up to the miss.
    const int rest = count - i < 8 ? count - i : 8;
    return i + lut_lookup_generic(memo, values + i, rest, codes + i);
}

}  // namespace rknn::emulator::detail
