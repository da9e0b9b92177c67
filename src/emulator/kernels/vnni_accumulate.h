// acc += the dot products of x's unsigned and w's signed bytes (four per
// 32-bit lane), in place. For sources compiled with AVX-512 VNNI only.
//
// GCC 12 models the intrinsic as a three-operand operation and, in a loop,
// moves every accumulator to a fresh register each time round (spilling
// some); the in-place asm keeps a tile's accumulators where they are.
#pragma once

#include <immintrin.h>

namespace rknn::emulator::detail {

inline void dot_accumulate(__m512i& acc, __m512i x, __m512i w) {
#if defined(__GNUC__)
    asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(x), "v"(w));
#else
    acc = _mm512_dpbusd_epi32(acc, x, w);
#endif
}

}  // namespace rknn::emulator::detail
