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

}  // namespace rknn::cpu::int8
