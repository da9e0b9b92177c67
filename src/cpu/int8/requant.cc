#include "cpu/int8/requant.h"

#include <algorithm>
#include <cmath>

namespace rknn::cpu::int8 {

int64_t round_even(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

Requant make_requant(const std::vector<double>& factors) {
    Requant r;
    double largest = 0.0;
    for (double f : factors) largest = std::max(largest, std::fabs(f));
    if (largest == 0.0 || !std::isfinite(largest)) {
        r.multipliers.assign(factors.size(), 0);
        return r;
    }
    // The largest shift that keeps every multiplier within 16 bits.
    int shift = static_cast<int>(std::floor(std::log2(kMaxMultiplier / largest)));
    shift = std::min(std::max(shift, 0), kMaxShift);
    while (shift > 0 && std::fabs(std::nearbyint(std::ldexp(largest, shift))) > kMaxMultiplier) --shift;
    r.shift = shift;
    for (double f : factors) {
        const double m = std::nearbyint(std::ldexp(f, shift));
        r.multipliers.push_back(static_cast<int32_t>(std::clamp(m, double{-kMaxMultiplier}, double{kMaxMultiplier})));
    }
    return r;
}

int64_t round_shift(int64_t value, int shift) {
    if (shift <= 0) return value;
    if (shift > kMaxShift) return 0;
    const int64_t floor_div = value >> shift;  // arithmetic shift: floor
    const int64_t remainder = value - floor_div * (int64_t{1} << shift);
    const int64_t half = int64_t{1} << (shift - 1);
    if (remainder > half || (remainder == half && (floor_div & 1))) return floor_div + 1;
    return floor_div;
}

}  // namespace rknn::cpu::int8
