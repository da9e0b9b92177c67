#include "emulator/kernels/dpu_requant.h"

#include "emulator/kernels/dpu_int8_lanes.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace rknn::emulator {

namespace {

using RowFn = void (*)(const DpuRequantPlan&, const int32_t*, int, const int8_t*, uint8_t*);
using StageAFn = void (*)(const DpuRequantPlan&, const int32_t*, int, int32_t*);

struct Choice {
    RowFn row;
    StageAFn stage_a;
    const char* name;
};

Choice choose() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        return {detail::dpu_requant_row_avx512, detail::dpu_stage_a_row_avx512, "avx512"};
    if (__builtin_cpu_supports("avx2")) return {detail::dpu_requant_row_avx2, detail::dpu_stage_a_row_avx2, "avx2"};
#endif
    return {detail::dpu_requant_row_generic, detail::dpu_stage_a_row_generic, "generic"};
}

const Choice& chosen() {
    static const Choice c = choose();
    return c;
}

constexpr double kInt32Min = -2147483648.0, kInt32Max = 2147483647.0;

// Round to nearest, ties to even: the default floating-point rounding mode,
// which the emulator expects programs to run with (as the rest of the runtime).
// On x86-64's baseline, nearbyint is a libm call; adding and taking away 2^52
// rounds the same way inline (below 2^52 the sum's last bit is the units).
inline double rne(double v) {
#if defined(__x86_64__) && !defined(__SSE4_1__)
    constexpr double kTwo52 = 4503599627370496.0;
    const double a = std::fabs(v);
    return a < kTwo52 ? std::copysign((a + kTwo52) - kTwo52, v) : v;
#else
    return std::nearbyint(v);
#endif
}
inline double clamp(double v, double lo, double hi) { return std::min(std::max(v, lo), hi); }

std::atomic<bool> float_windows_on{true};

// Float lanes hold integers below 2^24 exactly, and below 512 one float
// rounding errs by at most 2^-16; the limits leave room for the rounding of
// the base.
constexpr int64_t kFloatExactInt = (int64_t{1} << 24) - 1;
constexpr double kFloatValueLimit = 500.0;

// One channel's window: [*lo, *hi] with y(lo) and y(hi) on or past the far
// sides of the bounds [y_lo, y_hi], so the clamp gives every accumulator
// beyond the window its end's code. y(a) = (a + bias) * scale is exact in
// doubles for int32 a. False when no window lies within the float integers.
bool channel_window(double bias, double scale, double y_lo, double y_hi, int32_t* lo, int32_t* hi) {
    const auto y = [&](int64_t a) { return (static_cast<double>(a) + bias) * scale; };
    if (scale == 0.0) {
        *lo = *hi = 0;
        return true;
    }
    // Nonincreasing when scale < 0: the low end then reaches y_hi.
    const double at_lo = scale > 0 ? y_lo : y_hi, at_hi = scale > 0 ? y_hi : y_lo;
    const auto past_low = [&](int64_t a) { return scale > 0 ? y(a) <= at_lo : y(a) >= at_lo; };
    const auto past_high = [&](int64_t a) { return scale > 0 ? y(a) >= at_hi : y(a) <= at_hi; };
    const auto to_int32 = [](double v) { return static_cast<int64_t>(clamp(v, kInt32Min, kInt32Max)); };
    int64_t a = to_int32(std::floor(at_lo / scale - bias)), b = to_int32(std::ceil(at_hi / scale - bias));
    // The estimates may be a step off; a few steps decide. Beyond the int32
    // range the accumulators cannot go anyway.
    for (int i = 0; i < 4 && a > INT32_MIN && !past_low(a); ++i) --a;
    for (int i = 0; i < 4 && b < INT32_MAX && !past_high(b); ++i) ++b;
    if ((a > INT32_MIN && !past_low(a)) || (b < INT32_MAX && !past_high(b))) return false;
    if (a < -kFloatExactInt || b > kFloatExactInt || a > b) return false;
    *lo = static_cast<int32_t>(a);
    *hi = static_cast<int32_t>(b);
    return true;
}

