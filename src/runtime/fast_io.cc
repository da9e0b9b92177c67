#include "runtime/fast_io.h"

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "base/hot_loops.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "rknn_api.h"
#include "runtime/io_convert.h"

namespace rknn::runtime {
namespace {

constexpr int kAtom = 16;  // int8 lanes per cube atom

}  // namespace

StatusOr<std::vector<int8_t>> make_pixel_codes(const graph::Tensor& declared, const graph::InputPreprocess* pre) {
    if (declared.shape.size() != 4 || declared.dtype != graph::DType::kInt8)
        return RKNN_INVALID_ARGUMENT("pixel tables are for 4-D int8 inputs");
    const int64_t channels = declared.shape[1];
    // Every pixel value once per channel, as a [1, C, 1, 256] NCHW image.
    graph::Tensor probe = declared;
    probe.shape = {1, channels, 1, 256};
    std::vector<uint8_t> values(static_cast<size_t>(channels) * 256);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i % 256);
    rknn_input in{};
    in.buf = values.data();
    in.size = static_cast<uint32_t>(values.size());
    in.type = RKNN_TENSOR_UINT8;
    in.fmt = RKNN_TENSOR_NCHW;
    RKNN_ASSIGN_OR_RETURN(cpu::HostTensor codes, convert_input(in, probe, pre));
    return std::vector<int8_t>(codes.data<int8_t>(), codes.data<int8_t>() + codes.numel());
}

StatusOr<Dequant> make_dequant(const graph::Tensor& declared) {
    if (declared.dtype != graph::DType::kInt8 || !declared.quant.is_quantized() || declared.quant.per_channel())
        return RKNN_INVALID_ARGUMENT("the affine rule is for per-tensor int8 outputs");
    graph::Tensor probe = declared;
    probe.shape = {256};
    cpu::HostTensor codes = cpu::make_tensor_like(probe, probe.shape);
    for (int i = 0; i < 256; ++i) codes.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
    const cpu::HostTensor floats = cpu::to_float32(codes);
    const Dequant rule{declared.quant.zero_point(), declared.quant.scale()};
    for (int i = 0; i < 256; ++i) {
        const float affine = static_cast<float>(i - 128 - rule.zero_point) * rule.scale;
        if (std::memcmp(&affine, floats.data<float>() + i, sizeof(float)) != 0)
            return RKNN_INTERNAL_ERROR("code %d: the affine rule differs from the generic dequantisation", i - 128);
    }
    return rule;
}

void pixels_to_cube(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, uint8_t* cube) {
    const size_t plane = static_cast<size_t>(h) * w;
    const size_t surface = plane * kAtom;
    for (int ch = 0; ch < c; ++ch) {
        const int8_t* table = codes + static_cast<size_t>(ch) * 256;
        uint8_t* lanes = cube + static_cast<size_t>(ch / kAtom) * surface + ch % kAtom;
        const uint8_t* src = nhwc ? pixels + ch : pixels + static_cast<size_t>(ch) * plane;
        const size_t step = nhwc ? static_cast<size_t>(c) : 1;
        for (size_t p = 0; p < plane; ++p) lanes[p * kAtom] = static_cast<uint8_t>(table[src[p * step]]);
    }
}

void pixels_to_nchw(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, int8_t* nchw) {
    const size_t plane = static_cast<size_t>(h) * w;
    for (int ch = 0; ch < c; ++ch) {
        const int8_t* table = codes + static_cast<size_t>(ch) * 256;
        int8_t* dst = nchw + static_cast<size_t>(ch) * plane;
        const uint8_t* src = nhwc ? pixels + ch : pixels + static_cast<size_t>(ch) * plane;
        const size_t step = nhwc ? static_cast<size_t>(c) : 1;
        for (size_t p = 0; p < plane; ++p) dst[p] = table[src[p * step]];
    }
}

