// The fused DPU pass for tasks whose source is an int8 cube and whose EW
// stage adds another int8 cube (standalone Adds in flying mode), in int32
// lanes. (Chains without a tensor operand fold into one clamp, which the
// double lanes of dpu_requant_row run faster.) With inputs of 8 bits, the plan's bias, multipliers and
// bounds usually keep every step of the chain well inside int32, and then
// int32 arithmetic is exact: each multiply by m / 2^s is the product in
// int32 followed by a half-to-even rounding shift, the hardware's rounding.
// plan_int8_lanes checks the bounds channel by channel (from the input
// range [-128, 127] through every step) and fills the int32 form only when
// they all hold; otherwise the task keeps the double lanes of
// dpu_requant_row. The kernel reads the source, the EW operand and writes
// the output straight in their 16-channel atoms: twice the lanes of the
// double form and no widening pass.
#pragma once

#include <cstdint>
#include <vector>

#include "emulator/kernels/dpu_requant.h"

namespace rknn::emulator {

struct DpuInt8Lanes {
    int channels = 0;          // a multiple of 16
    bool bs_alu = false, bs_mul = false;
    std::vector<int32_t> bias, mul;  // per channel
    std::vector<int8_t> keep;        // per channel: -1 for real channels, 0 beyond (written as 0)
    int bs_shift = 0;
    int32_t bs_lo = 0, bs_hi = 0;
    DpuRequantPlan::Ew ew = DpuRequantPlan::Ew::kNone;  // kAddInt8 as planned (the kernel also runs kNone / kClamp)
    bool ew_cvt = false;
    int32_t ew_offset = 0, ew_mul = 1;
    int ew_shift = 0;
    int32_t ew_lo = 0, ew_hi = 0;
    int32_t out_mul = 1;
    int out_shift = 0;
    int32_t out_offset = 0;

    // The exact form (kernels/dpu_int8_pairs.h), set when the BS and EW
    // multipliers are integers of 16 bits and the BS clamp cannot bind:
    // then the sum before the EW clamp is src x bs_mul + op x ew_mul + base,
    // with no rounding on the way, one pairwise multiply-add per lane.
    bool pairs = false;
    std::vector<int16_t> pair_mul;   // two per channel: the BS multiplier, the EW multiplier
    std::vector<int32_t> pair_base;  // per channel: bias x BS multiplier + EW offset x EW multiplier
    bool pair_clamp = false;         // whether [ew_lo, ew_hi] can bind over the sums
};

// The int32 form of `plan` for int8 inputs, when the plan suits it (an EW
// tensor add, 16-byte atoms, channels a multiple of 16) and every step stays
// in int32.
bool plan_int8_lanes(const DpuRequantPlan& plan, DpuInt8Lanes* lanes);

// One output row: `width` pixels of the int8 source row at `src` (surfaces
// `src_surf` bytes apart), of the EW operand row at `ew` (when the plan adds
// one), written to `out`; 16-byte atoms throughout.
void dpu_int8_lanes_row(const DpuInt8Lanes& lanes, const int8_t* src, uint64_t src_surf, int width, const int8_t* ew,
                        uint64_t ew_surf, uint8_t* out, uint64_t out_surf);

}  // namespace rknn::emulator
