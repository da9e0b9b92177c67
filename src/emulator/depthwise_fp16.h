// fp16 depthwise convolutions read from the input cube a surface (8
// channels) at a time: the rows a band of outputs needs are widened to fp32
// with their padding, then each output sums its taps in window order in
// registers. The general path in conv_unit.cc builds a padded fp32 image of
// the whole input first; both give the same floats (products of fp16 values
// are exact in fp32, so fused multiply-adds round as separate ones would).
#pragma once

#include <cstdint>

#include "emulator/conv_desc.h"
#include "emulator/conv_unit.h"

namespace rknn::emulator {

// Whether the task's input is an fp16 NC1HWC2 cube (8 channels per 16-byte
// atom) this path reads: not a channel-packed image.
bool depthwise_fp16_cube_fits(const ConvDesc& d);

// The task's accumulators, [pixel][channel] for channels [0, out->channels),
// from weights unpacked to [tap][in_c]. With a sink and enough rows, each
// band of rows goes to it once done (out->rows_delivered is then set).
void depthwise_fp16_from_cube(const ConvDesc& d, const uint8_t* in, const float* weights, ConvOutput* out,
                              ConvRowSink* sink);

}  // namespace rknn::emulator
