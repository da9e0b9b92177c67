// The DPU's lookup-table stage, used for non-linear activations fused into a
// convolution (sigmoid, tanh, SiLU, ...). Model of the hardware LUT (hw-facts
// 4.1, golden notes-allbilly-rk3588): two tables of 513 signed 16-bit entries
// covering an index domain of [-16384, 16384] in steps of 32 (index select 5),
// read with linear interpolation between neighbouring entries. Here the two
// tables are one array of 1025 entries sharing the middle one.
//
//   v  = the stage input, in units of `in_scale`, clamped to [-16384, 16384]
//   i  = (v + 16384) >> 5,  f = (v + 16384) & 31
//   t  = T[i] + round_shift((T[i+1] - T[i]) * f, 5)
//   out = round_shift(t * M, S)          M/2^S ~= table_scale / out_scale
//
// T[i] = round(f(x_i) / table_scale) with x_i = (32 i - 16384) * in_scale, and
// table_scale chosen so the largest |f| uses the whole int16 range.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/int8/requant.h"
#include "cpu/kernels/scalar_math.h"

namespace rknn::cpu::int8 {

struct LutStage {
    static constexpr int kIndexShift = 5;
    static constexpr int32_t kDomain = 16384;
    static constexpr int kEntries = 2 * (kDomain >> kIndexShift) + 1;

    double in_scale = 1.0;     // real value of one input unit
    double table_scale = 1.0;  // real value of one table unit
    std::vector<int16_t> table;
    Requant out;               // table units -> output units

    // The activation of v (input units), in output units (zero point not added).
    int64_t apply(int64_t v) const;
};

// A table for `act` over the input range [lo, hi] (real values), writing
// outputs of scale `out_scale`.
LutStage make_lut_stage(const kernels::Activation& act, float lo, float hi, float out_scale);

// Activations that need a table (everything but ReLU, clip and leaky ReLU).
bool needs_lut(graph::OpType type);

}  // namespace rknn::cpu::int8
