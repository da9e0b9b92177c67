#include "runtime/fast_io.h"

#include <algorithm>
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

inline int8_t apply_rule(uint8_t p, int32_t mult, int32_t offset, int shift) {
    const int32_t v = (static_cast<int32_t>(p) * mult + offset) >> shift;
    return static_cast<int8_t>(std::min(127, std::max(-128, v)));
}

// One channel: the offsets that reproduce `codes` with multiplier `mult`, as
// [lo, hi]; empty when lo > hi. Each pixel value bounds p * mult + offset.
void offset_range(const int8_t* codes, int64_t mult, int64_t* lo, int64_t* hi) {
    const int64_t unit = int64_t{1} << kRuleShift;
    *lo = INT64_MIN / 4, *hi = INT64_MAX / 4;
    for (int p = 0; p < 256; ++p) {
        const int64_t q = codes[p], base = p * mult;
        if (q > -128) *lo = std::max(*lo, q * unit - base);          // at least q before the shift
        if (q < 127) *hi = std::min(*hi, (q + 1) * unit - 1 - base);  // below q + 1
    }
}

// NHWC bytes of one row through the rule; mult/offset repeat the channels'
// coefficients over kRuleBlock lanes (n is a whole number of pixels).
void rule_row_scalar(const uint8_t* src, int8_t* dst, size_t n, const int32_t* mult, const int32_t* offset, int shift) {
    for (size_t i = 0, k = 0; i < n; ++i, k = k + 1 == kRuleBlock ? 0 : k + 1)
        dst[i] = apply_rule(src[i], mult[k], offset[k], shift);
}

#if defined(__x86_64__) && defined(__GNUC__)
// 32 bytes per step: four groups of eight int32 lanes, packed back to bytes
// with saturation (exactly sat8), lanes restored to order by one permute.
__attribute__((target("avx2"))) void rule_row_avx2(const uint8_t* src, int8_t* dst, size_t n, const int32_t* mult,
                                                  const int32_t* offset, int shift) {
    const __m128i count = _mm_cvtsi32_si128(shift);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t i = 0;
    int pos = 0;  // i modulo kRuleBlock
    for (; i + 32 <= n; i += 32, pos = (pos + 32) % kRuleBlock) {
        __m256i v[4];
        for (int j = 0; j < 4; ++j) {
            const __m256i p = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i + 8 * j)));
            const __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mult + pos + 8 * j));
            const __m256i o = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(offset + pos + 8 * j));
            v[j] = _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(p, m), o), count);
        }
        const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(v[0], v[1]), _mm256_packs_epi32(v[2], v[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_permutevar8x32_epi32(bytes, order));
    }
    rule_row_scalar(src + i, dst + i, n - i, mult + pos, offset + pos, shift);
}
#endif

void rule_row(const uint8_t* src, int8_t* dst, size_t n, const int32_t* mult, const int32_t* offset, int shift) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) return rule_row_avx2(src, dst, n, mult, offset, shift);
#endif
    rule_row_scalar(src, dst, n, mult, offset, shift);
}

}  // namespace

StatusOr<PixelRule> fit_pixel_rule(const std::vector<int8_t>& codes, int channels) {
    if (channels <= 0 || codes.size() != static_cast<size_t>(channels) * 256)
        return RKNN_INVALID_ARGUMENT("%zu codes for %d channels", codes.size(), channels);
    PixelRule rule;
    rule.shift = kRuleShift;
    for (int c = 0; c < channels; ++c) {
        const int8_t* table = codes.data() + static_cast<size_t>(c) * 256;
        // The slope from the unsaturated ends, then the multipliers near it.
        int first = -1, last = -1;
        for (int p = 0; p < 256; ++p)
            if (table[p] > -128 && table[p] < 127) (first < 0 ? first : last) = p;
        if (first < 0 || last < 0) return make_status(StatusCode::kUnimplemented, "channel %d: too few unsaturated codes", c);
        const double slope = static_cast<double>(table[last] - table[first]) / (last - first);
        const int64_t guess = static_cast<int64_t>(slope * (1 << kRuleShift));
        bool found = false;
        for (int64_t d = 0; d <= 256 && !found; ++d) {
            for (int64_t mult : {guess + d, guess - d}) {
                // 255 x |mult| and |offset| below 2^29: the int32 sum cannot overflow.
                if (mult <= -(1 << 21) || mult >= (1 << 21)) continue;
                int64_t lo = 0, hi = 0;
                offset_range(table, mult, &lo, &hi);
                if (lo > hi || lo <= -(int64_t{1} << 29) || lo >= (int64_t{1} << 29)) continue;
                rule.mult.push_back(static_cast<int32_t>(mult));
                rule.offset.push_back(static_cast<int32_t>(lo));
                found = true;
                break;
            }
        }
        if (!found) return make_status(StatusCode::kUnimplemented, "channel %d: no multiplier reproduces the table", c);
        for (int p = 0; p < 256; ++p)  // the rule as it runs, once more
            if (apply_rule(static_cast<uint8_t>(p), rule.mult.back(), rule.offset.back(), rule.shift) != table[p])
                return RKNN_INTERNAL_ERROR("channel %d: the fitted rule differs at %d", c, p);
    }
    return rule;
}

void pixels_to_packed(const uint8_t* pixels, bool nhwc, int c, int h, int w, int row_pixels, const int8_t* codes,
                      const PixelRule* rule, uint8_t* image) {
    const size_t plane = static_cast<size_t>(h) * w;
    int32_t mult[kRuleBlock], offset[kRuleBlock];
    if (rule != nullptr) {
        for (int k = 0; k < kRuleBlock; ++k) {
            mult[k] = rule->mult[static_cast<size_t>(k % c)];
            offset[k] = rule->offset[static_cast<size_t>(k % c)];
        }
    }
    for (int y = 0; y < h; ++y) {
        uint8_t* row = image + static_cast<size_t>(y) * row_pixels * c;
        if (nhwc && rule != nullptr && kRuleBlock % c == 0) {
            rule_row(pixels + static_cast<size_t>(y) * w * c, reinterpret_cast<int8_t*>(row), static_cast<size_t>(w) * c,
                     mult, offset, rule->shift);
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
