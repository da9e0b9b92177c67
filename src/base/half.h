// IEEE binary16 and bfloat16 conversions (round to nearest even). Inline
// and nearly branch-free: the emulator's float pipeline and the CPU steps of
// float16 models convert every element. Exact for every input, NaN and
// subnormals included (tests/base/half_test.cc checks them against a plain
// bit-by-bit version), under the default rounding mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rknn {

inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

inline uint16_t float_to_half(float value) {
    const uint32_t bits = float_bits(value);
    const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    if (abs >= 0x477ff000u)  // NaN (kept quiet), or rounds to infinity (>= 65520)
        return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (abs < 0x38800000u) {
        // Subnormal half or zero: in [0.5, 1) a float's last mantissa bit is
        // 2^-24, the half subnormal step, so adding 0.5 lets the FPU round
        // the value to that step (to even), and the low bits are the half.
        const float aligned = bits_float(abs) + 0.5f;
        return static_cast<uint16_t>(sign | (float_bits(aligned) - 0x3f000000u));
    }
    // Normal: round the 13 dropped mantissa bits to even (a carry moves into
    // the exponent, as it should), then rebias the exponent from 127 to 15.
    const uint32_t rounded = abs + 0x0fffu + ((abs >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - (112u << 23)) >> 13));
}

inline float half_to_float(uint16_t half) {
    const uint32_t sign = (static_cast<uint32_t>(half) & 0x8000u) << 16;
    const uint32_t magnitude = (static_cast<uint32_t>(half) & 0x7fffu) << 13;
    // Read with the float's exponent bias, then scaled by 2^(127 - 15):
    // exact for normals, and subnormal halves become normal floats.
    float value = bits_float(magnitude) * 0x1p112f;
    if (magnitude >= (0x7c00u << 13)) value = bits_float(magnitude | 0x7f800000u);  // infinity, NaN payload kept
    return bits_float(float_bits(value) | sign);
}

// All ones when `condition` holds, else zero: a select the vectoriser takes.
inline uint32_t mask_if(bool condition) { return 0u - static_cast<uint32_t>(condition); }
inline uint32_t select_bits(uint32_t mask, uint32_t a, uint32_t b) { return (a & mask) | (b & ~mask); }

// The same conversions over arrays, equal to float_to_half / half_to_float
// element by element, NaN included (tests/base/half_test.cc, on every SIMD
// target). `out` / `in` hold the halves as bytes (2 per value, any
// alignment). Where the CPU converts in hardware (x86 F16C, AArch64) they
// use it (half_arrays.cc); elsewhere the portable loops below.
void floats_to_halves(const float* in, uint8_t* out, size_t n);
void halves_to_floats(const uint8_t* in, float* out, size_t n);
// The SIMD target the two dispatch to ("AVX2", "NEON", ...; on SSE4 and
// SCALAR they run the portable loops).
const char* half_arrays_target();

namespace detail {

// Every case computed and one selected (no branches), so that compilers
// vectorise them.
inline void floats_to_halves_portable(const float* in, uint8_t* out, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const uint32_t bits = float_bits(in[i]);
        const uint32_t sign = (bits >> 16) & 0x8000u;
        const uint32_t abs = bits & 0x7fffffffu;
        const uint32_t normal = (abs + 0x0fffu + ((abs >> 13) & 1u) - (112u << 23)) >> 13;
        const uint32_t subnormal = float_bits(bits_float(abs) + 0.5f) - 0x3f000000u;
        const uint32_t special = select_bits(mask_if(abs > 0x7f800000u), 0x7e00u, 0x7c00u);
        const uint32_t finite = select_bits(mask_if(abs < 0x38800000u), subnormal, normal);
        const auto half = static_cast<uint16_t>(sign | select_bits(mask_if(abs >= 0x477ff000u), special, finite));
        std::memcpy(out + 2 * i, &half, 2);
    }
}

inline void halves_to_floats_portable(const uint8_t* in, float* out, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        uint16_t half;
        std::memcpy(&half, in + 2 * i, 2);
        const uint32_t sign = (static_cast<uint32_t>(half) & 0x8000u) << 16;
        const uint32_t magnitude = (static_cast<uint32_t>(half) & 0x7fffu) << 13;
        const uint32_t scaled = float_bits(bits_float(magnitude) * 0x1p112f);
        out[i] = bits_float(sign | select_bits(mask_if(magnitude >= (0x7c00u << 13)), magnitude | 0x7f800000u, scaled));
    }
}

}  // namespace detail

inline uint16_t float_to_bfloat16(float value) {
    uint32_t u = float_bits(value);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // keep NaN quiet
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

inline float bfloat16_to_float(uint16_t value) { return bits_float(static_cast<uint32_t>(value) << 16); }

// Rounds a float to the nearest representable binary16 value (as float).
inline float round_to_half(float value) { return half_to_float(float_to_half(value)); }

}  // namespace rknn
