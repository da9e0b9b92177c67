#include "runtime/fast_io.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#elif defined(__SSE2__)
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

namespace {

constexpr int kRuleShift = 15;  // fraction bits of the multipliers
// Coefficient lanes: a common multiple of 1, 3 and 4 channels and of the
// 32-byte SIMD step, so every step reads its lanes without wrapping.
constexpr int kRuleBlock = 96;

constexpr int kNarrowMaxMult = 32896;  // keeps (255 * mult) >> 8 within int16

inline int8_t sat8(int32_t v) { return static_cast<int8_t>(std::min(127, std::max(-128, v))); }

inline int8_t apply_rule(uint8_t p, int32_t mult, int32_t offset, int shift) {
    return sat8((static_cast<int32_t>(p) * mult + offset) >> shift);
}

inline int8_t apply_narrow(uint8_t p, int32_t mult, int32_t offset, int shift) {
    const int32_t t = (static_cast<int32_t>(p) * mult) >> 8;
    return sat8(std::min(32767, std::max(-32768, t + offset)) >> shift);
}

inline int8_t apply(const PixelRule& r, size_t channel, uint8_t p) {
    return r.narrow ? apply_narrow(p, r.mult[channel], r.offset[channel], r.shift)
                    : apply_rule(p, r.mult[channel], r.offset[channel], r.shift);
}

// One channel: the offsets that reproduce `codes` as floor((base(p) +
// offset) / 2^shift) with saturation, as [lo, hi]; empty when lo > hi.
// base(p) is p * mult (wide) or (p * mult) >> 8 (narrow).
void offset_range(const int8_t* codes, int64_t mult, bool narrow, int shift, int64_t* lo, int64_t* hi) {
    const int64_t unit = int64_t{1} << shift;
    *lo = INT64_MIN / 4, *hi = INT64_MAX / 4;
    for (int p = 0; p < 256; ++p) {
        const int64_t q = codes[p], base = narrow ? (p * mult) >> 8 : p * mult;
        if (q > -128) *lo = std::max(*lo, q * unit - base);          // at least q before the shift
        if (q < 127) *hi = std::min(*hi, (q + 1) * unit - 1 - base);  // below q + 1
    }
}

// Multiplier and offset of one channel's table in the given form, searched
// outwards from the slope the table's unsaturated ends show.
bool fit_channel(const int8_t* table, bool narrow, int shift, int32_t* mult, int32_t* offset) {
    int first = -1, last = -1;
    for (int p = 0; p < 256; ++p)
        if (table[p] > -128 && table[p] < 127) (first < 0 ? first : last) = p;
    if (first < 0 || last < 0) return false;
    const double slope = static_cast<double>(table[last] - table[first]) / (last - first);
    const int64_t guess = static_cast<int64_t>(slope * std::ldexp(1.0, shift + (narrow ? 8 : 0)));
    for (int64_t d = 0; d <= 256; ++d) {
        for (int64_t m : {guess + d, guess - d}) {
            // Wide: 255 x |mult| and |offset| below 2^29, so the int32 sum cannot overflow.
            if (narrow ? (m < 0 || m > kNarrowMaxMult) : (m <= -(1 << 21) || m >= (1 << 21))) continue;
            int64_t lo = 0, hi = 0;
            offset_range(table, m, narrow, shift, &lo, &hi);
            const int64_t limit = narrow ? 32767 : (int64_t{1} << 29) - 1;
            if (lo > hi || lo < -limit || lo > limit) continue;
            *mult = static_cast<int32_t>(m);
            *offset = static_cast<int32_t>(lo);
            return true;
        }
    }
    return false;
}

// A rule's coefficients repeated over kRuleBlock byte positions (channel =
// position % C), for rows that start on a pixel; for the narrow SIMD form
// also in the 16-bit lane order of each 32-byte step (built once per call,
// not per row).
struct RowRule {
    bool narrow = false;
    int shift = 0;
    int32_t mult[kRuleBlock], offset[kRuleBlock];
    // [step start / 32][lo: bytes 0-7 and 16-23, hi: bytes 8-15 and 24-31][lane]
    int16_t lane_mult[kRuleBlock / 32][2][16], lane_offset[kRuleBlock / 32][2][16];
};

RowRule make_row_rule(const PixelRule& rule, int channels) {
    RowRule r;
    r.narrow = rule.narrow;
    r.shift = rule.shift;
    for (int k = 0; k < kRuleBlock; ++k) {
        r.mult[k] = rule.mult[static_cast<size_t>(k % channels)];
        r.offset[k] = rule.offset[static_cast<size_t>(k % channels)];
    }
    for (int s = 0; s < kRuleBlock / 32; ++s)
        for (int lane = 0; lane < 16; ++lane)
            for (int half = 0; half < 2; ++half) {
                const int byte = s * 32 + (lane < 8 ? lane : lane + 8) + half * 8;
                r.lane_mult[s][half][lane] = static_cast<int16_t>(r.mult[byte]);
                r.lane_offset[s][half][lane] = static_cast<int16_t>(r.offset[byte]);
            }
    return r;
}

void rule_row_scalar(const uint8_t* src, int8_t* dst, size_t n, const RowRule& r, int pos) {
    for (size_t i = 0, k = static_cast<size_t>(pos); i < n; ++i, k = k + 1 == kRuleBlock ? 0 : k + 1)
        dst[i] = r.narrow ? apply_narrow(src[i], r.mult[k], r.offset[k], r.shift)
                          : apply_rule(src[i], r.mult[k], r.offset[k], r.shift);
}

#if defined(__x86_64__) && defined(__GNUC__)
// Wide rule, 32 bytes per step: four groups of eight int32 lanes, packed back
// to bytes with saturation (exactly sat8), lanes restored by one permute.
__attribute__((target("avx2"))) size_t wide_row_avx2(const uint8_t* src, int8_t* dst, size_t n, const RowRule& r,
                                                    int* pos_io) {
    // A local position: stores through an int8_t pointer may alias *pos_io.
    int pos = *pos_io;
    const __m128i count = _mm_cvtsi32_si128(r.shift);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t i = 0;
    for (; i + 32 <= n; i += 32, pos = pos + 32 == kRuleBlock ? 0 : pos + 32) {
        __m256i v[4];
        for (int j = 0; j < 4; ++j) {
            const __m256i p = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i + 8 * j)));
            const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.mult + pos + 8 * j));
            const __m256i o = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.offset + pos + 8 * j));
            v[j] = _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(p, m), o), count);
        }
        const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_permutevar8x32_epi32(bytes, order));
    }
    *pos_io = pos;
    return i;
}

