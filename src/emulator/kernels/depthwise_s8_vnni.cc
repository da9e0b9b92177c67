// The tap-group depthwise kernel (compiled with AVX-512 VNNI and VBMI;
// chosen at run time only on CPUs that have them). Four horizontal taps of a
// channel share one 32-bit lane: a 64-byte load takes four consecutive
// pixels' atoms of an input row, one vpermb gathers each channel's four
// bytes into its lane, and one vpdpbusd adds their products with the four
// weights. A 3x3 window is then 3 vpdpbusd per pixel instead of 9 widening
// multiplies. vpdpbusd takes the input unsigned: it is biased by +128 (x ^
// 0x80) on the way in, and each lane starts from -128 * (its weights' sum),
// which cancels that. The cube is read in place: taps outside the image
// come from the pad atom through masked loads (which do not fault).
// GCC 12's AVX-512 headers start some intrinsics from an undefined vector,
// which -Wmaybe-uninitialized reports once they are inlined at -O3.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <immintrin.h>

#include <cstdint>

#include "emulator/kernels/depthwise_s8.h"
#include "emulator/kernels/vnni_accumulate.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kLanes = 16;
constexpr int kMaxGroups = (kDepthwiseBandMaxKernel + 3) / 4;
constexpr int kPixelsPerStep = 4;  // independent accumulators: vpdpbusd's latency is several cycles

// Byte 4c + j of the result is byte 16j + c of the source: channel c's value
// at the four pixels, side by side.
__m512i lane_gather_index() {
    alignas(64) uint8_t index[64];
    for (int i = 0; i < 64; ++i) index[i] = static_cast<uint8_t>(16 * (i % 4) + i / 4);
    return _mm512_load_si512(index);
}

struct Taps {
    __m512i weights[kDepthwiseBandMaxKernel][kMaxGroups];
    __m512i start;      // -128 * the sum of each lane's weights
    __m512i index;      // lane_gather_index()
    __m512i sign;       // 0x80 in every byte
    __m512i pad_atoms;  // the pad atom four times, as loaded
    __m512i pad_lanes;  // the same, biased and gathered
};

// Four pixels' atoms from `row` (null: a row outside the image) starting at
// input pixel `first`, gathered four taps to a lane and biased.
inline __m512i tap_group(const Taps& t, const uint8_t* row, int first, int in_w) {
    if (row == nullptr) return t.pad_lanes;
    __m512i v;
    if (first >= 0 && first + 4 <= in_w) {
        v = _mm512_loadu_si512(row + static_cast<ptrdiff_t>(first) * kLanes);
    } else {
        // The pixels inside the row come from memory, the rest from the pad.
        __mmask64 inside = 0;
        for (int j = 0; j < 4; ++j) {
            if (first + j >= 0 && first + j < in_w) inside |= static_cast<__mmask64>(0xffff) << (16 * j);
        }
        const auto address = reinterpret_cast<uintptr_t>(row) + static_cast<uintptr_t>(static_cast<intptr_t>(first) * kLanes);
        v = _mm512_mask_loadu_epi8(t.pad_atoms, inside, reinterpret_cast<const void*>(address));
    }
    return _mm512_permutexvar_epi8(t.index, _mm512_xor_si512(v, t.sign));
}

}  // namespace

void depthwise_band_s8_vnni(const DepthwiseBand& b) {
    const int groups = (b.kw + 3) / 4;
    Taps t;
    for (int ky = 0; ky < b.kh; ++ky)
        for (int g = 0; g < groups; ++g) t.weights[ky][g] = _mm512_loadu_si512(b.weights + (ky * groups + g) * kLanes);
    t.start = _mm512_loadu_si512(b.weights + b.kh * groups * kLanes);
    t.index = lane_gather_index();
    t.sign = _mm512_set1_epi8(static_cast<char>(0x80));
    t.pad_atoms = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.pad)));
    t.pad_lanes = _mm512_permutexvar_epi8(t.index, _mm512_xor_si512(t.pad_atoms, t.sign));
    const __mmask16 mask = static_cast<__mmask16>((1u << b.store_lanes) - 1);
    // Output pixels [x_in, x_out) read every tap group's four pixels inside
    // the row: plain loads, four pixels a step.
    int x_in = 0;
    while (x_in < b.out_w && x_in * b.stride_x - b.pad_left < 0) ++x_in;
    int x_out = x_in;
    while (x_out < b.out_w && x_out * b.stride_x - b.pad_left + 4 * groups <= b.in_w) ++x_out;
    for (int y = b.y0; y < b.y1; ++y) {
        const uint8_t* rows[kDepthwiseBandMaxKernel];
        for (int ky = 0; ky < b.kh; ++ky) {
            const int iy = y * b.stride_y + ky - b.pad_top;
            rows[ky] = iy >= 0 && iy < b.in_h ? b.surface + static_cast<size_t>(iy) * b.row_bytes : nullptr;
        }
        int32_t* out = b.out + static_cast<size_t>(y - b.y0) * b.out_row_stride;
        const auto one_pixel = [&](int x) {
            __m512i acc = t.start;
            const int first = x * b.stride_x - b.pad_left;
            for (int ky = 0; ky < b.kh; ++ky)
                for (int g = 0; g < groups; ++g)
                    dot_accumulate(acc, tap_group(t, rows[ky], first + 4 * g, b.in_w), t.weights[ky][g]);
            _mm512_mask_storeu_epi32(out + static_cast<size_t>(x) * b.out_pixel_stride, mask, acc);
        };
        int x = 0;
        for (; x < x_in; ++x) one_pixel(x);
        for (; x + kPixelsPerStep <= x_out; x += kPixelsPerStep) {
            __m512i acc[kPixelsPerStep];
#pragma GCC unroll 4
            for (int p = 0; p < kPixelsPerStep; ++p) acc[p] = t.start;
            for (int ky = 0; ky < b.kh; ++ky) {
                const uint8_t* row = rows[ky];
                for (int g = 0; g < groups; ++g) {
                    const __m512i w = t.weights[ky][g];
                    if (row == nullptr) {
#pragma GCC unroll 4
                        for (int p = 0; p < kPixelsPerStep; ++p) dot_accumulate(acc[p], t.pad_lanes, w);
                        continue;
                    }
                    const uint8_t* at = row + (static_cast<size_t>(x) * b.stride_x - b.pad_left + 4 * g) * kLanes;
#pragma GCC unroll 4
                    for (int p = 0; p < kPixelsPerStep; ++p) {
                        const __m512i v = _mm512_loadu_si512(at + static_cast<size_t>(p) * b.stride_x * kLanes);
                        dot_accumulate(acc[p], _mm512_permutexvar_epi8(t.index, _mm512_xor_si512(v, t.sign)), w);
                    }
                }
            }
#pragma GCC unroll 4
            for (int p = 0; p < kPixelsPerStep; ++p)
                _mm512_mask_storeu_epi32(out + static_cast<size_t>(x + p) * b.out_pixel_stride, mask, acc[p]);
        }
        for (; x < b.out_w; ++x) one_pixel(x);
    }
}

}  // namespace rknn::emulator::detail
