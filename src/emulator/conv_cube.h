// The int8 convolution datapaths that read the input cube as stored (see
// int8_input_as_stored): windows are addressed in the NC1HWC2 cube itself, or
// in a copy of it with padding atoms around each surface when the task pads.
// Direct convolutions go through the GEMM with addressed rows (no image, no
// im2col); depthwise ones work a surface at a time. Both give what the
// general paths in conv_unit.cc give, which build a padded image first.
#pragma once

#include <cstdint>
#include <vector>

#include "emulator/conv_desc.h"
#include "emulator/conv_unit.h"

namespace rknn::emulator {

// Whether the task's input can be read this way: int8_input_as_stored, atoms
// of 8 or 16 bytes, and every window offset within 32 bits.
bool cube_offsets_fit(const ConvDesc& d);

// A direct task's accumulators, [pixel][channel], from weights packed by
// groups of 4 k values (those zero in every kernel may be left out). With a
// sink, each band of rows goes to it once done (and out->rows_delivered is set).
void direct_int8_from_cube(const ConvDesc& d, const uint8_t* in, const DirectWeightsS8& weights, ConvScratch* s,
                           ConvOutput* out, ConvRowSink* sink);

// Depthwise weights unpacked to [tap][channel], widened to the surfaces of
// `channels` outputs: [surface][tap][lane], zero beyond in_c; and in the
// tap-group kernel's form where it runs.
void widen_depthwise_weights(const ConvDesc& d, const int8_t* weights, int channels, DepthwiseWeightsS8* out);

// A depthwise task's accumulators from its widened weights. On CPUs with
// the tap-group kernel (kernels/depthwise_s8.h) 16-lane surfaces go through
// it, from padded rows built per band; otherwise a tap at a time.
void depthwise_int8_from_cube(const ConvDesc& d, const uint8_t* in, const DepthwiseWeightsS8& weights, ConvScratch* s,
                              ConvOutput* out, ConvRowSink* sink);

// Turns the tap-group depthwise kernel off (tests compare both forms).
void set_depthwise_tap_groups(bool enabled);

// Channel-packed images (NONALIGN_DMA: in_c_real values per pixel, rows at
// LINE_STRIDE). The GEMM reads windows from a padded copy of the image, one
// kernel row of kw * in_c_real bytes (rounded up to 4) at a time, so the k
// order is [ky][kx * in_c_real + c] with zeros where a row is rounded up.

// Whether the copy's window offsets fit 32 bits.
bool packed_image_fits(const ConvDesc& d);

// Packs [kernel][(ky kw + kx) in_c + c] weights in that order. False (nothing
// packed) when a weight of a channel beyond in_c_real is not zero: those
// channels read the converter's value of 0 (or the pad value) on the
// hardware, which the copy leaves out.
bool pack_packed_image_weights(const ConvDesc& d, const std::vector<int8_t>& weights, int kernels,
                               PackedWeightsS8* out);

// A direct task's accumulators from a channel-packed image, with weights from
// pack_packed_image_weights; bands of rows go to the sink as for cubes.
void direct_int8_from_packed_image(const ConvDesc& d, const uint8_t* in, const PackedWeightsS8& weights,
                                   ConvScratch* s, ConvOutput* out, ConvRowSink* sink);

}  // namespace rknn::emulator