// The float form of a unit-scale folded plan, when every channel has a
// window, a scale that is a float (a 16-bit multiplier times a power of two
// is) and codes of moderate size at the window's ends and at 0.
void plan_float_windows(DpuRequantPlan* p) {
    p->float_windows = false;
    p->fscale.clear();
    p->fbase.clear();
    // Only the AVX-512 kernel reads them.
    if (!float_windows_on.load(std::memory_order_relaxed) || !p->folded || !p->unit_out_scale ||
        std::strcmp(chosen().name, "avx512") != 0)
        return;
    const size_t padded = static_cast<size_t>((p->channels + 3) & ~3);
    p->fscale.assign(padded, 0.0f);
    p->fbase.assign(padded, 0.0f);
    for (size_t c = 0; c < static_cast<size_t>(p->real_channels); ++c) {
        const double bias = p->bs_alu ? p->bias[c] : 0.0, scale = p->bs_mul ? p->scale[c] : 1.0;
        if (static_cast<double>(static_cast<float>(scale)) != scale) return;
        int32_t lo = 0, hi = 0;
        if (!channel_window(bias, scale, p->y_lo[c], p->y_hi[c], &lo, &hi)) return;
        const double base = bias * scale + p->out_offset;
        const double ends[] = {base, lo * scale + base, hi * scale + base};
        for (double v : ends) {
            if (!(std::fabs(v) < kFloatValueLimit)) return;
        }
        p->fscale[c] = static_cast<float>(scale);
        p->fbase[c] = static_cast<float>(base);
    }
    p->float_windows = true;
}

}  // namespace

void set_float_windows(bool enabled) { float_windows_on.store(enabled, std::memory_order_relaxed); }

bool float_windows_enabled() { return float_windows_on.load(std::memory_order_relaxed); }

// Why the fold is exact: a composition of clamps and nondecreasing (or
// nonincreasing) maps equals the maps followed by one clamp whose bounds are
// the images of the first clamp's bounds. Between the bounds every value is
// an int32, where each step is exact in doubles; beyond them the computed
// maps stay monotone (rounding is monotone), so they land past the image of
// the bound and the final clamp gives the bound's code, as the hardware does.
void fold_code_bounds(DpuRequantPlan* p) {
    auto lanes = std::make_shared<DpuInt8Lanes>();
    p->int8_lanes = plan_int8_lanes(*p, lanes.get()) ? std::move(lanes) : nullptr;
    p->folded = p->ew == DpuRequantPlan::Ew::kNone || p->ew == DpuRequantPlan::Ew::kClamp;
    p->code_lo.clear();
    p->code_hi.clear();
    p->y_lo.clear();
    p->y_hi.clear();
    p->unit_out_scale = false;
    if (!p->folded) return;
    const size_t padded = static_cast<size_t>((p->channels + 3) & ~3);
    p->code_lo.resize(padded, 0.0);
    p->code_hi.resize(padded, 0.0);
    for (size_t c = 0; c < static_cast<size_t>(p->channels); ++c) {
        // The int32 range the BS ALU saturates to (or the accumulator's own),
        // through the multiplier.
        const auto h = [&](double x) { return p->bs_mul ? rne(x * p->scale[c]) : x; };
        double lo = std::min(h(kInt32Min), h(kInt32Max)), hi = std::max(h(kInt32Min), h(kInt32Max));
        lo = clamp(lo, p->bs_lo, p->bs_hi);
        hi = clamp(hi, p->bs_lo, p->bs_hi);
        if (p->ew == DpuRequantPlan::Ew::kClamp) {
            lo = clamp(lo, p->ew_lo, p->ew_hi);
            hi = clamp(hi, p->ew_lo, p->ew_hi);
        }
        const double g_lo = rne(lo * p->out_scale) + p->out_offset, g_hi = rne(hi * p->out_scale) + p->out_offset;
        p->code_lo[c] = clamp(std::min(g_lo, g_hi), -128.0, 127.0);
        p->code_hi[c] = clamp(std::max(g_lo, g_hi), -128.0, 127.0);
    }
    p->unit_out_scale = p->out_scale == 1.0;
    if (p->unit_out_scale) {
        p->y_lo.resize(padded, 0.0);
        p->y_hi.resize(padded, 0.0);
        for (size_t c = 0; c < static_cast<size_t>(p->channels); ++c) {
            p->y_lo[c] = p->code_lo[c] - p->out_offset;
            p->y_hi[c] = p->code_hi[c] - p->out_offset;
        }
    }
    plan_float_windows(p);
}

