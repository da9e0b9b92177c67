// 16 x 16 byte transposes and int8 widening in GCC/Clang vector extensions:
// SSE2 shuffles on x86, NEON zips on aarch64, without intrinsics. The NPU's
// int8 cubes keep 16 channels of a pixel together; the CPU side wants each
// channel's pixels together, and these move 16 pixels x 16 channels at once.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__has_builtin)
#if !__has_builtin(__builtin_shufflevector) || !__has_builtin(__builtin_convertvector)
#error "byte_transpose.h needs __builtin_shufflevector and __builtin_convertvector (GCC 12 or later, or Clang)"
#endif
#else
#error "byte_transpose.h needs __has_builtin (GCC 10 or later, or Clang)"
#endif

namespace rknn {

using Bytes16 = int8_t __attribute__((vector_size(16)));

namespace detail {
using Shorts8 = int16_t __attribute__((vector_size(16)));
using Ints4 = int32_t __attribute__((vector_size(16)));
using Longs2 = int64_t __attribute__((vector_size(16)));

// The same 16 bytes seen as another vector type (compiles to nothing).
template <typename To, typename From>
inline To bits(From v) {
    static_assert(sizeof(To) == sizeof(From), "same size");
    To r;
    std::memcpy(&r, &v, sizeof(r));
    return r;
}

// Interleaves the low (kHigh false) or high halves of a and b in units of T.
template <typename T, bool kHigh>
inline Bytes16 zip(Bytes16 a, Bytes16 b) {
    const T x = bits<T>(a), y = bits<T>(b);
    T r;
    if constexpr (sizeof(T) / sizeof(x[0]) == 16) {
        r = kHigh ? __builtin_shufflevector(x, y, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
                  : __builtin_shufflevector(x, y, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    } else if constexpr (sizeof(T) / sizeof(x[0]) == 8) {
        r = kHigh ? __builtin_shufflevector(x, y, 4, 12, 5, 13, 6, 14, 7, 15)
                  : __builtin_shufflevector(x, y, 0, 8, 1, 9, 2, 10, 3, 11);
    } else if constexpr (sizeof(T) / sizeof(x[0]) == 4) {
        r = kHigh ? __builtin_shufflevector(x, y, 2, 6, 3, 7) : __builtin_shufflevector(x, y, 0, 4, 1, 5);
    } else {
        r = kHigh ? __builtin_shufflevector(x, y, 1, 3) : __builtin_shufflevector(x, y, 0, 2);
    }
    return bits<Bytes16>(r);
}
}  // namespace detail

// rows[i] holds row i; afterwards rows[j] holds what was column j.
inline void transpose_16x16(Bytes16 rows[16]) {
    using namespace detail;
    Bytes16 t[16];
    for (int i = 0; i < 8; ++i) {
        t[i] = zip<Bytes16, false>(rows[2 * i], rows[2 * i + 1]);
        t[i + 8] = zip<Bytes16, true>(rows[2 * i], rows[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
            rows[8 * h + i] = zip<Shorts8, false>(t[8 * h + 2 * i], t[8 * h + 2 * i + 1]);
            rows[8 * h + i + 4] = zip<Shorts8, true>(t[8 * h + 2 * i], t[8 * h + 2 * i + 1]);
        }
    for (int g = 0; g < 4; ++g)
        for (int i = 0; i < 2; ++i) {
            t[4 * g + i] = zip<Ints4, false>(rows[4 * g + 2 * i], rows[4 * g + 2 * i + 1]);
            t[4 * g + i + 2] = zip<Ints4, true>(rows[4 * g + 2 * i], rows[4 * g + 2 * i + 1]);
        }
    for (int g = 0; g < 4; ++g)
        for (int i = 0; i < 2; ++i) {
            rows[4 * g + 2 * i] = zip<Longs2, false>(t[4 * g + 2 * i], t[4 * g + 2 * i + 1]);
            rows[4 * g + 2 * i + 1] = zip<Longs2, true>(t[4 * g + 2 * i], t[4 * g + 2 * i + 1]);
        }
}

// out[k] = float(codes[k] - zp) * scale for the 16 codes: the float product
// of an exact integer and the scale, which is what the double arithmetic
// (code - zp) * scale rounds to as well, for |code - zp| < 2^24.
inline void widen_16_to_float(Bytes16 codes, int32_t zp, float scale, float out[16]) {
    using namespace detail;
    using Floats4 = float __attribute__((vector_size(16)));
    // Each code into the high byte of a 16-bit lane, then arithmetic shifts down: sign extension.
    const Shorts8 lo = bits<Shorts8>(Bytes16(__builtin_shufflevector(codes, codes, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                                                     6, 7, 7))) >> 8;
    const Shorts8 hi = bits<Shorts8>(Bytes16(__builtin_shufflevector(codes, codes, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
                                                                     13, 14, 14, 15, 15))) >> 8;
    const Ints4 z = {zp, zp, zp, zp};
    const Floats4 s = {scale, scale, scale, scale};
    const Shorts8 halves[2] = {lo, hi};
    for (int h = 0; h < 2; ++h) {
        const Shorts8 x = halves[h];
        const Ints4 a = bits<Ints4>(Shorts8(__builtin_shufflevector(x, x, 0, 0, 1, 1, 2, 2, 3, 3))) >> 16;
        const Ints4 b = bits<Ints4>(Shorts8(__builtin_shufflevector(x, x, 4, 4, 5, 5, 6, 6, 7, 7))) >> 16;
        const Floats4 fa = __builtin_convertvector(a - z, Floats4) * s;
        const Floats4 fb = __builtin_convertvector(b - z, Floats4) * s;
        std::memcpy(out + 8 * h, &fa, sizeof(fa));
        std::memcpy(out + 8 * h + 4, &fb, sizeof(fb));
    }
}

}  // namespace rknn
