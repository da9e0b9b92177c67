// The general API's hot conversions. A uint8 pixel goes through mean/std and
// quantisation to one int8 code per channel: a 256-entry table per channel,
// built with the generic conversion itself (io_convert.h), so the fast path
// gives the same bytes by construction. An int8 code dequantises with an
// affine rule checked against the generic conversion for every code. Pixels
// go straight into the NC1HWC2 input cube, output cubes straight into the
// client's float NCHW buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::runtime {

// [channel][pixel value] -> int8 code, for uint8 pixels fed to an int8 input.
StatusOr<std::vector<int8_t>> make_pixel_codes(const graph::Tensor& declared, const graph::InputPreprocess* pre);
// How an int8 output dequantised per tensor becomes float: (q - zp) * scale
// in float arithmetic, which the generic conversion's double arithmetic
// equals exactly (the double product is exact, so both round once); checked
// against that conversion for all 256 codes when the rule is made.
struct Dequant {
    int32_t zero_point = 0;
    float scale = 1.0f;
};
StatusOr<Dequant> make_dequant(const graph::Tensor& declared);

// uint8 pixels (NHWC or NCHW) of [1, C, H, W] -> the int8 cube's lanes
// (padding lanes are left as they are: zero from creation).
void pixels_to_cube(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, uint8_t* cube);
// The same tables as integer arithmetic, per channel (one shift for all),
// found by solving the 256 inequalities each table sets, so it equals the
// table for every pixel value by construction. Vectorises where table
// lookups do not. Two forms:
//   narrow: code = sat8(sat16(((p * mult) >> 8) + offset) >> shift), with
//           0 <= mult <= 32896 and 16-bit offsets: 16-bit SIMD lanes;
//   wide:   code = sat8((p * mult + offset) >> shift) in int32.
struct PixelRule {
    bool narrow = false;
    int shift = 0;
    std::vector<int32_t> mult, offset;  // per channel
};
// kUnimplemented when some channel's table is not such a rule.
StatusOr<PixelRule> fit_pixel_rule(const std::vector<int8_t>& codes, int channels);

// The same pixels -> a channel-packed NHWC image with rows `row_pixels`
// apart (the pixels past the width are left as they are: zero); `rule`, when
// given, replaces the tables for NHWC pixels.
void pixels_to_packed(const uint8_t* pixels, bool nhwc, int c, int h, int w, int row_pixels, const int8_t* codes,
                      const PixelRule* rule, uint8_t* image);
// The same pixels -> the int8 NCHW host tensor.
void pixels_to_nchw(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, int8_t* nchw);
// An int8 cube -> float NCHW with the affine rule, surface by surface.
void cube_to_float_nchw(const uint8_t* cube, int c, int h, int w, const Dequant& rule, float* nchw);

}  // namespace rknn::runtime
