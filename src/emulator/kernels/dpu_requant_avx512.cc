// The AVX-512 path of dpu_requant_row and dpu_stage_a_row (compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx512dq; chosen at run time on CPUs that
// have them): eight channels per step in double lanes, sixteen (one atom) per
// store, the same arithmetic as the generic path with the rounding mode given
// explicitly; plans with float windows sixteen channels per step in floats.
// Outputs and operands in 8-byte atoms (RK356x) take the AVX2 path.

// GCC 12's AVX-512 header starts some intrinsics from _mm512_undefined_epi32(),
// which -Wmaybe-uninitialized reports once they are inlined at -O3.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include "emulator/kernels/dpu_requant.h"
#include "emulator/kernels/dpu_requant_dispatch.h"

namespace rknn::emulator::detail {

namespace {

constexpr int kRoundNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline __m512d clamp(__m512d v, __m512d lo, __m512d hi) { return _mm512_min_pd(_mm512_max_pd(v, lo), hi); }
inline __m512d rne(__m512d v) { return _mm512_roundscale_pd(v, kRoundNearest); }

// The plan's values in registers and locals: the row loops store bytes,
// which the compiler must otherwise assume may change the plan.
struct Constants {
    const double* bias;
    const double* scale;
    const double* code_lo;
    const double* code_hi;
    const double* y_lo;
    const double* y_hi;
    __m256i out_offset_i32;
    __m512d int32_lo = _mm512_set1_pd(-2147483648.0), int32_hi = _mm512_set1_pd(2147483647.0);
    __m512d bs_lo, bs_hi, ew_lo, ew_hi, ew_offset, ew_scale, out_scale, out_offset;
    __m512d code_lo_all = _mm512_set1_pd(-128.0), code_hi_all = _mm512_set1_pd(127.0);
    bool ew_cvt, ew_clamp;
    explicit Constants(const DpuRequantPlan& p)
        : bias(p.bias.data()), scale(p.scale.data()), code_lo(p.code_lo.data()), code_hi(p.code_hi.data()),
          y_lo(p.y_lo.data()), y_hi(p.y_hi.data()), out_offset_i32(_mm256_set1_epi32(static_cast<int32_t>(p.out_offset))),
          bs_lo(_mm512_set1_pd(p.bs_lo)), bs_hi(_mm512_set1_pd(p.bs_hi)), ew_lo(_mm512_set1_pd(p.ew_lo)),
          ew_hi(_mm512_set1_pd(p.ew_hi)), ew_offset(_mm512_set1_pd(p.ew_offset)), ew_scale(_mm512_set1_pd(p.ew_scale)),
          out_scale(_mm512_set1_pd(p.out_scale)), out_offset(_mm512_set1_pd(p.out_offset)), ew_cvt(p.ew_cvt),
          ew_clamp(p.ew == DpuRequantPlan::Ew::kClamp) {}
};


// Lanes [c, c + 8) of a plan array, those in `m` (the arrays are padded to 4).
inline __m512d lanes(const double* a, __mmask8 m, int c) { return _mm512_maskz_loadu_pd(m, a + c); }

// BS and BN on eight lanes from channel c.
template <bool kAlu, bool kMul>
inline __m512d eight_stage_a(const Constants& k, __m256i a, __mmask8 m, int c) {
    __m512d v = _mm512_cvtepi32_pd(a);
    if (kAlu) v = clamp(_mm512_add_pd(v, lanes(k.bias, m, c)), k.int32_lo, k.int32_hi);
    if (kMul) v = rne(_mm512_mul_pd(v, lanes(k.scale, m, c)));
    return clamp(v, k.bs_lo, k.bs_hi);
}

// The per-channel values of eight lanes, loaded once per channel group.
struct EightLanes {
    __m512d bias, scale, lo, hi;  // lo / hi: code bounds (y bounds in the unit chain)
};

// Only the arrays the plan has are read (the others are empty).
template <bool kAlu, bool kMul, Chain kChain>
inline EightLanes eight_lanes(const Constants& k, __mmask8 m, int c) {
    EightLanes e;
    e.bias = kAlu ? lanes(k.bias, m, c) : _mm512_setzero_pd();
    e.scale = kMul ? lanes(k.scale, m, c) : _mm512_setzero_pd();
    e.lo = e.hi = _mm512_setzero_pd();
    if (kChain == Chain::kFoldedUnit) {
        e.lo = lanes(k.y_lo, m, c);
        e.hi = lanes(k.y_hi, m, c);
    } else if (kChain == Chain::kFolded) {
        e.lo = lanes(k.code_lo, m, c);
        e.hi = lanes(k.code_hi, m, c);
    }
    return e;
}

// Eight codes (int32 lanes): accumulators `a`, EW operand bytes `e` (when the
// plan adds one), the lanes' per-channel values `l`.
template <bool kAlu, bool kMul, Chain kChain>
inline __m256i eight_codes(const Constants& k, const EightLanes& l, __m256i a, __m128i e) {
    __m512d v = _mm512_cvtepi32_pd(a);
    if (kChain == Chain::kFoldedUnit) {  // one rounding, in the conversion
        if (kAlu) v = _mm512_add_pd(v, l.bias);
        if (kMul) v = _mm512_mul_pd(v, l.scale);
        return _mm256_add_epi32(_mm512_cvt_roundpd_epi32(clamp(v, l.lo, l.hi), kRoundNearest), k.out_offset_i32);
    }
    if (kChain == Chain::kFolded) {
        if (kAlu) v = _mm512_add_pd(v, l.bias);
        if (kMul) v = rne(_mm512_mul_pd(v, l.scale));
        v = _mm512_add_pd(rne(_mm512_mul_pd(v, k.out_scale)), k.out_offset);
        return _mm512_cvtpd_epi32(clamp(v, l.lo, l.hi));
    }
    if (kAlu) v = clamp(_mm512_add_pd(v, l.bias), k.int32_lo, k.int32_hi);
    if (kMul) v = rne(_mm512_mul_pd(v, l.scale));
    v = clamp(v, k.bs_lo, k.bs_hi);
    if (kChain == Chain::kAdd) {
        __m512d op = _mm512_cvtepi32_pd(_mm256_cvtepi8_epi32(e));
        if (k.ew_cvt) op = rne(_mm512_mul_pd(_mm512_add_pd(op, k.ew_offset), k.ew_scale));
        v = clamp(_mm512_add_pd(v, op), k.ew_lo, k.ew_hi);
    } else if (k.ew_clamp) {
        v = clamp(v, k.ew_lo, k.ew_hi);
    }
    v = _mm512_add_pd(rne(_mm512_mul_pd(v, k.out_scale)), k.out_offset);
    return _mm512_cvtpd_epi32(clamp(v, k.code_lo_all, k.code_hi_all));  // integral and in range: exact
}

inline __mmask16 first_lanes(int count) {
    return count >= 16 ? static_cast<__mmask16>(0xffff) : (count <= 0 ? 0 : static_cast<__mmask16>((1u << count) - 1));
}

template <bool kAlu, bool kMul>
void stage_a_row(const DpuRequantPlan& p, const int32_t* acc, int width, int32_t* values) {
    const int n = p.channels, stride = p.acc_stride;
    const Constants k(p);
    for (int x = 0; x < width; ++x, acc += stride, values += n) {
        for (int c = 0; c < n; c += 8) {
            const auto m = static_cast<__mmask8>(first_lanes(n - c));
            const __m256i a = _mm256_maskz_loadu_epi32(m, acc + c);
            _mm256_mask_storeu_epi32(values + c, m, _mm512_cvtpd_epi32(eight_stage_a<kAlu, kMul>(k, a, m, c)));
        }
    }
}

// Codes [-128, 127] in int32 lanes to bytes, 0 in the lanes beyond `live`,
// stored as one atom. (In registers: a masked vpmovdb to memory is slow on
// some cores.)
inline void store_atom(uint8_t* atom, __m512i codes, __mmask16 live, __mmask16 store) {
    __m128i bytes = _mm512_cvtepi32_epi8(codes);
    if (live != 0xffff) bytes = _mm_maskz_mov_epi8(live, bytes);
    if (store == 0xffff) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(atom), bytes);
    } else {
        _mm_mask_storeu_epi8(atom, store, bytes);
    }
}

