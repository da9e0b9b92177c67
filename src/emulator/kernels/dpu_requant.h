// The DPU's usual integer configuration in one pass per pixel: the int32
// accumulators of a convolution, a BS stage (ALU add of a bias, then a
// 16-bit multiplier with a right shift, ReLU / ReLUX), a BN stage that only
// clamps, an EW stage that clamps or adds an int8 tensor (optionally through
// the EW converter), and OUT_CVT to int8. dpu_unit.cc builds the plan from
// the registers when a task has this shape and keeps its general int64
// pipeline for every other one.
//
// The arithmetic is done in doubles. Every value the hardware keeps (int32
// after each saturation) times a 16-bit operand stays below 2^48, so those
// steps are exact: sums and products fit in the 53-bit mantissa, scaling by
// 2^-shift is exact, and rounding to the nearest integer with ties to even
// is the hardware's half-even shift. The ReLU / ReLUX / saturation steps that
// follow each other fold into one clamp; in the folded chain a value beyond
// int32 may be rounded on the way, which cannot change its code (see
// fold_code_bounds).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rknn::emulator {

struct DpuInt8Lanes;  // kernels/dpu_int8_lanes.h

// Most lanes per pixel the kernels take (the DPU's channel field is 13 bits).
constexpr int kMaxDpuRequantChannels = 8192;

struct DpuRequantPlan {
    int channels = 0;       // lanes per pixel that the DPU processes
    bool int8_source = false;  // the inputs are int8 codes (a flying-mode cube), not accumulators
    int real_channels = 0;  // lanes from here on are written as 0
    int acc_stride = 0;     // int32 accumulators per pixel (>= channels)

    // BS stage: x = clamp32(x + bias[c]) when bs_alu; x = rne(x * scale[c])
    // when bs_mul (scale = multiplier / 2^shift); then clamp to [bs_lo, bs_hi]
    // (int32 saturation, BS and BN ReLU / ReLUX folded together).
    bool bs_alu = false, bs_mul = false;
    std::vector<double> bias, scale;  // padded to a multiple of 4 lanes
    double bs_lo = -2147483648.0, bs_hi = 2147483647.0;

    // EW stage. kLut: the caller looks the stage-A values up itself
    // (dpu_stage_a_row); dpu_requant_row does not take such plans.
    enum class Ew { kNone, kClamp, kAddInt8, kLut } ew = Ew::kNone;
    bool ew_cvt = false;  // op = rne((op + offset) * ew_scale), ew_scale = scale / 2^shift
    double ew_offset = 0.0, ew_scale = 1.0;
    double ew_lo = -2147483648.0, ew_hi = 2147483647.0;  // after the add's saturation
    int ew_atom_bytes = 16;      // bytes per pixel step in the operand cube
    uint64_t ew_surf_stride = 0; // bytes between its surfaces

    // OUT_CVT: code = clamp(rne(x * out_scale) + out_offset, -128, 127).
    double out_scale = 1.0, out_offset = 0.0;
    int out_atom_bytes = 16;
    uint64_t out_surf_stride = 0;

    // Filled by fold_code_bounds() when no tensor operand sits in the EW
    // stage: every step after the BS ALU is monotone in the value, so the
    // saturations and clamps on the way move to the end as one per-channel
    // clamp of the code, code = clamp(G(h(acc + bias)), code_lo, code_hi)
    // with h the BS multiplier and G OUT_CVT: fewer steps per lane.
    bool folded = false;
    std::vector<double> code_lo, code_hi;  // padded like bias and scale
    // With OUT_CVT scale 1 (out_scale == 1.0) G only adds the offset, and
    // since the bounds are integers, clamp(rne(y) + off, lo, hi) equals
    // rne(clamp(y, lo - off, hi - off)) + off: the SIMD kernels clamp y
    // against these bounds and round once, in the conversion to int32.
    bool unit_out_scale = false;
    std::vector<double> y_lo, y_hi;  // code_lo - out_offset, code_hi - out_offset

    // Filled by fold_code_bounds() in that unit chain when single-precision
    // lanes can take it (AVX-512 only; set_float_windows): the code is then
    // clamp(rne(acc * fscale + fbase), code_lo, code_hi), fbase = bias *
    // scale + out_offset, in floats. Each channel has a window of
    // accumulators within +-2^24 beyond which its code is a bound: floats
    // hold those accumulators exactly, rounding is monotone beyond them, and
    // the sum (below 512 in the window) errs by at most 2^-15. A lane whose
    // sum lies within 2^-14 of a half is computed again in doubles.
    bool float_windows = false;
    std::vector<float> fscale, fbase;

    // Filled by fold_code_bounds() for int8 sources whose whole chain stays
    // within int32 (plan_int8_lanes): the int32 form of the plan, else null.
    std::shared_ptr<const DpuInt8Lanes> int8_lanes;
};

// Sets `folded` and the per-channel code bounds from the other fields (and
// the float windows where they hold).
void fold_code_bounds(DpuRequantPlan* plan);

// Whether fold_code_bounds plans float windows (tests compare both ways).
void set_float_windows(bool enabled);
bool float_windows_enabled();

// One output row: `width` pixels, accumulators back to back (acc_stride per
// pixel), output and EW operand pixels at their atom steps from `out` / `ew`.
void dpu_requant_row(const DpuRequantPlan& plan, const int32_t* acc, int width, const int8_t* ew, uint8_t* out);

// The BS and BN stages only: width x channels int32 values, back to back
// (lanes beyond the real channels included).
void dpu_stage_a_row(const DpuRequantPlan& plan, const int32_t* acc, int width, int32_t* values);

// Which implementation the two use on this CPU ("avx512", "avx2", "generic").
const char* dpu_requant_isa();

namespace detail {
void dpu_requant_row_generic(const DpuRequantPlan& plan, const int32_t* acc, int width, const int8_t* ew, uint8_t* out);
void dpu_stage_a_row_generic(const DpuRequantPlan& plan, const int32_t* acc, int width, int32_t* values);
#if defined(__x86_64__)
void dpu_requant_row_avx2(const DpuRequantPlan& plan, const int32_t* acc, int width, const int8_t* ew, uint8_t* out);
void dpu_stage_a_row_avx2(const DpuRequantPlan& plan, const int32_t* acc, int width, int32_t* values);
void dpu_requant_row_avx512(const DpuRequantPlan& plan, const int32_t* acc, int width, const int8_t* ew, uint8_t* out);
void dpu_stage_a_row_avx512(const DpuRequantPlan& plan, const int32_t* acc, int width, int32_t* values);
#endif
}  // namespace detail

}  // namespace rknn::emulator
