// The general API's hot conversions, made table-driven: a uint8 pixel goes
// through mean/std and quantisation to one int8 code per channel, and an int8
// code dequantises to one float, so both are 256-entry tables built with the
// generic conversions themselves (io_convert.h): the fast paths give the same
// bytes by construction. Pixels go straight into the NC1HWC2 input cube, and
// output cubes straight into the client's float NCHW buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::runtime {

// [channel][pixel value] -> int8 code, for uint8 pixels fed to an int8 input.
StatusOr<std::vector<int8_t>> make_pixel_codes(const graph::Tensor& declared, const graph::InputPreprocess* pre);
// [code + 128] -> float, for an int8 output dequantised per tensor.
StatusOr<std::vector<float>> make_dequant_table(const graph::Tensor& declared);

// uint8 pixels (NHWC or NCHW) of [1, C, H, W] -> the int8 cube's lanes
// (padding lanes are left as they are: zero from creation).
void pixels_to_cube(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, uint8_t* cube);
// The same pixels -> the int8 NCHW host tensor.
void pixels_to_nchw(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, int8_t* nchw);
// An int8 cube -> float NCHW through the table.
void cube_to_float_nchw(const uint8_t* cube, int c, int h, int w, const float* table, float* nchw);

}  // namespace rknn::runtime