// Narrow rule, 32 bytes per step in 16-bit lanes: p << 8 by unpacking with
// zero bytes, mulhi by the multiplier gives (p * mult) >> 8, a saturating add
// of the offset, the shift, and one saturating pack that keeps byte order
// (unpack lo/hi and pack all work within 128-bit halves).
__attribute__((target("avx2"))) size_t narrow_row_avx2(const uint8_t* src, int8_t* dst, size_t n, const RowRule& r,
                                                      int* pos_io) {
    // A local position: stores through an int8_t pointer may alias *pos_io.
    int pos = *pos_io;
    constexpr int kSteps = kRuleBlock / 32;
    __m256i mult[kSteps][2], offset[kSteps][2];  // kept in registers through the row
    for (int s = 0; s < kSteps; ++s)
        for (int half = 0; half < 2; ++half) {
            mult[s][half] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.lane_mult[s][half]));
            offset[s][half] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r.lane_offset[s][half]));
        }
    const __m128i count = _mm_cvtsi32_si128(r.shift);
    const __m256i zero = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32, pos = pos + 32 == kRuleBlock ? 0 : pos + 32) {
        const int s = pos / 32;
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
        const __m256i lo = _mm256_mulhi_epu16(_mm256_unpacklo_epi8(zero, x), mult[s][0]);
        const __m256i hi = _mm256_mulhi_epu16(_mm256_unpackhi_epi8(zero, x), mult[s][1]);
        const __m256i qlo = _mm256_sra_epi16(_mm256_adds_epi16(lo, offset[s][0]), count);
        const __m256i qhi = _mm256_sra_epi16(_mm256_adds_epi16(hi, offset[s][1]), count);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_packs_epi16(qlo, qhi));
    }
    *pos_io = pos;
    return i;
}
#endif

