// The AVX2 path of dpu_requant_row (compiled with -mavx2; chosen at run time):
// four channels at a time in double lanes, the same arithmetic as the generic
// path with the rounding mode given explicitly.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "emulator/kernels/dpu_requant.h"
#include "emulator/kernels/dpu_requant_dispatch.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kRoundNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline __m256d clamp(__m256d v, __m256d lo, __m256d hi) { return _mm256_min_pd(_mm256_max_pd(v, lo), hi); }

inline __m256d load_int8x4(const int8_t* p) {
    int32_t four;
    std::memcpy(&four, p, 4);
    return _mm256_cvtepi32_pd(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(four)));
}

// The plan's values in registers and locals: the row loops store bytes,
// which the compiler must otherwise assume may change the plan.
struct Constants {
    const double* bias;
    const double* scale;
    const double* code_lo;
    const double* code_hi;
    const double* y_lo;
    const double* y_hi;
    __m128i out_offset_i32;
    __m256d int32_lo = _mm256_set1_pd(-2147483648.0), int32_hi = _mm256_set1_pd(2147483647.0);
    __m256d bs_lo, bs_hi, ew_lo, ew_hi, ew_offset, ew_scale, out_scale, out_offset;
    __m256d code_lo_all = _mm256_set1_pd(-128.0), code_hi_all = _mm256_set1_pd(127.0);
    bool ew_cvt, ew_clamp;
    explicit Constants(const DpuRequantPlan& p)
        : bias(p.bias.data()), scale(p.scale.data()), code_lo(p.code_lo.data()), code_hi(p.code_hi.data()),
          y_lo(p.y_lo.data()), y_hi(p.y_hi.data()), out_offset_i32(_mm_set1_epi32(static_cast<int32_t>(p.out_offset))),
          bs_lo(_mm256_set1_pd(p.bs_lo)), bs_hi(_mm256_set1_pd(p.bs_hi)),
          ew_lo(_mm256_set1_pd(p.ew_lo)), ew_hi(_mm256_set1_pd(p.ew_hi)), ew_offset(_mm256_set1_pd(p.ew_offset)),
          ew_scale(_mm256_set1_pd(p.ew_scale)), out_scale(_mm256_set1_pd(p.out_scale)),
          out_offset(_mm256_set1_pd(p.out_offset)), ew_cvt(p.ew_cvt),
          ew_clamp(p.ew == DpuRequantPlan::Ew::kClamp) {}
};


// BS and BN on four lanes from channel c.
template <bool kAlu, bool kMul>
inline __m256d four_stage_a(const Constants& k, __m128i a, int c) {
    __m256d v = _mm256_cvtepi32_pd(a);
    if (kAlu) v = clamp(_mm256_add_pd(v, _mm256_loadu_pd(k.bias + c)), k.int32_lo, k.int32_hi);
    if (kMul) v = _mm256_round_pd(_mm256_mul_pd(v, _mm256_loadu_pd(k.scale + c)), kRoundNearest);
    return clamp(v, k.bs_lo, k.bs_hi);
}

// Four lanes from channel c: accumulators `a`, EW operand bytes `e` (when
// the plan adds one); the four codes as int32 lanes.
template <bool kAlu, bool kMul, Chain kChain>
inline __m128i four_codes(const Constants& k, __m128i a, const int8_t* e, int c) {
    if (kChain == Chain::kFoldedUnit) {
        __m256d v = _mm256_cvtepi32_pd(a);
        if (kAlu) v = _mm256_add_pd(v, _mm256_loadu_pd(k.bias + c));
        if (kMul) v = _mm256_mul_pd(v, _mm256_loadu_pd(k.scale + c));
        v = _mm256_round_pd(clamp(v, _mm256_loadu_pd(k.y_lo + c), _mm256_loadu_pd(k.y_hi + c)), kRoundNearest);
        return _mm_add_epi32(_mm256_cvtpd_epi32(v), k.out_offset_i32);
    }
    if (kChain == Chain::kFolded) {
        __m256d v = _mm256_cvtepi32_pd(a);
        if (kAlu) v = _mm256_add_pd(v, _mm256_loadu_pd(k.bias + c));
        if (kMul) v = _mm256_round_pd(_mm256_mul_pd(v, _mm256_loadu_pd(k.scale + c)), kRoundNearest);
        v = _mm256_add_pd(_mm256_round_pd(_mm256_mul_pd(v, k.out_scale), kRoundNearest), k.out_offset);
        return _mm256_cvtpd_epi32(clamp(v, _mm256_loadu_pd(k.code_lo + c), _mm256_loadu_pd(k.code_hi + c)));
    }
    __m256d v = four_stage_a<kAlu, kMul>(k, a, c);
    if (kChain == Chain::kAdd) {
        __m256d op = load_int8x4(e);
        if (k.ew_cvt) op = _mm256_round_pd(_mm256_mul_pd(_mm256_add_pd(op, k.ew_offset), k.ew_scale), kRoundNearest);
        v = clamp(_mm256_add_pd(v, op), k.ew_lo, k.ew_hi);
    } else if (k.ew_clamp) {
        v = clamp(v, k.ew_lo, k.ew_hi);
    }
    v = _mm256_add_pd(_mm256_round_pd(_mm256_mul_pd(v, k.out_scale), kRoundNearest), k.out_offset);
    return _mm256_cvtpd_epi32(clamp(v, k.code_lo_all, k.code_hi_all));  // integral and in range: exact
}

