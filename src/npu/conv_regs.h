// One convolution task in registers (CNA + CORE + DPU, op-enable 0x0d, 0x1d
// with the DPU's RDMA): the recipe of spec/hw-facts.md 3.6 with the
// hardware's semantics where Mesa departs from them (spec/hw-facts-check.md),
// and the DMA strides the vendor captures show (docs/emulator.md).
//
// A task computes a tile of the layer: a band of output rows and a range of
// output kernels. Its input band carries the halo the kernel needs; the
// surface strides stay those of the whole cubes, so tiles write straight into
// the layer's output.
#pragma once

#include <cstdint>
#include <vector>

#include "npu/dpu_regs.h"
#include "npu/task_emitter.h"

namespace rknn::npu {

struct ConvGeometry {
    int in_c = 0, in_h = 0, in_w = 0;
    int out_c = 0;
    int kh = 1, kw = 1;
    int stride = 1;      // both directions unless stride_h / stride_w are set
    int stride_h = 0, stride_w = 0;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool depthwise = false;
    bool fp16 = false;
    // > 0: the input is not a cube but a channel-packed NHWC image (1, 3 or 4
    // channels, direct convolutions only) whose rows are this many pixels
    // apart, read with NONALIGN_DMA as the vendor reads its native inputs.
    // On RK356x: a 3-channel uint8 image read in ARGB mode (native_layout.h).
    int packed_row_pixels = 0;

    int sy() const { return stride_h > 0 ? stride_h : stride; }
    int sx() const { return stride_w > 0 ? stride_w : stride; }
    int out_h() const { return (in_h + pad_top + pad_bottom - kh) / sy() + 1; }
    int out_w() const { return (in_w + pad_left + pad_right - kw) / sx() + 1; }
};

struct ConvAddresses {
    BufferRef input, weights, records, output;
};

// The slice of the layer one task computes, and how it uses the on-chip buffer.
struct ConvTile {
    int out_row = 0, out_rows = 0;   // output rows [out_row, out_row + out_rows); 0 rows: all
    int kernel = 0, kernels = 0;     // output channels [kernel, kernel + kernels); 0: all
    int data_banks = 7, weight_banks = 5;
    bool reuse_weights = false;      // the previous task on this core loaded the same weights
    bool load_lut = true;            // false: an earlier task on this core loaded the same LUT
    int core = -1;                   // >= 0: name the core in CNA/CORE S_POINTER, as the vendor does
};

// The input rows a tile reads: [first, first + count), and the tile's own top padding.
struct InputBand {
    int first = 0, count = 0, pad_top = 0;
};
InputBand input_band(const ConvGeometry& g, int out_row, int out_rows);

// Weight bytes one kernel takes (kh * kw * aligned input channels * element size).
uint32_t weight_bytes_per_kernel(const ConvGeometry& g);

// One int8 convolution task with its epilogue; `input_zp` pads.
void emit_conv_int8(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, const EpilogueRegs& e,
                    int8_t input_zp, const ConvTile& tile = {});
// RK3566/RK3568 (conv_regs_rk356x.cc): one int8 task in that core's register
// dialect. Direct tiles cover every kernel; a depthwise tile covers one
// 32-channel group ([kernel, kernel + kernels), kernel a multiple of 32).
// Buffers: cubes from pack_int8_cube_rk356x (a depthwise output holds
// align(C, 32) channels: each group task writes 32), weights from
// pack_conv_weights_int8_rk356x / pack_dw_weights_int8_rk356x, records from
// bs_records_rk356x.
// `tile` comes from plan_conv (its banks are the 8-bank CBUF's; ConvTile's
// defaults are RK3588's).
void emit_conv_int8_rk356x(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, const EpilogueRegs& e,
                           int8_t input_zp, const ConvTile& tile);
// The channels the CNA reads for `channels` input channels (DATAIN_CHANNEL:
// sixteens; a depthwise group at most 32; an ARGB image 8) and the CBUF
// entries one input row of them fills (32-byte entries).
int rk356x_declared_channels(const ConvGeometry& g, int channels);
uint32_t rk356x_data_entries(const ConvGeometry& g, int declared_channels);

// What follows an fp16 convolution in the DPU's float pipeline: a
// per-channel bias (fp32 in the ALU slot of 8-byte records at `a.records`),
// an optional residual add and one activation, all in fp32 before the single
// rounding to fp16.
struct FloatEpilogue {
    bool bias = false;
    // kHardSigmoid: clip(alpha * y + beta, 0, 1) in BS, as (y + beta / alpha)
    // * alpha with the shift folded into the bias records and alpha rounded
    // to fp16 by the multiplier.
    enum class Act { kNone, kRelu, kClip, kLeaky, kHardSigmoid } act = Act::kNone;
    float lo = 0.0f, hi = 0.0f;  // kClip
    float alpha = 0.0f;          // kLeaky, kHardSigmoid (rounded to fp16 by the multiplier)
    // post_scale * act(y) + post_bias in BN (MUL, an fp16 operand, then ALU),
    // after kNone, kRelu or kHardSigmoid.
    bool post_affine = false;
    float post_scale = 1.0f, post_bias = 0.0f;
    // An fp16 tensor added in the EW stage (before a ReLU, the only
    // activation allowed after it); the address of the whole output-shaped cube.
    bool residual = false;
    BufferRef residual_addr;
};
// Per-channel fp32 bias records (8 bytes each, the ALU operand in the first
// four); `channels` >= bias.size(), the rest zero.
std::vector<uint8_t> float_bias_records(const std::vector<float>& bias, int channels);

// One fp16 convolution task writing fp16 (or fp32 with `fp32_out`).
void emit_conv_fp16(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, bool fp32_out,
                    const ConvTile& tile = {}, const FloatEpilogue& epilogue = {});

}  // namespace rknn::npu
