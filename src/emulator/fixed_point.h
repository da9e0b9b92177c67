// Integer arithmetic of the emulated datapath. Kept separate from the CPU
// reference (src/cpu/int8) on purpose: the emulator follows the registers,
// the reference follows the model, and tests compare the two.
#pragma once

#include <cstdint>
#include <limits>

namespace rknn::emulator {

enum class Rounding { kHalfEven, kHalfAway };

// value / 2^shift, rounded to nearest (ties per `mode`); shift 0..63.
inline int64_t shift_round(int64_t value, int shift, Rounding mode = Rounding::kHalfEven) {
    if (shift <= 0) return value;
    if (shift >= 63) return 0;
    const int64_t floor = value >> shift;  // arithmetic shift: floor division
    const int64_t rem = value & ((int64_t{1} << shift) - 1);  // value - floor * 2^shift
    const int64_t half = int64_t{1} << (shift - 1);
    if (rem > half) return floor + 1;
    if (rem < half) return floor;
    if (mode == Rounding::kHalfAway) return value >= 0 ? floor + 1 : floor;
    return (floor & 1) ? floor + 1 : floor;
}

// shift_round for half-to-even without branches (vectorisable): adding
// 2^(s-1) - 1 plus the parity of the floor quotient rounds ties to even.
// Valid for 1 <= shift <= 62 and |value| < 2^62.
inline int64_t shift_round_even(int64_t value, int shift) {
    return (value + ((int64_t{1} << (shift - 1)) - 1) + ((value >> shift) & 1)) >> shift;
}

inline int64_t saturate(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
inline int64_t sat32(int64_t v) {
    return saturate(v, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
}

// A product that cannot overflow int64 for the operand widths the DPU has
// (32-bit data times 16/32-bit operands): saturate the data first.
inline int64_t mul_wide(int64_t a, int64_t b) {
    const __int128 p = static_cast<__int128>(a) * b;
    if (p > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
    if (p < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(p);
}

}  // namespace rknn::emulator
