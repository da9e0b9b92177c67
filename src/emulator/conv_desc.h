// One convolution task as the CNA and CORE registers describe it, decoded
// once by conv_unit.cc and read by the datapaths (conv_unit.cc, conv_cube.cc).
#pragma once

#include <cstdint>

#include "emulator/cube.h"
#include "emulator/fixed_point.h"

namespace rknn::emulator {

constexpr int kWeightOcBlockInt8 = 32;  // kernels per int8 weight group (RK3588)
constexpr uint64_t kParallelMacs = uint64_t{1} << 19;  // below this a task runs on one host thread

struct ConvDesc {
    bool fp16 = false;
    bool depthwise = false;
    bool channel_packed = false;  // NONALIGN_DMA (RK356x: ARGB_IN 10): in_c_real channels per pixel, no atoms
    int esize = 1;
    int atom_bytes = kAtomBytes;           // 8 on RK356x
    int weight_oc_block = kWeightOcBlockInt8;  // kernels per int8 weight group (16 on RK356x)
    int in_w = 0, in_h = 0, in_c = 0, in_c_real = 0;
    int out_w = 0, out_h = 0, out_c = 0;
    int kw = 0, kh = 0, kernels = 0;
    int stride_x = 1, stride_y = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    uint32_t pad_value = 0;
    uint64_t input_base = 0;
    uint64_t row_stride = 0;
    uint64_t surf_stride = 0;
    uint64_t weight_base = 0;
    uint64_t weight_bytes = 0;
    int clip_truncate = 0;
    Rounding truncate_rounding = Rounding::kHalfEven;
    // Input converter, per lane group (c & 3).
    bool cvt_bypass = true;
    bool cvt_identity = true;  // bypassed, or offset 0, scale 1, no truncation on every lane
    bool data_signed = true;
    int32_t cvt_offset[4] = {};
    int32_t cvt_scale[4] = {};
    int cvt_truncate[4] = {};
};

// The value padded taps read, per input channel (int8 path). PAD_VALUE holds
// a 16-bit pattern: even channels take its low byte, odd channels its high
// byte (Mesa writes 0xffff8080 / 0x0b0b to get one value in both). In the
// depthwise capture (golden/gregordinary-rocket-userspace) channels 32..63
// of each 64-channel group took the low byte in every lane; we follow it.
int8_t int8_pad_for_channel(const ConvDesc& d, int c);

// An int8 input byte of channel c through the CNA input converter
// ((x + offset) * scale >> truncate per lane group c & 3, saturated).
int8_t convert_input(const ConvDesc& d, int c, uint8_t raw);

// Whether the int8 input reaches the MAC array as stored: no input converter
// and an NC1HWC2 cube (not a channel-packed image), whole atoms per surface.
inline bool int8_input_as_stored(const ConvDesc& d) {
    return !d.fp16 && d.cvt_identity && !d.channel_packed && d.atom_bytes % 4 == 0 && d.in_c % d.atom_bytes == 0;
}

}  // namespace rknn::emulator