// Sixteen float lanes from two groups of eight doubles.
inline __m512 sixteen_floats(__m512d first, __m512d second) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(first)), _mm512_cvtpd_ps(second), 1);
}

// The per-channel values of one atom in float lanes, and the double ones
// for the lanes computed again.
struct FloatAtom {
    __m512 scale, base, code_lo, code_hi;
    EightLanes lo, hi;
    __mmask16 live;
};

// One atom across a row in float lanes (see requant_row_float). kWhole:
// every lane live and stored, so loads and stores go without masks.
template <bool kAlu, bool kMul, bool kWhole>
void float_atom_row(const Constants& k, const FloatAtom& f, const int32_t* a_row, int stride, int width, uint8_t* atom,
                    __mmask16 store) {
    const __m512 near_half = _mm512_set1_ps(0.5f - 0x1p-14f);
    for (int x = 0; x < width; ++x, a_row += stride, atom += 16) {
        const __m512i a = kWhole ? _mm512_loadu_si512(a_row) : _mm512_maskz_loadu_epi32(f.live, a_row);
        // Accumulators beyond 2^24 are rounded here, but lie past the window.
        const __m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), f.scale, f.base);
        // y minus its nearest integer, in one step (AVX-512 DQ).
        const __m512 fraction = _mm512_reduce_ps(y, kRoundNearest);
        const __mmask16 unsure = _mm512_mask_cmp_ps_mask(f.live, _mm512_abs_ps(fraction), near_half, _CMP_GT_OQ);
        // Clamped before the conversion, which large values would overflow.
        __m512i q = _mm512_cvt_roundps_epi32(_mm512_min_ps(_mm512_max_ps(y, f.code_lo), f.code_hi), kRoundNearest);
        if (unsure != 0) {
            const __m128i none = _mm_setzero_si128();
            // Locals: clang's intrinsics are macros, which template commas would split.
            const __m256i q0 = eight_codes<kAlu, kMul, Chain::kFoldedUnit>(k, f.lo, _mm512_castsi512_si256(a), none);
            const __m256i q1 = eight_codes<kAlu, kMul, Chain::kFoldedUnit>(k, f.hi, _mm512_extracti64x4_epi64(a, 1), none);
            q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
        }
        if (kWhole) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(atom), _mm512_cvtepi32_epi8(q));
        } else {
            store_atom(atom, q, f.live, store);
        }
    }
}

