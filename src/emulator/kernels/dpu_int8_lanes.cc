#include "emulator/kernels/dpu_int8_lanes.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/hot_loops.h"
#include "emulator/kernels/dpu_int8_pairs.h"

namespace rknn::emulator {

namespace {

constexpr int kAtom = 16;
constexpr double kInt32Limit = 2147483647.0;

// scale = m / 2^s with m an integer and s the smallest such shift; false
// when no shift up to 30 makes it one.
bool split_scale(double scale, int* shift) {
    for (int s = 0; s <= 30; ++s) {
        const double m = std::ldexp(scale, s);
        if (m == std::trunc(m)) {
            *shift = s;
            return true;
        }
    }
    return false;
}

// The integer range of a value, carried through the chain.
struct Range {
    double lo, hi;
    void clamp_to(double a, double b) {
        lo = std::min(std::max(lo, a), b);
        hi = std::min(std::max(hi, a), b);
    }
};

// rne(v * m / 2^s) over the range, when the int32 product and its rounding
// offset cannot overflow (|v m| + 2^s <= 2^31 - 1).
bool multiply_range(Range* r, int64_t m, int s) {
    const double a = r->lo * static_cast<double>(m), b = r->hi * static_cast<double>(m);
    if (std::max(std::fabs(a), std::fabs(b)) + std::ldexp(1.0, s) > kInt32Limit) return false;
    const double unit = std::ldexp(1.0, -s);
    r->lo = std::nearbyint(std::min(a, b) * unit);
    r->hi = std::nearbyint(std::max(a, b) * unit);
    return true;
}

bool fits_int32(double v) { return v >= -kInt32Limit - 1.0 && v <= kInt32Limit; }

// A per-plan multiplier m / 2^s with s >= 1 (an even m doubled if need be),
// so that every multiply is one rounding shift.
bool plan_multiplier(double scale, int32_t* m, int* s) {
    int shift = 0;
    if (!split_scale(scale, &shift)) return false;
    if (shift == 0) shift = 1;
    const double mm = std::ldexp(scale, shift);
    if (!fits_int32(mm)) return false;
    *m = static_cast<int32_t>(mm);
    *s = shift;
    return true;
}

// rne(p / 2^s), half to even, for 1 <= s <= 30 and p + 2^(s-1) within int32.
inline int32_t round_shift32(int32_t p, int s) { return (p + ((1 << (s - 1)) - 1) + ((p >> s) & 1)) >> s; }

inline int32_t clamp32(int32_t v, int32_t lo, int32_t hi) { return std::min(std::max(v, lo), hi); }

// An integer multiplier that a pairwise 16-bit multiply-add takes.
bool int16_integer(double m) { return m == std::trunc(m) && m >= -32768.0 && m <= 32767.0; }

// The exact form of an int32 plan (see DpuInt8Lanes::pairs); false leaves
// the plan in its staged form. Runs after plan_int8_lanes filled `l`, whose
// checks on the EW clamp, OUT_CVT and the offsets hold here too: without a
// BS clamp the ranges are the same.
bool plan_pairs(const DpuRequantPlan& p, DpuInt8Lanes* l) {
    const double ew_mul = p.ew_cvt ? p.ew_scale : 1.0, ew_offset = p.ew_cvt ? p.ew_offset : 0.0;
    if (!int16_integer(ew_mul)) return false;
    const size_t n = static_cast<size_t>(p.channels);
    l->pair_mul.assign(2 * n, 0);
    l->pair_base.assign(n, 0);
    l->pair_clamp = false;
    const double op_a = (-128.0 + ew_offset) * ew_mul, op_b = (127.0 + ew_offset) * ew_mul;
    for (size_t c = 0; c < n; ++c) {
        const double bias = p.bs_alu ? p.bias[c] : 0.0, mul = p.bs_mul ? p.scale[c] : 1.0;
        if (!int16_integer(mul)) return false;
        const double a = (-128.0 + bias) * mul, b = (127.0 + bias) * mul;
        if (std::min(a, b) < p.bs_lo || std::max(a, b) > p.bs_hi) return false;  // the BS clamp binds
        const double lo = std::min(a, b) + std::min(op_a, op_b), hi = std::max(a, b) + std::max(op_a, op_b);
        const double base = bias * mul + ew_offset * ew_mul;
        if (!fits_int32(lo) || !fits_int32(hi) || !fits_int32(base)) return false;
        l->pair_clamp = l->pair_clamp || lo < p.ew_lo || hi > p.ew_hi;
        l->pair_mul[2 * c] = static_cast<int16_t>(mul);
        l->pair_mul[2 * c + 1] = static_cast<int16_t>(ew_mul);
        l->pair_base[c] = static_cast<int32_t>(base);
    }
    return true;
}

// One 16-channel surface of a row; the lane loops vectorise. The plan's
// values are copied to locals first: the byte stores could otherwise alias
// them, and the compiler would reload them for every pixel.
template <bool kAlu, bool kMul, DpuRequantPlan::Ew kEw, bool kCvt>
RKNN_HOT_LOOP void surface_row(const DpuInt8Lanes& p, int c0, const int8_t* src, int width, const int8_t* ew,
                               uint8_t* out) {
    int32_t bias[kAtom], mul[kAtom];
    uint8_t keep[kAtom];
    for (int l = 0; l < kAtom; ++l) {
        bias[l] = p.bias[static_cast<size_t>(c0 + l)];
        mul[l] = p.mul[static_cast<size_t>(c0 + l)];
        keep[l] = static_cast<uint8_t>(p.keep[static_cast<size_t>(c0 + l)]);
    }
    const int bs_shift = p.bs_shift, ew_shift = p.ew_shift, out_shift = p.out_shift;
    const int32_t bs_lo = p.bs_lo, bs_hi = p.bs_hi, ew_lo = p.ew_lo, ew_hi = p.ew_hi;
    const int32_t ew_offset = p.ew_offset, ew_mul = p.ew_mul, out_mul = p.out_mul, out_offset = p.out_offset;
    for (int x = 0; x < width; ++x, src += kAtom, out += kAtom) {
        // One pass per lane, so that each value stays in a register.
        uint8_t codes[kAtom];
        for (int l = 0; l < kAtom; ++l) {
            int32_t v = src[l];
            if (kAlu) v += bias[l];
            if (kMul) v = round_shift32(v * mul[l], bs_shift);
            v = clamp32(v, bs_lo, bs_hi);
            if (kEw == DpuRequantPlan::Ew::kAddInt8) {
                int32_t op = ew[l];
                if (kCvt) op = round_shift32((op + ew_offset) * ew_mul, ew_shift);
                v = clamp32(v + op, ew_lo, ew_hi);
            } else if (kEw == DpuRequantPlan::Ew::kClamp) {
                v = clamp32(v, ew_lo, ew_hi);
            }
            const int32_t code = clamp32(round_shift32(v * out_mul, out_shift) + out_offset, -128, 127);
            codes[l] = static_cast<uint8_t>(static_cast<uint8_t>(code) & keep[l]);
        }
        if (kEw == DpuRequantPlan::Ew::kAddInt8) ew += kAtom;
        std::memcpy(out, codes, kAtom);
    }
}

using SurfaceRow = void (*)(const DpuInt8Lanes&, int, const int8_t*, int, const int8_t*, uint8_t*);

template <bool kAlu, bool kMul>
SurfaceRow pick_ew(const DpuInt8Lanes& p) {
    using Ew = DpuRequantPlan::Ew;
    if (p.ew == Ew::kAddInt8) return p.ew_cvt ? surface_row<kAlu, kMul, Ew::kAddInt8, true> : surface_row<kAlu, kMul, Ew::kAddInt8, false>;
    if (p.ew == Ew::kClamp) return surface_row<kAlu, kMul, Ew::kClamp, false>;
    return surface_row<kAlu, kMul, Ew::kNone, false>;
}

SurfaceRow pick(const DpuInt8Lanes& p) {
    if (p.bs_alu) return p.bs_mul ? pick_ew<true, true>(p) : pick_ew<true, false>(p);
    return p.bs_mul ? pick_ew<false, true>(p) : pick_ew<false, false>(p);
}

}  // namespace

bool plan_int8_lanes(const DpuRequantPlan& p, DpuInt8Lanes* lanes) {
    using Ew = DpuRequantPlan::Ew;
    // Chains without a tensor operand fold into one clamp (fold_code_bounds),
    // which the double lanes run faster than these lanes run every step.
    if (!p.int8_source || p.channels % kAtom != 0 || p.out_atom_bytes != kAtom || p.ew != Ew::kAddInt8) return false;
    if (p.ew_atom_bytes != kAtom) return false;
    DpuInt8Lanes& l = *lanes;
    l.channels = p.channels;
    l.bs_alu = p.bs_alu;
    l.bs_mul = p.bs_mul;
    l.ew = p.ew;
    l.ew_cvt = p.ew_cvt;
    const size_t n = static_cast<size_t>(p.channels);
    l.bias.assign(n, 0);
    l.mul.assign(n, 1);
    l.keep.assign(n, 0);
    // The BS multipliers share one shift: the largest any channel needs.
    l.bs_shift = 1;
    if (p.bs_mul) {
        for (size_t c = 0; c < n; ++c) {
            int s = 0;
            if (!split_scale(p.scale[c], &s)) return false;
            l.bs_shift = std::max(l.bs_shift, s);
        }
    }
    if (!fits_int32(p.bs_lo) || !fits_int32(p.bs_hi) || !fits_int32(p.ew_lo) || !fits_int32(p.ew_hi)) return false;
    l.bs_lo = static_cast<int32_t>(p.bs_lo);
    l.bs_hi = static_cast<int32_t>(p.bs_hi);
    l.ew_lo = static_cast<int32_t>(p.ew_lo);
    l.ew_hi = static_cast<int32_t>(p.ew_hi);
    // The EW operand's range after the converter (the same for every channel).
    Range op{-128.0, 127.0};
    if (p.ew == Ew::kAddInt8 && p.ew_cvt) {
        if (!fits_int32(p.ew_offset) || std::fabs(p.ew_offset) > 16777216.0) return false;
        l.ew_offset = static_cast<int32_t>(p.ew_offset);
        if (!plan_multiplier(p.ew_scale, &l.ew_mul, &l.ew_shift)) return false;
        op = Range{op.lo + p.ew_offset, op.hi + p.ew_offset};
        if (!multiply_range(&op, l.ew_mul, l.ew_shift)) return false;
    }
    if (!plan_multiplier(p.out_scale, &l.out_mul, &l.out_shift)) return false;
    if (!fits_int32(p.out_offset) || std::fabs(p.out_offset) > 16777216.0) return false;
    l.out_offset = static_cast<int32_t>(p.out_offset);
    for (size_t c = 0; c < n; ++c) {
        Range v{-128.0, 127.0};
        if (p.bs_alu) {
            if (std::fabs(p.bias[c]) > 16777216.0) return false;
            l.bias[c] = static_cast<int32_t>(p.bias[c]);
            v = Range{v.lo + p.bias[c], v.hi + p.bias[c]};
        }
        if (p.bs_mul) {
            const double m = std::ldexp(p.scale[c], l.bs_shift);
            if (!fits_int32(m)) return false;
            l.mul[c] = static_cast<int32_t>(m);
            if (!multiply_range(&v, l.mul[c], l.bs_shift)) return false;
        }
        v.clamp_to(p.bs_lo, p.bs_hi);
        if (p.ew == Ew::kAddInt8) {
            v = Range{v.lo + op.lo, v.hi + op.hi};
            if (!fits_int32(v.lo) || !fits_int32(v.hi)) return false;
        }
        if (p.ew != Ew::kNone) v.clamp_to(p.ew_lo, p.ew_hi);
        if (!multiply_range(&v, l.out_mul, l.out_shift)) return false;
        if (!fits_int32(v.lo + p.out_offset) || !fits_int32(v.hi + p.out_offset)) return false;
        l.keep[c] = c < static_cast<size_t>(p.real_channels) ? -1 : 0;
    }
    l.pairs = plan_pairs(p, &l);
    return true;
}

void dpu_int8_lanes_row(const DpuInt8Lanes& lanes, const int8_t* src, uint64_t src_surf, int width, const int8_t* ew,
                        uint64_t ew_surf, uint8_t* out, uint64_t out_surf) {
    if (lanes.pairs && int8_pairs_enabled()) {
        dpu_int8_pairs_row(lanes, src, src_surf, width, ew, ew_surf, out, out_surf);
        return;
    }
    const SurfaceRow row = pick(lanes);
    for (int c0 = 0; c0 < lanes.channels; c0 += kAtom) {
        const uint64_t s = static_cast<uint64_t>(c0 / kAtom);
        row(lanes, c0, src + s * src_surf, width, ew != nullptr ? ew + s * ew_surf : nullptr, out + s * out_surf);
    }
}

}  // namespace rknn::emulator
