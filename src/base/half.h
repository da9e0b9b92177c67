// IEEE binary16 and bfloat16 conversions (round to nearest even), as plain
// functions: the reference path needs exactness, not speed.
#pragma once

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

uint16_t float_to_half(float value);
float half_to_float(uint16_t half);

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