template <bool kAlu, bool kMul>
void stage_a_row(const DpuRequantPlan& p, const int32_t* acc, int width, int32_t* values) {
    const int n = p.channels, full = n & ~3, stride = p.acc_stride;
    const Constants k(p);
    for (int x = 0; x < width; ++x, acc += stride, values += n) {
        for (int c = 0; c < full; c += 4) {
            const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(acc + c));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(values + c), _mm256_cvtpd_epi32(four_stage_a<kAlu, kMul>(k, a, c)));
        }
        if (full < n) {
            alignas(16) int32_t a4[4] = {}, v4[4];
            std::memcpy(a4, acc + full, sizeof(int32_t) * static_cast<size_t>(n - full));
            _mm_store_si128(reinterpret_cast<__m128i*>(v4),
                            _mm256_cvtpd_epi32(four_stage_a<kAlu, kMul>(k, _mm_load_si128(reinterpret_cast<const __m128i*>(a4)), full)));
            std::memcpy(values + full, v4, sizeof(int32_t) * static_cast<size_t>(n - full));
        }
    }
}

template <bool kAlu, bool kMul, Chain kChain>
void requant_row(const DpuRequantPlan& p, const int32_t* acc, int width, const int8_t* ew, uint8_t* out) {
    const int n = p.channels, real = p.real_channels, stride = p.acc_stride;
    const int out_c2 = p.out_atom_bytes, ew_c2 = p.ew_atom_bytes, ew_step = p.ew_atom_bytes;
    const uint64_t out_surf = p.out_surf_stride, ew_surf = p.ew_surf_stride;
    const Constants k(p);
    // Whole 16-channel atoms of real channels go straight to the output;
    // the rest of a pixel through `codes` (zero from the real channels on).
    const int direct = out_c2 == 16 && ew_c2 % 4 == 0 ? real & ~15 : 0;
    // (A plain array: std containers instantiated in this AVX2 file could be
    // picked by the linker for the generic code too.)
    alignas(16) int8_t cp[kMaxDpuRequantChannels + 4];
    std::memset(cp, 0, static_cast<size_t>(n + 4));
    const auto operand = [&](const int8_t* e, int c) {
        return kChain == Chain::kAdd ? e + static_cast<uint64_t>(c / ew_c2) * ew_surf + (c % ew_c2) : nullptr;
    };
    for (int x = 0; x < width; ++x, acc += stride) {
        uint8_t* pixel = out + static_cast<size_t>(x) * static_cast<size_t>(out_c2);
        for (int c = 0; c < direct; c += 16) {
            const __m128i* a = reinterpret_cast<const __m128i*>(acc + c);
            const __m128i q0 = four_codes<kAlu, kMul, kChain>(k, _mm_loadu_si128(a), operand(ew, c), c);
            const __m128i q1 = four_codes<kAlu, kMul, kChain>(k, _mm_loadu_si128(a + 1), operand(ew, c + 4), c + 4);
            const __m128i q2 = four_codes<kAlu, kMul, kChain>(k, _mm_loadu_si128(a + 2), operand(ew, c + 8), c + 8);
            const __m128i q3 = four_codes<kAlu, kMul, kChain>(k, _mm_loadu_si128(a + 3), operand(ew, c + 12), c + 12);
            const __m128i bytes = _mm_packs_epi16(_mm_packs_epi32(q0, q1), _mm_packs_epi32(q2, q3));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(pixel + static_cast<uint64_t>(c / 16) * out_surf), bytes);
        }
        if (direct < n) {
            const int full = real & ~3;
            for (int c = direct; c < full; c += 4) {
                __m128i q = four_codes<kAlu, kMul, kChain>(k, _mm_loadu_si128(reinterpret_cast<const __m128i*>(acc + c)),
                                                        operand(ew, c), c);
                q = _mm_packs_epi16(_mm_packs_epi32(q, q), q);
                const int32_t four = _mm_cvtsi128_si32(q);
                std::memcpy(cp + c, &four, 4);
            }
            if (full < real) {  // the last lanes, through zero-padded copies
                alignas(16) int32_t a4[4] = {};
                int8_t e4[4] = {};
                const int rest = real - full;
                std::memcpy(a4, acc + full, sizeof(int32_t) * static_cast<size_t>(rest));
                if (kChain == Chain::kAdd) {
                    for (int i = 0; i < rest; ++i) e4[i] = *operand(ew, full + i);
                }
                __m128i q = four_codes<kAlu, kMul, kChain>(k, _mm_load_si128(reinterpret_cast<const __m128i*>(a4)), e4, full);
                q = _mm_packs_epi16(_mm_packs_epi32(q, q), q);
                const int32_t four = _mm_cvtsi128_si32(q);
                std::memcpy(cp + full, &four, static_cast<size_t>(rest));
            }
            uint8_t* atom = pixel + static_cast<uint64_t>(direct / out_c2) * out_surf;
            for (int c0 = direct; c0 < n; c0 += out_c2, atom += out_surf)
                std::memcpy(atom, cp + c0, static_cast<size_t>(std::min(out_c2, n - c0)));
        }
        if (kChain == Chain::kAdd) ew += ew_step;
    }
}

}  // namespace

void dpu_stage_a_row_avx2(const DpuRequantPlan& p, const int32_t* acc, int width, int32_t* values) {
    with_bs_steps(p, [&](auto alu, auto mul) {
        stage_a_row<decltype(alu)::value, decltype(mul)::value>(p, acc, width, values);
    });
}

void dpu_requant_row_avx2(const DpuRequantPlan& p, const int32_t* acc, int width, const int8_t* ew, uint8_t* out) {
    with_chain(p, [&](auto alu, auto mul, auto chain) {
        requant_row<decltype(alu)::value, decltype(mul)::value, decltype(chain)::value>(p, acc, width, ew, out);
    });
}

}  // namespace rknn::emulator::detail
