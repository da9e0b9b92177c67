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

// Which implementation depthwise_row_s8 uses on this CPU ("avx512", "avx2", "generic").
const char* depthwise_s8_isa();

namespace detail {
void depthwise_row_s8_generic(const DepthwiseRow& row);
#if defined(__x86_64__)
void depthwise_row_s8_avx2(const DepthwiseRow& row);
void depthwise_row_s8_avx512(const DepthwiseRow& row);
#endif
}  // namespace detail

}  // namespace rknn::emulator
