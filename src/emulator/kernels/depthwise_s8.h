// The emulator's int8 depthwise MACs: one output row of one surface (an atom
// of 8 or 16 channels per pixel) from int8 input atoms and int32-widened
// weights. Exact int32 arithmetic; AVX-512, AVX2 and portable versions give
// the same sums.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rknn::emulator {

struct DepthwiseRow {
    const uint8_t* origin = nullptr;       // the first output pixel's window, tap 0
    const int64_t* tap_offsets = nullptr;  // bytes from a window's origin to each tap's atom
    int taps = 0;
    int64_t step = 0;                      // bytes between consecutive pixels' windows
    const int32_t* weights = nullptr;      // [tap][lane], `lanes` per tap
    int lanes = 16;                        // atom lanes: 8 or 16
    int width = 0;                         // output pixels
    int32_t* out = nullptr;                // pixel x's sums at out + x * out_stride
    size_t out_stride = 0;
    int store_lanes = 16;                  // lanes written per pixel (<= lanes)
};

void depthwise_row_s8(const DepthwiseRow& row);

// Output rows [y0, y1) of one 16-lane surface, read from the int8 cube in
// place: output pixel (x, y) reads input pixel (x * stride_x + kx - pad_left,
// y * stride_y + ky - pad_top), and `pad` (16 bytes, one per lane) where that
// falls outside in_w x in_h.
struct DepthwiseBand {
    const uint8_t* surface = nullptr;  // input pixel (0, 0) of the surface
    size_t row_bytes = 0;              // between input rows
    int in_w = 0, in_h = 0;
    int pad_top = 0, pad_left = 0;
    const uint8_t* pad = nullptr;
    int kh = 0, kw = 0;
    int stride_x = 1, stride_y = 1;
    const int32_t* weights = nullptr;  // pack_depthwise_band_weights' form
    int y0 = 0, y1 = 0, out_w = 0;
    int32_t* out = nullptr;  // output row y, pixel x at out + (y - y0) * out_row_stride + x * out_pixel_stride
    size_t out_pixel_stride = 0, out_row_stride = 0;
    int store_lanes = 16;
};

// Whether depthwise_band_s8 runs here, and for which windows (the tap-group
// kernel needs AVX-512 VNNI and VBMI). kDepthwiseBandMaxKernel bounds kh and kw.
constexpr int kDepthwiseBandMaxKernel = 8;
bool depthwise_band_s8_available();

// The band kernel's weights for one surface, from its widened ones
// ([ky * kw + kx][16 lanes]): for each kernel row, ceil(kw / 4) vectors of
// 16 lanes x 4 taps (int8, zero past kw), then each lane's starting sum,
// -128 * (its weights' sum). depthwise_band_weight_words() int32 words.
size_t depthwise_band_weight_words(int kh, int kw);
void pack_depthwise_band_weights(const int32_t* widened, int kh, int kw, int32_t* out);
void depthwise_band_s8(const DepthwiseBand& band);

// Which implementation depthwise_row_s8 uses on this CPU ("avx512", "avx2", "generic").
const char* depthwise_s8_isa();

namespace detail {
void depthwise_row_s8_generic(const DepthwiseRow& row);
#if defined(__x86_64__)
void depthwise_row_s8_avx2(const DepthwiseRow& row);
void depthwise_row_s8_avx512(const DepthwiseRow& row);
void depthwise_band_s8_vnni(const DepthwiseBand& band);
#endif
}  // namespace detail

}  // namespace rknn::emulator
