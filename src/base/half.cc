#include "base/half.h"

namespace rknn {

uint16_t float_to_half(float value) {
    const uint32_t bits = float_bits(value);
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf (>= 65520)
    if (abs < 0x38800000u) {
        // Subnormal half (or zero): value = m * 2^-24 with m < 1024.
        if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal
        const uint32_t exponent = abs >> 23;
        const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - exponent;  // 14..24 (shifts to units of 2^-24)
        uint32_t half = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1);
        const uint32_t halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
        return static_cast<uint16_t>(sign | half);
    }
    // Normal: rebias the exponent and round the 13 dropped mantissa bits to even.
    uint32_t half = ((abs >> 13) - (112u << 10));
    const uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
}

float half_to_float(uint16_t half) {
    const uint32_t sign = (static_cast<uint32_t>(half) & 0x8000u) << 16;
    const uint32_t exponent = (half >> 10) & 0x1fu;
    uint32_t mantissa = half & 0x3ffu;
    if (exponent == 0) {
        if (mantissa == 0) return bits_float(sign);
        // Subnormal: normalise.
        int e = -1;
        do {
            ++e;
            mantissa <<= 1;
        } while ((mantissa & 0x400u) == 0);
        mantissa &= 0x3ffu;
        return bits_float(sign | ((112u - e) << 23) | (mantissa << 13));
    }
    if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace rknn