// The unit-scale folded chain in float lanes (DpuRequantPlan::float_windows):
// sixteen lanes per step and no double conversions. A pixel with a lane
// whose sum lies within 2^-14 of a half (twice the float error bound) is
// computed again in doubles.
template <bool kAlu, bool kMul>
void requant_row_float(const DpuRequantPlan& p, const int32_t* acc, int width, uint8_t* out) {
    const int n = p.channels, real = p.real_channels;
    const Constants k(p);
    for (int c = 0; c < n; c += 16) {
        uint8_t* atom = out + static_cast<uint64_t>(c / 16) * p.out_surf_stride;
        const __mmask16 store = first_lanes(n - c);
        FloatAtom f;
        f.live = first_lanes(real - c);
        const auto live_lo = static_cast<__mmask8>(f.live), live_hi = static_cast<__mmask8>(f.live >> 8);
        f.scale = _mm512_maskz_loadu_ps(f.live, p.fscale.data() + c);
        f.base = _mm512_maskz_loadu_ps(f.live, p.fbase.data() + c);
        f.code_lo = sixteen_floats(lanes(k.code_lo, live_lo, c), lanes(k.code_lo, live_hi, c + 8));
        f.code_hi = sixteen_floats(lanes(k.code_hi, live_lo, c), lanes(k.code_hi, live_hi, c + 8));
        f.lo = eight_lanes<kAlu, kMul, Chain::kFoldedUnit>(k, live_lo, c);
        f.hi = eight_lanes<kAlu, kMul, Chain::kFoldedUnit>(k, live_hi, c + 8);
        if (f.live == 0xffff && store == 0xffff) {
            float_atom_row<kAlu, kMul, true>(k, f, acc + c, p.acc_stride, width, atom, store);
        } else {
            float_atom_row<kAlu, kMul, false>(k, f, acc + c, p.acc_stride, width, atom, store);
        }
    }
}

