// floats_to_halves / halves_to_floats (base/half.h) with the CPU's own
// binary16 conversions where it has them: x86's F16C (Highway's AVX2 and
// AVX-512 targets) and AArch64 (NEON, SVE). Those round to nearest even and
// handle subnormals and infinities as float_to_half does; NaNs differ (the
// hardware keeps payload bits and quiets signalling NaNs), so NaN lanes are
// set to float_to_half's / half_to_float's bits around the conversion.
// Highway's other targets emulate the conversion (truncating on SSE4), so
// they take the portable loops. Highway re-includes this file once per
// target (foreach_target.h); the part under HWY_ONCE dispatches.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "base/half_arrays.cc"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <cstdint>

#include "base/half.h"

HWY_BEFORE_NAMESPACE();
namespace rknn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if (HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)) || HWY_ARCH_ARM_A64
constexpr bool kHardwareHalves = true;
#else
constexpr bool kHardwareHalves = false;
#endif

using DF = hn::ScalableTag<float>;
using DH = hn::Rebind<hwy::float16_t, DF>;
using DI = hn::RebindToSigned<DF>;
using DU = hn::RebindToUnsigned<DF>;

void FloatsToHalves(const float* in, uint8_t* out, size_t n) {
    size_t i = 0;
    // Halves stored through float16_t pointers need their alignment.
    if constexpr (kHardwareHalves) {
        if (reinterpret_cast<uintptr_t>(out) % alignof(hwy::float16_t) == 0) {
            const DF df;
            const DH dh;
            const DI di;
            const auto abs_mask = hn::Set(di, 0x7fffffff), infinity = hn::Set(di, 0x7f800000);
            const auto sign_mask = hn::Set(di, static_cast<int32_t>(0x80000000u)), quiet = hn::Set(di, 0x7fc00000);
            auto* dst = reinterpret_cast<hwy::float16_t*>(out);
            const size_t lanes = hn::Lanes(df);
            for (; i + lanes <= n; i += lanes) {
                auto bits = hn::BitCast(di, hn::LoadU(df, in + i));
                // A NaN becomes the quiet NaN without payload: the hardware
                // turns that into 0x7e00 with its sign, as float_to_half does.
                const auto is_nan = hn::Gt(hn::And(bits, abs_mask), infinity);
                bits = hn::IfThenElse(is_nan, hn::Or(hn::And(bits, sign_mask), quiet), bits);
                hn::StoreU(hn::DemoteTo(dh, hn::BitCast(df, bits)), dh, dst + i);
            }
        }
    }
    if (i < n) detail::floats_to_halves_portable(in + i, out + 2 * i, n - i);
}

void HalvesToFloats(const uint8_t* in, float* out, size_t n) {
    size_t i = 0;
    if constexpr (kHardwareHalves) {
        if (reinterpret_cast<uintptr_t>(in) % alignof(hwy::float16_t) == 0) {
            const DF df;
            const DH dh;
            const DI di;
            const DU du;
            const hn::Rebind<uint16_t, DF> du16;
            const auto magnitude_mask = hn::Set(du, 0x7fffu), sign_bit = hn::Set(du, 0x8000u);
            const auto infinity = hn::Set(di, 0x7c00);
            const auto exponent = hn::Set(du, 0x7f800000u);
            const auto* src = reinterpret_cast<const hwy::float16_t*>(in);
            const size_t lanes = hn::Lanes(df);
            for (; i + lanes <= n; i += lanes) {
                const auto h = hn::LoadU(dh, src + i);
                const auto bits = hn::PromoteTo(du, hn::BitCast(du16, h));
                const auto magnitude = hn::And(bits, magnitude_mask);
                // half_to_float keeps a NaN's payload as it is (a signalling
                // NaN stays signalling), where the hardware quiets it.
                const auto nan = hn::Or(hn::Or(hn::ShiftLeft<16>(hn::And(bits, sign_bit)), hn::ShiftLeft<13>(magnitude)),
                                        exponent);
                const auto is_nan = hn::RebindMask(df, hn::Gt(hn::BitCast(di, magnitude), infinity));
                hn::StoreU(hn::IfThenElse(is_nan, hn::BitCast(df, nan), hn::PromoteTo(df, h)), df, out + i);
            }
        }
    }
    if (i < n) detail::halves_to_floats_portable(in + 2 * i, out + i, n - i);
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace rknn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rknn {

HWY_EXPORT(FloatsToHalves);
HWY_EXPORT(HalvesToFloats);
HWY_EXPORT(TargetName);

void floats_to_halves(const float* in, uint8_t* out, size_t n) { HWY_DYNAMIC_DISPATCH(FloatsToHalves)(in, out, n); }

void halves_to_floats(const uint8_t* in, float* out, size_t n) { HWY_DYNAMIC_DISPATCH(HalvesToFloats)(in, out, n); }

const char* half_arrays_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace rknn
#endif  // HWY_ONCE