namespace {

// Sixteen int8 codes -> floats with the affine rule (vectorised by the compiler).
RKNN_HOT_LOOP void dequantize16(const int8_t* __restrict codes, int32_t zero_point, float scale,
                                float* __restrict dst) {
    for (int i = 0; i < 16; ++i) dst[i] = static_cast<float>(codes[i] - zero_point) * scale;
}

// 128-bit interleaves: SSE2's unpack lo/hi and AArch64's zip1/zip2 are the
// same operations, so one transpose serves both.
#if defined(__SSE2__)
using Vec = __m128i;
inline Vec load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline void store16(uint8_t* p, Vec v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
inline Vec lo8(Vec a, Vec b) { return _mm_unpacklo_epi8(a, b); }
inline Vec hi8(Vec a, Vec b) { return _mm_unpackhi_epi8(a, b); }
inline Vec lo16(Vec a, Vec b) { return _mm_unpacklo_epi16(a, b); }
inline Vec hi16(Vec a, Vec b) { return _mm_unpackhi_epi16(a, b); }
inline Vec lo32(Vec a, Vec b) { return _mm_unpacklo_epi32(a, b); }
inline Vec hi32(Vec a, Vec b) { return _mm_unpackhi_epi32(a, b); }
inline Vec lo64(Vec a, Vec b) { return _mm_unpacklo_epi64(a, b); }
inline Vec hi64(Vec a, Vec b) { return _mm_unpackhi_epi64(a, b); }
#define RKNN_HAVE_VEC128 1
#elif defined(__aarch64__)
using Vec = uint8x16_t;
inline Vec load16(const uint8_t* p) { return vld1q_u8(p); }
inline void store16(uint8_t* p, Vec v) { vst1q_u8(p, v); }
inline Vec lo8(Vec a, Vec b) { return vzip1q_u8(a, b); }
inline Vec hi8(Vec a, Vec b) { return vzip2q_u8(a, b); }
inline Vec lo16(Vec a, Vec b) { return vreinterpretq_u8_u16(vzip1q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b))); }
inline Vec hi16(Vec a, Vec b) { return vreinterpretq_u8_u16(vzip2q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b))); }
inline Vec lo32(Vec a, Vec b) { return vreinterpretq_u8_u32(vzip1q_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b))); }
inline Vec hi32(Vec a, Vec b) { return vreinterpretq_u8_u32(vzip2q_u32(vreinterpretq_u32_u8(a), vreinterpretq_u32_u8(b))); }
inline Vec lo64(Vec a, Vec b) { return vreinterpretq_u8_u64(vzip1q_u64(vreinterpretq_u64_u8(a), vreinterpretq_u64_u8(b))); }
inline Vec hi64(Vec a, Vec b) { return vreinterpretq_u8_u64(vzip2q_u64(vreinterpretq_u64_u8(a), vreinterpretq_u64_u8(b))); }
#define RKNN_HAVE_VEC128 1
#endif

// The 16 atoms of 16 consecutive pixels (256 contiguous bytes) -> 16 rows,
// one per lane, of those 16 pixels' codes.
void transpose_atoms(const uint8_t* atoms, uint8_t rows[16][16]) {
#if defined(RKNN_HAVE_VEC128)
    Vec r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = load16(atoms + i * 16);
    for (int k = 0; k < 8; ++k) {  // bytes of pixel pairs
        t[2 * k] = lo8(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = hi8(r[2 * k], r[2 * k + 1]);
    }
    for (int m = 0; m < 4; ++m) {  // four pixels per lane
        r[4 * m + 0] = lo16(t[4 * m + 0], t[4 * m + 2]);
        r[4 * m + 1] = hi16(t[4 * m + 0], t[4 * m + 2]);
        r[4 * m + 2] = lo16(t[4 * m + 1], t[4 * m + 3]);
        r[4 * m + 3] = hi16(t[4 * m + 1], t[4 * m + 3]);
    }
    for (int n = 0; n < 2; ++n)  // eight pixels per lane, two lanes per register
        for (int q = 0; q < 4; ++q) {
            t[8 * n + 2 * q] = lo32(r[8 * n + q], r[8 * n + 4 + q]);
            t[8 * n + 2 * q + 1] = hi32(r[8 * n + q], r[8 * n + 4 + q]);
        }
    for (int e = 0; e < 8; ++e) {  // all sixteen pixels of lanes 2e and 2e + 1
        store16(rows[2 * e], lo64(t[e], t[8 + e]));
        store16(rows[2 * e + 1], hi64(t[e], t[8 + e]));
    }
#else
    for (int p = 0; p < 16; ++p)
        for (int l = 0; l < 16; ++l) rows[l][p] = atoms[p * 16 + l];
#endif
}

// One surface: `lanes` channels of 16-byte atoms -> their float planes.
void dequantize_surface(const uint8_t* atoms, size_t plane, int lanes, int32_t zero_point, float scale, float* planes) {
    uint8_t rows[16][16];
    size_t p = 0;
    for (; p + 16 <= plane; p += 16) {
        transpose_atoms(atoms + p * kAtom, rows);
        for (int l = 0; l < lanes; ++l)
            dequantize16(reinterpret_cast<const int8_t*>(rows[l]), zero_point, scale,
                         planes + static_cast<size_t>(l) * plane + p);
    }
    for (; p < plane; ++p)
        for (int l = 0; l < lanes; ++l)
            planes[static_cast<size_t>(l) * plane + p] =
                static_cast<float>(static_cast<int8_t>(atoms[p * kAtom + static_cast<size_t>(l)]) - zero_point) * scale;
}

}  // namespace

void cube_to_float_nchw(const uint8_t* cube, int c, int h, int w, const Dequant& rule, float* nchw) {
    const size_t plane = static_cast<size_t>(h) * w;
    const size_t surface = plane * kAtom;
    for (int c0 = 0; c0 < c; c0 += kAtom)
        dequantize_surface(cube + static_cast<size_t>(c0 / kAtom) * surface, plane, std::min(kAtom, c - c0),
                           rule.zero_point, rule.scale, nchw + static_cast<size_t>(c0) * plane);
}

}  // namespace rknn::runtime
