// The NPU's native memory layouts (spec/hw-facts.md 3.7): feature cubes in
// NC1HWC2 (C2 channels of one pixel per 16-byte atom, surfaces of H x W atoms)
// and convolution weights in the kernel blocks the CNA reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rknn::npu {

int align_up(int v, int a);
// Row pitch in pixels of a channel-packed NHWC image (1, 3 or 4 channels, the
// vendor's native input form): the width aligned to one atom's channels (16
// int8, 8 fp16), which fits the guide's "width aligned to 16" for RK3588 and
// the 88-pixel rows of an 85-wide fp16 image in the phhusson dumps.
int packed_row_pixels(int width, bool fp16);
// NCHW (N = 1) <-> such an image with rows `row_pixels` apart (the pixels
// past the width zero), for elements of `elem_bytes` (1 int8, 2 fp16).
std::vector<uint8_t> pack_nhwc_image(const void* nchw, int c, int h, int w, int row_pixels, size_t elem_bytes);
std::vector<uint8_t> unpack_nhwc_image(const uint8_t* image, int c, int h, int w, int row_pixels, size_t elem_bytes);
// NCHW (N = 1) int8 -> NC1HWC2 bytes with C2 = 16; `channels` >= C lanes
// (extra lanes filled with `fill`).
std::vector<uint8_t> pack_int8_cube(const int8_t* nchw, int c, int h, int w, int channels, int8_t fill);
std::vector<int8_t> unpack_int8_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride);
// fp16 cubes (C2 = 8) and fp32 cubes (C2 = 4), from/to float NCHW.
std::vector<uint8_t> pack_fp16_cube(const float* nchw, int c, int h, int w, int channels);
std::vector<float> unpack_fp16_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride);
std::vector<float> unpack_fp32_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride);

// Weights [oc][ic][kh][kw] in the hardware layout (hw-facts 3.7): blocks of
// `oc_block` kernels (32 int8, 16 fp16) by 32 channels, [ky][kx][kernel][channel];
// ic padded with zeros to `ic_aligned`.
std::vector<int8_t> pack_conv_weights_int8(const int8_t* w, int oc, int ic, int kh, int kw, int ic_aligned);
std::vector<uint16_t> pack_conv_weights_fp16(const float* w, int oc, int ic, int kh, int kw, int ic_aligned);
// Depthwise weights [c][1][kh][kw]: groups of 64 bytes of channels (64 int8,
// 32 fp16), [ky][kx][channel] inside a group.
std::vector<int8_t> pack_dw_weights_int8(const int8_t* w, int c, int kh, int kw, int c_aligned);
std::vector<uint16_t> pack_dw_weights_fp16(const float* w, int c, int kh, int kw, int c_aligned);

// RK3566/RK3568 int8 forms (docs/rk3568.md 2-3): 8-channel atoms of 8 bytes;
// a surface holds align(H x W, 4) pixels (one for a single pixel), so each is
// a whole number of 32-byte CBUF entries; a cube has align(C, 16) / 8 surfaces
// (the CNA reads channels in sixteens), lanes past C hold `fill`.
uint64_t rk356x_surface_bytes(int h, int w);
uint64_t rk356x_cube_bytes(int c, int h, int w);
std::vector<uint8_t> pack_int8_cube_rk356x(const int8_t* nchw, int c, int h, int w, int8_t fill);
std::vector<int8_t> unpack_int8_cube_rk356x(const uint8_t* bytes, int c, int h, int w);
// Direct weights in groups of 16 kernels (the last one compact), each
// [32-channel slice][ky][kx][kernel][channel], channels padded to align(ic, 16).
std::vector<int8_t> pack_conv_weights_int8_rk356x(const int8_t* w, int oc, int ic, int kh, int kw);
// Depthwise weights per 32-channel group (one task each): group g at
// g x kh x kw x 32 bytes, [ky][kx][channel] with align(group channels, 16) lanes.
std::vector<int8_t> pack_dw_weights_int8_rk356x(const int8_t* w, int c, int kh, int kw);
// An RGB image as the RK356x CNA reads it in ARGB mode (docs/rk3568.md 2):
// three uint8 bytes per pixel (the int8 value + 128; the CNA's converter
// subtracts 128), rows align(W, 8) pixels apart, so each row is a whole
// number of 8-byte units and the width meets the guide's "aligned to 8".
int rk356x_image_row_pixels(int width);
// The CBUF entries one such row fills: each pixel widens to an 8-byte atom
// in 32-byte entries, rounded up to an even count (the vendor's DATA_ENTRIES).
uint32_t rk356x_image_row_entries(int width);
// The weights of a convolution reading such an image: as
// pack_conv_weights_int8_rk356x with 8-byte rows (3 channels, 5 zero lanes).
std::vector<int8_t> pack_image_weights_int8_rk356x(const int8_t* w, int oc, int ic, int kh, int kw);

}  // namespace rknn::npu