namespace detail {

namespace {

double stage_a(const DpuRequantPlan& p, int32_t acc, size_t c) {
    double v = acc;
    if (p.bs_alu) v = clamp(v + p.bias[c], kInt32Min, kInt32Max);
    if (p.bs_mul) v = rne(v * p.scale[c]);
    return clamp(v, p.bs_lo, p.bs_hi);
}

}  // namespace

void dpu_stage_a_row_generic(const DpuRequantPlan& p, const int32_t* acc, int width, int32_t* values) {
    for (int x = 0; x < width; ++x, acc += p.acc_stride, values += p.channels) {
        for (int c = 0; c < p.channels; ++c) values[c] = static_cast<int32_t>(stage_a(p, acc[c], static_cast<size_t>(c)));
    }
}

void dpu_requant_row_generic(const DpuRequantPlan& p, const int32_t* acc, int width, const int8_t* ew, uint8_t* out) {
    const int n = p.channels;
    const int out_c2 = p.out_atom_bytes, ew_c2 = p.ew_atom_bytes;
    thread_local std::vector<int8_t> codes;
    codes.assign(static_cast<size_t>(n), 0);
    for (int x = 0; x < width; ++x, acc += p.acc_stride) {
        for (int c = 0; c < p.real_channels; ++c) {
            const auto uc = static_cast<size_t>(c);
            if (p.folded) {
                double v = acc[c];
                if (p.bs_alu) v += p.bias[uc];
                if (p.bs_mul) v = rne(v * p.scale[uc]);
                codes[uc] = static_cast<int8_t>(clamp(rne(v * p.out_scale) + p.out_offset, p.code_lo[uc], p.code_hi[uc]));
                continue;
            }
            double v = stage_a(p, acc[c], uc);
            if (p.ew == DpuRequantPlan::Ew::kAddInt8) {
                double op = ew[static_cast<uint64_t>(c / ew_c2) * p.ew_surf_stride + static_cast<uint64_t>(c % ew_c2)];
                if (p.ew_cvt) op = rne((op + p.ew_offset) * p.ew_scale);
                v = clamp(v + op, p.ew_lo, p.ew_hi);
            } else if (p.ew == DpuRequantPlan::Ew::kClamp) {
                v = clamp(v, p.ew_lo, p.ew_hi);
            }
            codes[static_cast<size_t>(c)] = static_cast<int8_t>(clamp(rne(v * p.out_scale) + p.out_offset, -128.0, 127.0));
        }
        uint8_t* atom = out + static_cast<size_t>(x) * static_cast<size_t>(out_c2);
        for (int c0 = 0; c0 < n; c0 += out_c2, atom += p.out_surf_stride)
            std::memcpy(atom, codes.data() + c0, static_cast<size_t>(std::min(out_c2, n - c0)));
        if (ew != nullptr) ew += p.ew_atom_bytes;
    }
}

}  // namespace detail

void dpu_requant_row(const DpuRequantPlan& plan, const int32_t* acc, int width, const int8_t* ew, uint8_t* out) {
    chosen().row(plan, acc, width, ew, out);
}

void dpu_stage_a_row(const DpuRequantPlan& plan, const int32_t* acc, int width, int32_t* values) {
    chosen().stage_a(plan, acc, width, values);
}

const char* dpu_requant_isa() { return chosen().name; }

}  // namespace rknn::emulator
