// What follows the int32 accumulation of an int8 convolution or matrix
// product, per output element of channel c (the DPU pipeline, hw-facts 3.8):
//
//   acc  = sum (x - zx) * w  + bias[c]                      int32
//   v    = round_shift(acc * M[c], S)                       requantise to the output scale
//   v   += round_shift((r - zr) * Mr, Sr)                   optional fused residual add
//   v    = activation(v)                                    ReLU / clip / leaky, in output units,
//                                                           or the LUT stage (lut_stage.h)
//   y    = saturate_int8(v + zy)
//
// M[c]/2^S ~= sx * sw[c] / sy with one shared S; Mr/2^Sr ~= sr / sy. Clip
// bounds are round(min / sy), round(max / sy); a leaky slope alpha is a 16-bit
// multiplier with its own shift. With a LUT activation, v is kept in the LUT's
// input units instead of sy (M and Mr target the LUT scale), which keeps the
// pre-activation values at 16-bit precision: no int8 rounding before the
// non-linearity. Everything rounds half to even (requant.h).
#pragma once

#include <vector>

#include "base/status.h"
#include "cpu/fused_ops.h"
#include "cpu/int8/lut_stage.h"
#include "cpu/int8/requant.h"

namespace rknn::cpu::int8 {

struct Int8Activation {
    // kPRelu: a fused PRelu, one slope per output channel (the leaky rule per channel).
    enum class Kind { kNone, kRelu, kClip, kLeaky, kPRelu } kind = Kind::kNone;
    int64_t lo = 0;   // kClip bounds, output units (zero point not added)
    int64_t hi = 0;
    Requant slope;    // kLeaky: one multiplier; kPRelu: one per channel, a shared shift
};

struct Epilogue {
    Requant requant;               // per output channel
    std::vector<int32_t> bias;     // per output channel; empty when none
    bool has_residual = false;
    Requant residual_requant;
    int32_t residual_zp = 0;
    Int8Activation activation;
    bool has_lut = false;
    LutStage lut;
    int32_t out_zp = 0;

    int8_t finish(size_t channel, int64_t acc, int8_t residual) const;
};

// Builds the epilogue from tensor quantisation: `in`, `weights` (per-channel
// scales along the output channel axis or one scale), optional `bias` (int32),
// optional `residual`, and the output tensor. kUnimplemented when the tensors
// are not in the int8 form the NPU takes (symmetric int8 weights, int32 bias),
// so the caller can fall back to float.
StatusOr<Epilogue> make_epilogue(const HostTensor& in, const HostTensor& weights, int64_t out_channels,
                                 const HostTensor* bias, const HostTensor* residual, const HostTensor& out,
                                 const Fusion& fusion);

// The activation part alone (standalone int8 activation ops use it too).
StatusOr<Int8Activation> make_activation(const kernels::Activation& act, float out_scale);
int64_t apply_activation(const Int8Activation& act, int64_t v);
// The same for output channel `channel` (what kPRelu needs).
int64_t apply_activation(const Int8Activation& act, size_t channel, int64_t v);

// Quantisation checks shared by the int8 kernels.
Status require_int8(const HostTensor& t, const char* what);

}  // namespace rknn::cpu::int8
