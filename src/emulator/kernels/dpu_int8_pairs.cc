// Highway re-includes this file once per SIMD target (foreach_target.h); the
// part under HWY_ONCE is compiled once and dispatches to the best target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "emulator/kernels/dpu_int8_pairs.cc"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "emulator/kernels/dpu_int8_pairs.h"

HWY_BEFORE_NAMESPACE();
namespace rknn::emulator {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr int kAtom = 16;  // channels per pixel step in every cube

// rne(v / 2^s), half to even (1 <= s <= 30; v + 2^(s-1) stays in int32,
// which plan_int8_lanes checked), the OUT_CVT shift.
template <class D>
HWY_INLINE hn::Vec<D> round_shift(D d, hn::Vec<D> v, int s, hn::Vec<D> half_less_one) {
    const hn::Vec<D> odd = hn::And(hn::ShiftRightSame(v, s), hn::Set(d, 1));
    return hn::ShiftRightSame(hn::Add(hn::Add(v, half_less_one), odd), s);
}

#if HWY_TARGET == HWY_SCALAR
// One lane per vector cannot pair two 16-bit values: plain integers.
void PairsSurface(const DpuInt8Lanes& p, int c0, const int8_t* src, int width, const int8_t* ew, uint8_t* out) {
    const int s = p.out_shift;
    const int32_t half_less_one = (1 << (s - 1)) - 1;
    for (int x = 0; x < width; ++x, src += kAtom, ew += kAtom, out += kAtom) {
        for (int l = 0; l < kAtom; ++l) {
            const size_t c = static_cast<size_t>(c0 + l);
            int32_t v = src[l] * p.pair_mul[2 * c] + ew[l] * p.pair_mul[2 * c + 1] + p.pair_base[c];
            v = std::min(std::max(v, p.ew_lo), p.ew_hi);
            v *= p.out_mul;
            v = ((v + half_less_one + ((v >> s) & 1)) >> s) + p.out_offset;
            const int32_t code = std::min(std::max(v, -128), 127);
            out[l] = static_cast<uint8_t>(code & p.keep[c]);
        }
    }
}
#else
// `width` pixels of one 16-channel surface. The atom splits into 16 / N
// blocks of N lanes (N = 16 with AVX-512, 8 with AVX2, 4 with NEON); each
// block runs over the whole row with its per-channel constants in registers,
// so the row is read once per block (from L1 after the first).
template <bool kClamp, bool kOutMul>
void SurfaceBlocks(const DpuInt8Lanes& p, int c0, const int8_t* src, int width, const int8_t* ew,
                            uint8_t* out) {
    const hn::CappedTag<int32_t, kAtom> d32;
    const hn::Rebind<int8_t, decltype(d32)> d8;
    const hn::Repartition<int16_t, decltype(d32)> d16;
    const int lanes = static_cast<int>(hn::Lanes(d32));
    const int s = p.out_shift;
    const auto half_less_one = hn::Set(d32, (1 << (s - 1)) - 1);
    const auto lo = hn::Set(d32, p.ew_lo), hi = hn::Set(d32, p.ew_hi);
    const auto out_mul = hn::Set(d32, p.out_mul), out_offset = hn::Set(d32, p.out_offset);
    for (int b = 0; b < kAtom; b += lanes) {
        const size_t c = static_cast<size_t>(c0 + b);
        const auto mul = hn::LoadU(d16, p.pair_mul.data() + 2 * c);
        const auto base = hn::LoadU(d32, p.pair_base.data() + c);
        const auto keep = hn::LoadU(d8, p.keep.data() + c);
        const int8_t* a = src + b;
        const int8_t* e = ew + b;
        uint8_t* o = out + b;
        for (int x = 0; x < width; ++x, a += kAtom, e += kAtom, o += kAtom) {
            const auto av = hn::PromoteTo(d32, hn::LoadU(d8, a));
            const auto ev = hn::PromoteTo(d32, hn::LoadU(d8, e));
            // 16-bit lanes 2i and 2i+1: the source and the operand of lane i.
            const auto pair = hn::OddEven(hn::BitCast(d16, hn::ShiftLeft<16>(ev)), hn::BitCast(d16, av));
            auto sum1 = hn::Zero(d32);
            const auto sum0 = hn::ReorderWidenMulAccumulate(d32, pair, mul, hn::Zero(d32), sum1);
            auto v = hn::Add(hn::RearrangeToOddPlusEven(sum0, sum1), base);
            if (kClamp) v = hn::Min(hn::Max(v, lo), hi);
            if (kOutMul) v = hn::Mul(v, out_mul);
            v = hn::Add(round_shift(d32, v, s, half_less_one), out_offset);
            const auto codes = hn::And(hn::DemoteTo(d8, v), keep);  // saturates to [-128, 127]
            hn::StoreU(codes, d8, reinterpret_cast<int8_t*>(o));
        }
    }
}

void PairsSurface(const DpuInt8Lanes& p, int c0, const int8_t* src, int width, const int8_t* ew, uint8_t* out) {
    const bool out_mul = p.out_mul != 1;
    if (p.pair_clamp) {
        out_mul ? SurfaceBlocks<true, true>(p, c0, src, width, ew, out)
                : SurfaceBlocks<true, false>(p, c0, src, width, ew, out);
    } else {
        out_mul ? SurfaceBlocks<false, true>(p, c0, src, width, ew, out)
                : SurfaceBlocks<false, false>(p, c0, src, width, ew, out);
    }
}
#endif

void PairsRow(const DpuInt8Lanes& p, const int8_t* src, uint64_t src_surf, int width, const int8_t* ew,
              uint64_t ew_surf, uint8_t* out, uint64_t out_surf) {
    for (int c0 = 0; c0 < p.channels; c0 += kAtom) {
        const uint64_t s = static_cast<uint64_t>(c0 / kAtom);
        PairsSurface(p, c0, src + s * src_surf, width, ew + s * ew_surf, out + s * out_surf);
    }
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace rknn::emulator
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rknn::emulator {

HWY_EXPORT(PairsRow);
HWY_EXPORT(TargetName);

namespace {
std::atomic<bool> pairs_on{true};
}  // namespace

void dpu_int8_pairs_row(const DpuInt8Lanes& lanes, const int8_t* src, uint64_t src_surf, int width, const int8_t* ew,
                        uint64_t ew_surf, uint8_t* out, uint64_t out_surf) {
    HWY_DYNAMIC_DISPATCH(PairsRow)(lanes, src, src_surf, width, ew, ew_surf, out, out_surf);
}

const char* dpu_int8_pairs_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

void set_int8_pairs(bool enabled) { pairs_on.store(enabled, std::memory_order_relaxed); }

bool int8_pairs_enabled() { return pairs_on.load(std::memory_order_relaxed); }

}  // namespace rknn::emulator
#endif  // HWY_ONCE