// One atom (16 channels) at a time across the row's pixels: the channels'
// values stay in registers, and each surface row is written in order.
template <bool kAlu, bool kMul, Chain kChain>
void requant_row(const DpuRequantPlan& p, const int32_t* acc, int width, const int8_t* ew, uint8_t* out) {
    const int n = p.channels, real = p.real_channels, stride = p.acc_stride;
    const uint64_t out_surf = p.out_surf_stride, ew_surf = p.ew_surf_stride;
    if constexpr (kChain == Chain::kFoldedUnit) {
        if (p.float_windows) return requant_row_float<kAlu, kMul>(p, acc, width, out);
    }
    const Constants k(p);
    for (int c = 0; c < n; c += 16) {
        uint8_t* atom = out + static_cast<uint64_t>(c / 16) * out_surf;
        const __mmask16 store = first_lanes(n - c);
        // Lanes beyond the real channels are written as 0.
        const __mmask16 live = first_lanes(real - c);
        if (live == 0) {
            for (int x = 0; x < width; ++x) _mm_mask_storeu_epi8(atom + static_cast<size_t>(x) * 16, store, _mm_setzero_si128());
            continue;
        }
        const auto live_lo = static_cast<__mmask8>(live), live_hi = static_cast<__mmask8>(live >> 8);
        const EightLanes lo = eight_lanes<kAlu, kMul, kChain>(k, live_lo, c), hi = eight_lanes<kAlu, kMul, kChain>(k, live_hi, c + 8);
        const int32_t* a_row = acc + c;
        const int8_t* e_row = kChain == Chain::kAdd ? ew + static_cast<uint64_t>(c / 16) * ew_surf : nullptr;
        for (int x = 0; x < width; ++x, a_row += stride, atom += 16) {
            const __m512i a = _mm512_maskz_loadu_epi32(live, a_row);
            __m128i e = _mm_setzero_si128();
            if (kChain == Chain::kAdd) e = _mm_maskz_loadu_epi8(live, e_row + static_cast<size_t>(x) * 16);
            const __m256i q0 = eight_codes<kAlu, kMul, kChain>(k, lo, _mm512_castsi512_si256(a), e);
            const __m256i q1 = eight_codes<kAlu, kMul, kChain>(k, hi, _mm512_extracti64x4_epi64(a, 1), _mm_srli_si128(e, 8));
            store_atom(atom, _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1), live, store);
        }
    }
}

}  // namespace

void dpu_stage_a_row_avx512(const DpuRequantPlan& p, const int32_t* acc, int width, int32_t* values) {
    with_bs_steps(p, [&](auto alu, auto mul) {
        stage_a_row<decltype(alu)::value, decltype(mul)::value>(p, acc, width, values);
    });
}

void dpu_requant_row_avx512(const DpuRequantPlan& p, const int32_t* acc, int width, const int8_t* ew, uint8_t* out) {
    const bool whole_atoms = p.out_atom_bytes == 16 && (p.ew != DpuRequantPlan::Ew::kAddInt8 || p.ew_atom_bytes == 16);
    if (!whole_atoms) return dpu_requant_row_avx2(p, acc, width, ew, out);
    with_chain(p, [&](auto alu, auto mul, auto chain) {
        requant_row<decltype(alu)::value, decltype(mul)::value, decltype(chain)::value>(p, acc, width, ew, out);
    });
}

}  // namespace rknn::emulator::detail
