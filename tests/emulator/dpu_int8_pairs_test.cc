// The exact form of the int8 Add lanes (kernels/dpu_int8_pairs.h) against
// an int64 model of the plan and against the staged int32 lanes, on plans
// drawn around what prepare_binary writes (integer multipliers) and beyond.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "emulator/fixed_point.h"
#include "emulator/kernels/dpu_int8_lanes.h"
#include "emulator/kernels/dpu_int8_pairs.h"
#include "emulator/kernels/dpu_requant.h"

namespace {

namespace em = rknn::emulator;

struct PairsGuard {
    ~PairsGuard() { em::set_int8_pairs(true); }
};

// An integer that is sometimes at the int16 limits, sometimes beyond them.
double draw_multiplier(std::mt19937& rng) {
    switch (rng() % 6) {
    case 0: return rng() % 2 ? -32768.0 : 32767.0;
    case 1: return static_cast<double>(static_cast<int>(rng() % 7) - 3);
    case 2: return 40000.0;  // beyond 16 bits: the staged lanes keep it
    case 3: {  // maybe a fraction
        const double m = static_cast<double>(rng() % 255 + 1);
        return std::ldexp(m, -static_cast<int>(rng() % 4));
    }
    default: return static_cast<double>(static_cast<int16_t>(rng()));
    }
}

// A standalone int8 Add's plan, channels a multiple of 16.
em::DpuRequantPlan draw_plan(std::mt19937& rng) {
    em::DpuRequantPlan p;
    p.int8_source = true;
    p.channels = 16 * (1 + static_cast<int>(rng() % 4));
    p.real_channels = rng() % 3 == 0 ? static_cast<int>(rng() % (p.channels + 1)) : p.channels;
    p.acc_stride = p.channels;
    p.bs_alu = rng() % 4 != 0;
    p.bs_mul = rng() % 4 != 0;
    const bool per_channel = rng() % 2 == 0;
    const double bias0 = static_cast<double>(static_cast<int>(rng() % 256) - 128);
    const double mul0 = draw_multiplier(rng);
    for (int c = 0; c < p.channels; ++c) {
        p.bias.push_back(per_channel ? static_cast<double>(static_cast<int>(rng() % 4001) - 2000) : bias0);
        p.scale.push_back(per_channel ? draw_multiplier(rng) : mul0);
    }
    if (rng() % 5 == 0) p.bs_lo = 0.0;  // a ReLU in BS: binds, the staged lanes run it
    p.ew = em::DpuRequantPlan::Ew::kAddInt8;
    p.ew_cvt = rng() % 4 != 0;
    p.ew_offset = static_cast<double>(static_cast<int>(rng() % 256) - 128);
    p.ew_scale = draw_multiplier(rng);
    if (rng() % 3 == 0) p.ew_lo = 0.0;  // the Add's fused ReLU
    if (rng() % 4 == 0) p.ew_hi = static_cast<double>(rng() % 100000);
    p.ew_atom_bytes = 16;
    if (rng() % 2) {
        p.out_scale = std::ldexp(1.0, -static_cast<int>(1 + rng() % 24));
    } else {
        const double m = static_cast<double>(static_cast<int16_t>(rng()));
        p.out_scale = std::ldexp(m, -static_cast<int>(rng() % 30));
    }
    p.out_offset = static_cast<double>(static_cast<int>(rng() % 301) - 150);
    p.out_atom_bytes = 16;
    return p;
}

// m / 2^s for a dyadic x.
void split(double x, int64_t* m, int* s) {
    *s = 0;
    while (x != std::trunc(x)) {
        x *= 2.0;
        ++*s;
    }
    *m = static_cast<int64_t>(x);
}

int64_t model_code(const em::DpuRequantPlan& p, int8_t a, int8_t b, int c) {
    int64_t v = a, m = 0;
    int s = 0;
    if (p.bs_alu) v = em::sat32(v + static_cast<int64_t>(p.bias[static_cast<size_t>(c)]));
    if (p.bs_mul) {
        split(p.scale[static_cast<size_t>(c)], &m, &s);
        v = em::shift_round(v * m, s);
    }
    v = em::saturate(v, static_cast<int64_t>(p.bs_lo), static_cast<int64_t>(p.bs_hi));
    int64_t op = b;
    if (p.ew_cvt) {
        split(p.ew_scale, &m, &s);
        op = em::shift_round((op + static_cast<int64_t>(p.ew_offset)) * m, s);
    }
    v = em::saturate(v + op, static_cast<int64_t>(p.ew_lo), static_cast<int64_t>(p.ew_hi));
    split(p.out_scale, &m, &s);
    const int64_t code = em::shift_round(v * m, s) + static_cast<int64_t>(p.out_offset);
    return c < p.real_channels ? em::saturate(code, -128, 127) : 0;
}

TEST(EmulatorDpuInt8Pairs, MatchTheModelAndTheStagedLanes) {
    PairsGuard guard;
    std::mt19937 rng(31337);
    int paired = 0, staged_only = 0, clamped = 0;
    int64_t checked = 0, saturated = 0;
    int unplanned = 0;
    for (int round = 0; round < 1000; ++round) {
        const em::DpuRequantPlan p = draw_plan(rng);
        em::DpuInt8Lanes lanes;
        if (!em::plan_int8_lanes(p, &lanes)) {
            ++unplanned;
            continue;
        }
        if (!lanes.pairs) {
            ++staged_only;
            continue;
        }
        ++paired;
        clamped += lanes.pair_clamp;
        SCOPED_TRACE("round " + std::to_string(round) + " on " + em::dpu_int8_pairs_target());
        const int width = 1 + static_cast<int>(rng() % 40);
        const uint64_t surf = static_cast<uint64_t>(width) * 16;
        const size_t bytes = static_cast<size_t>(p.channels / 16) * surf;
        std::vector<int8_t> a(bytes), b(bytes);
        for (size_t i = 0; i < bytes; ++i) {
            // Every pair of extremes turns up in the first pixels.
            a[i] = static_cast<int8_t>(i < 64 ? (i % 2 ? 127 : -128) : static_cast<int>(rng()));
            b[i] = static_cast<int8_t>(i < 64 ? ((i / 2) % 2 ? 127 : -128) : static_cast<int>(rng()));
        }
        std::vector<uint8_t> got(bytes, 0xAA), staged(bytes, 0x55);
        em::set_int8_pairs(true);
        em::dpu_int8_lanes_row(lanes, a.data(), surf, width, b.data(), surf, got.data(), surf);
        em::set_int8_pairs(false);
        em::dpu_int8_lanes_row(lanes, a.data(), surf, width, b.data(), surf, staged.data(), surf);
        for (int x = 0; x < width; ++x) {
            for (int c = 0; c < p.channels; ++c) {
                const size_t at = static_cast<size_t>(c / 16) * surf + static_cast<size_t>(x) * 16 + c % 16;
                const int64_t want = model_code(p, a[at], b[at], c);
                ASSERT_EQ(static_cast<int8_t>(got[at]), want) << "pixel " << x << " channel " << c;
                ASSERT_EQ(staged[at], got[at]) << "pixel " << x << " channel " << c;
                saturated += want == -128 || want == 127;
                ++checked;
            }
        }
    }
    std::printf("%s: paired %d, staged only %d, not int32 lanes %d, clamped %d, %lld codes\n",
                em::dpu_int8_pairs_target(), paired, staged_only, unplanned, clamped, static_cast<long long>(checked));
    // Most draws pair; fractions, 32-bit multipliers and a BS ReLU do not.
    EXPECT_GT(paired, 200);
    EXPECT_GT(staged_only, 100);
    EXPECT_GT(clamped, 60);
    EXPECT_GT(checked, 150000);
    EXPECT_GT(saturated, checked / 20);
    EXPECT_LT(saturated, checked * 9 / 10);
}

// The staged lanes take plans the exact form refuses, and the switch only
// chooses between the two.
TEST(EmulatorDpuInt8Pairs, RefusesWhatItCannotRunExactly) {
    em::DpuRequantPlan p;
    p.int8_source = true;
    p.channels = p.real_channels = p.acc_stride = 16;
    p.bs_alu = p.bs_mul = true;
    p.bias.assign(16, -3.0);
    p.scale.assign(16, 20000.0);
    p.ew = em::DpuRequantPlan::Ew::kAddInt8;
    p.ew_cvt = true;
    p.ew_offset = 6.0;
    p.ew_scale = 9000.0;
    p.out_scale = std::ldexp(1.0, -15);
    em::DpuInt8Lanes lanes;
    ASSERT_TRUE(em::plan_int8_lanes(p, &lanes));
    EXPECT_TRUE(lanes.pairs) << "integer multipliers of 16 bits pair";
    EXPECT_FALSE(lanes.pair_clamp);
    EXPECT_EQ(lanes.pair_base[0], -3 * 20000 + 6 * 9000);

    em::DpuRequantPlan fraction = p;
    fraction.scale[5] = 20000.5;
    ASSERT_TRUE(em::plan_int8_lanes(fraction, &lanes));
    EXPECT_FALSE(lanes.pairs) << "a fractional BS multiplier rounds on the way";

    em::DpuRequantPlan relu = p;
    relu.bs_lo = 0.0;
    ASSERT_TRUE(em::plan_int8_lanes(relu, &lanes));
    EXPECT_FALSE(lanes.pairs) << "a BS clamp that binds";

    em::DpuRequantPlan wide = p;
    wide.ew_scale = 40000.0;
    ASSERT_TRUE(em::plan_int8_lanes(wide, &lanes));
    EXPECT_FALSE(lanes.pairs) << "an EW multiplier beyond 16 bits";
}

}  // namespace