// NHWC bytes of one row (n: whole pixels) through the rule.
void rule_row(const uint8_t* src, int8_t* dst, size_t n, const RowRule& r) {
    size_t done = 0;
    int pos = 0;  // done modulo kRuleBlock
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) done = r.narrow ? narrow_row_avx2(src, dst, n, r, &pos) : wide_row_avx2(src, dst, n, r, &pos);
#endif
    rule_row_scalar(src + done, dst + done, n - done, r, pos);
}

}  // namespace

StatusOr<PixelRule> fit_pixel_rule(const std::vector<int8_t>& codes, int channels) {
    if (channels <= 0 || codes.size() != static_cast<size_t>(channels) * 256)
        return RKNN_INVALID_ARGUMENT("%zu codes for %d channels", codes.size(), channels);
    // The narrow form at the finest shift every channel takes, else the wide one.
    for (int candidate = 0; candidate < 9; ++candidate) {
        const bool narrow = candidate < 8;
        PixelRule rule;
        rule.narrow = narrow;
        rule.shift = narrow ? 7 - candidate : kRuleShift;
        rule.mult.resize(static_cast<size_t>(channels));
        rule.offset.resize(static_cast<size_t>(channels));
        bool all = true;
        for (int c = 0; c < channels && all; ++c)
            all = fit_channel(codes.data() + static_cast<size_t>(c) * 256, narrow, rule.shift,
                              &rule.mult[static_cast<size_t>(c)], &rule.offset[static_cast<size_t>(c)]);
        if (!all) continue;
        for (int c = 0; c < channels; ++c)  // the rule as it runs, once more
            for (int p = 0; p < 256; ++p)
                if (apply(rule, static_cast<size_t>(c), static_cast<uint8_t>(p)) != codes[static_cast<size_t>(c) * 256 + p])
                    return RKNN_INTERNAL_ERROR("channel %d: the fitted rule differs at %d", c, p);
        return rule;
    }
    return make_status(StatusCode::kUnimplemented, "no integer rule reproduces every channel's table");
}

void pixels_to_packed(const uint8_t* pixels, bool nhwc, int c, int h, int w, int row_pixels, const int8_t* codes,
                      const PixelRule* rule, uint8_t* image) {
    const size_t plane = static_cast<size_t>(h) * w;
    const RowRule row_rule = rule != nullptr ? make_row_rule(*rule, c) : RowRule{};
    for (int y = 0; y < h; ++y) {
        uint8_t* row = image + static_cast<size_t>(y) * row_pixels * c;
        if (nhwc && rule != nullptr && kRuleBlock % c == 0) {
            rule_row(pixels + static_cast<size_t>(y) * w * c, reinterpret_cast<int8_t*>(row), static_cast<size_t>(w) * c,
                     row_rule);
        } else if (nhwc) {
            const uint8_t* src = pixels + static_cast<size_t>(y) * w * c;
            for (int x = 0; x < w; ++x)
                for (int ch = 0; ch < c; ++ch) {
                    const size_t i = static_cast<size_t>(x) * c + ch;
                    row[i] = static_cast<uint8_t>(codes[static_cast<size_t>(ch) * 256 + src[i]]);
                }
        } else {
            for (int ch = 0; ch < c; ++ch) {
                const int8_t* table = codes + static_cast<size_t>(ch) * 256;
                const uint8_t* src = pixels + static_cast<size_t>(ch) * plane + static_cast<size_t>(y) * w;
                for (int x = 0; x < w; ++x) row[static_cast<size_t>(x) * c + ch] = static_cast<uint8_t>(table[src[x]]);
            }
        }
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
