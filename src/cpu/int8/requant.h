// The NPU's integer requantisation arithmetic, in one place.
//
// A real factor r (e.g. s_in * s_w / s_out) becomes a signed 16-bit multiplier
// M and a right shift S with r ~= M / 2^S. The DPU applies one shift per
// pipeline stage to a whole layer while the multiplier may differ per channel
// (hw-facts 3.5 BS_MUL_CFG; gregordinary out-cvt-converter.md), so a group of
// factors shares one S and each gets its own M.
//
// Rounding of every right shift is round-half-to-even: that is what the DPU's
// output converter does with CVT_ROUND = 0 (board-verified on the RV1103 NPU,
// golden/notes-open-rknpu.md). It is defined only here; change it here if RK3588
// captures ever show otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rknn::cpu::int8 {

constexpr int32_t kMaxMultiplier = 32767;  // signed 16-bit
constexpr int kMaxShift = 62;

struct Requant {
    std::vector<int32_t> multipliers;  // one per factor, |M| <= 32767
    int shift = 0;                     // shared right shift
    int32_t multiplier(size_t i) const { return multipliers.size() == 1 ? multipliers[0] : multipliers[i]; }
};

// Factors larger than 32767 saturate (shift 0); a model with such a factor is
// badly quantised, and the converter never produces one.
Requant make_requant(const std::vector<double>& factors);
inline Requant make_requant(double factor) { return make_requant(std::vector<double>{factor}); }

// value / 2^shift rounded half to even (arithmetic, for negative values too).
// Inline: the CPU's int8 kernels call it per element.
inline int64_t round_shift(int64_t value, int shift) {
    if (shift <= 0) return value;
    if (shift > kMaxShift) return 0;
    const int64_t floor_div = value >> shift;  // arithmetic shift: floor
    const int64_t remainder = value - floor_div * (int64_t{1} << shift);
    const int64_t half = int64_t{1} << (shift - 1);
    // Without branches: the data decides, and would mispredict half the time.
    const int64_t up = static_cast<int64_t>(remainder > half) | (static_cast<int64_t>(remainder == half) & floor_div & 1);
    return floor_div + up;
}

// value * M / 2^S for factor i of `r`.
inline int64_t apply(const Requant& r, size_t i, int64_t value) {
    return round_shift(value * r.multiplier(i), r.shift);
}

inline int8_t saturate_int8(int64_t v) { return static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v)); }
inline int32_t saturate_int32(int64_t v) {
    return static_cast<int32_t>(v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v));
}

// round_half_to_even(x) for the table and bound computations done in float.
int64_t round_even(double x);

}  // namespace rknn::cpu::int8
