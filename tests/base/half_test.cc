// The inline float16 conversions against a plain bit-by-bit version: every
// half, every float around each rounding boundary, and a stride through all
// other floats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <hwy/highway.h>
#include <hwy/targets.h>

#include "base/half.h"

namespace {

using rknn::bits_float;
using rknn::float_bits;

// Round to nearest even, one case at a time.
uint16_t plain_float_to_half(float value) {
    const uint32_t bits = float_bits(value);
    const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7fffffffu;
    if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
    if (abs < 0x33000000u) return sign;
    uint32_t half = 0, rest = 0, halfway = 0;
    if (abs < 0x38800000u) {
        const uint32_t shift = 126 - (abs >> 23);
        const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
        half = mantissa >> shift;
        rest = mantissa & ((1u << shift) - 1);
        halfway = 1u << (shift - 1);
    } else {
        half = (abs >> 13) - (112u << 10);
        rest = abs & 0x1fffu;
        halfway = 0x1000u;
    }
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
}

float plain_half_to_float(uint16_t half) {
    const int exponent = (half >> 10) & 0x1f;
    const int mantissa = half & 0x3ff;
    const float magnitude = exponent == 31 ? (mantissa ? NAN : INFINITY)
                            : exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                            : std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
    return (half & 0x8000u) ? -magnitude : magnitude;
}

void expect_same(float value) {
    ASSERT_EQ(rknn::float_to_half(value), plain_float_to_half(value)) << std::hex << float_bits(value);
}

TEST(Half, EveryHalfWidensExactly) {
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        const float wide = rknn::half_to_float(static_cast<uint16_t>(h));
        const float plain = plain_half_to_float(static_cast<uint16_t>(h));
        if (std::isnan(plain)) {
            ASSERT_TRUE(std::isnan(wide)) << h;
            // The payload stays, so a NaN narrows back to a quiet NaN of its sign.
            ASSERT_EQ(float_bits(wide), ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13)) << h;
        } else {
            ASSERT_EQ(float_bits(wide), float_bits(plain)) << h;
            ASSERT_EQ(rknn::float_to_half(wide), h) << h;
        }
    }
}

TEST(Half, FloatsAroundEveryRoundingBoundaryNarrowToEven) {
    // The midpoint between each pair of neighbouring halves, and its float neighbours.
    for (uint32_t h = 0; h < 0x7c00u; ++h) {
        for (const uint32_t sign : {0u, 0x8000u}) {
            const double low = plain_half_to_float(static_cast<uint16_t>(h));
            const double high = h + 1 == 0x7c00u ? 65536.0 : plain_half_to_float(static_cast<uint16_t>(h + 1));
            const auto mid = static_cast<float>((low + high) / 2);
            const uint32_t bits = float_bits(mid) | (sign << 16);
            for (const uint32_t b : {bits - 1, bits, bits + 1}) expect_same(bits_float(b));
        }
    }
    for (const float special : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 65504.0f, 65519.99f, 65520.0f, 1e-8f})
        expect_same(special);
}

TEST(Half, AStrideThroughEveryFloatNarrowsLikeThePlainVersion) {
    for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) expect_same(bits_float(static_cast<uint32_t>(bits)));
}

// The array forms (branch-free, for vectorising) against the scalar ones:
// every half, and floats on the same stride plus each rounding boundary
// (h + 1/2 ulp, either side) of every finite half.
// The array forms on every SIMD target this host has (Highway's test mock
// picks the target): every half, floats around each rounding boundary and a
// stride through all others, NaNs with payloads, at offsets that leave tails
// for the portable loop, and from an odd address.
TEST(Half, ArrayConversionsEqualTheScalarOnes) {
    std::vector<uint8_t> halves(0x10000 * 2 + 1);
    for (uint32_t h = 0; h < 0x10000u; ++h) {
        const auto half = static_cast<uint16_t>(h);
        std::memcpy(halves.data() + 2 * h, &half, 2);
    }
    std::vector<float> floats;
    for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) floats.push_back(bits_float(static_cast<uint32_t>(bits)));
    for (uint32_t h = 0; h < 0x7c00u; ++h) {
        const float mid = (rknn::half_to_float(static_cast<uint16_t>(h)) + rknn::half_to_float(static_cast<uint16_t>(h + 1))) / 2;
        for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
            floats.push_back(f);
            floats.push_back(-f);
        }
    }
    for (uint32_t nan : {0x7f800001u, 0x7fbfffffu, 0x7fc00000u, 0x7fc01234u, 0x7fffffffu, 0xff800001u, 0xffc00000u})
        floats.push_back(bits_float(nan));
    int targets = 0;
    for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        SCOPED_TRACE(hwy::TargetName(target));
        ASSERT_STREQ(rknn::half_arrays_target(), hwy::TargetName(target)) << "the dispatch did not follow the mock";
        ++targets;
        for (size_t skip : {0, 3}) {  // 3: the vector loop ends short of the end
            const size_t count = 0x10000 - skip;
            std::vector<float> widened(count);
            rknn::halves_to_floats(halves.data() + 2 * skip, widened.data(), count);
            for (uint32_t h = static_cast<uint32_t>(skip); h < 0x10000u; ++h)
                ASSERT_EQ(float_bits(widened[h - skip]), float_bits(rknn::half_to_float(static_cast<uint16_t>(h))))
                    << std::hex << h;
        }
        // An odd address: the halves of 0x0100, 0x0200, ... read one byte on.
        std::vector<uint8_t> shifted(halves.size());
        std::memcpy(shifted.data() + 1, halves.data(), halves.size() - 1);
        std::vector<float> odd(0x10000);
        rknn::halves_to_floats(shifted.data() + 1, odd.data(), odd.size());
        for (uint32_t h = 0; h < 0x10000u; ++h)
            ASSERT_EQ(float_bits(odd[h]), float_bits(rknn::half_to_float(static_cast<uint16_t>(h)))) << std::hex << h;

        std::vector<uint8_t> narrowed(floats.size() * 2 + 1);
        for (size_t at : {0, 1}) {  // 1: halves written to an odd address
            rknn::floats_to_halves(floats.data(), narrowed.data() + at, floats.size());
            for (size_t i = 0; i < floats.size(); ++i) {
                uint16_t got;
                std::memcpy(&got, narrowed.data() + at + 2 * i, 2);
                ASSERT_EQ(got, rknn::float_to_half(floats[i])) << std::hex << float_bits(floats[i]);
            }
        }
    }
    hwy::SetSupportedTargetsForTest(0);
    EXPECT_GT(targets, 0);
}

}  // namespace
