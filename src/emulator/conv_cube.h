// The int8 convolution datapaths that read the input cube as stored (see
// int8_input_as_stored): windows are addressed in the NC1HWC2 cube itself, or
// in a copy of it with padding atoms around each surface when the task pads.
// Direct convolutions go through the GEMM with addressed rows (no image, no
// im2col); depthwise ones work a surface at a time. Both give what the
// general paths in conv_unit.cc give, which build a padded image first.
#pragma once

#include <cstdint>

#include "emulator/conv_desc.h"
#include "emulator/conv_unit.h"

namespace rknn::emulator {

// Whether the task's input can be read this way: int8_input_as_stored, atoms
// of 8 or 16 bytes, and every window offset within 32 bits.
bool cube_offsets_fit(const ConvDesc& d);

// A direct task's accumulators, [pixel][channel], from packed weights that
// keep every reduction column (no gather).
void direct_int8_from_cube(const ConvDesc& d, const uint8_t* in, const PackedWeightsS8& weights, ConvScratch* s,
                           ConvOutput* out);

// A depthwise task's accumulators from weights unpacked to [tap][channel].
void depthwise_int8_from_cube(const ConvDesc& d, const uint8_t* in, const int8_t* weights, ConvScratch* s,
                              ConvOutput* out);

}  // namespace rknn::emulator
