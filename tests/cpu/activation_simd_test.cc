// The vector activations (cpu/kernels/activation_simd) against the scalar
// forms they replace on spans: the same floats for the clamp-like ones, the
// documented tolerance for the exp/tanh-based ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <hwy/targets.h>

#include "cpu/kernels/activation_simd.h"
#include "cpu/kernels/scalar_math.h"

namespace rknn::cpu::kernels {
namespace {

using graph::OpType;

// A sweep over [-lo, lo] with a step that hits no lane boundary, the
// special values, and a length that leaves a partial vector at the end.
std::vector<float> inputs(float lo) {
    std::vector<float> v;
    for (float x = -lo; x <= lo; x += lo / 4099.0f) v.push_back(x);
    const float specials[] = {0.0f, -0.0f, 1e-30f, -1e-30f, std::numeric_limits<float>::denorm_min(),
                              std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(), 3.0f, -3.0f, 6.0f, 20.0f, 20.0001f,
                              88.7f, 89.0f, -88.7f, -104.5f, 104.5f, 1e30f, -1e30f, 1e-7f, -1e-7f};
    for (float s : specials) v.push_back(s);
    v.push_back(0.5f);  // an odd length
    return v;
}

Activation make(OpType type) {
    Activation act;
    act.type = type;
    act.alpha = type == OpType::kLeakyRelu ? 0.1f : type == OpType::kHardSigmoid ? 0.2f : 1.67326319f;
    act.beta = 0.5f;
    act.gamma = 1.05070102f;
    act.min = -2.5f;
    act.max = 4.0f;
    act.tanh_approximation = true;
    return act;
}

std::string name_of(const Activation& act) { return graph::op_type_name(act.type); }

// Runs the vector form on a copy; fails the test if it has none.
std::vector<float> vector_form(const Activation& act, const std::vector<float>& x) {
    std::vector<float> y = x;
    EXPECT_TRUE(activation_span_simd(act, y.data(), static_cast<int64_t>(y.size()))) << name_of(act);
    return y;
}

// Runs `check` on every SIMD target the library was built for that this host
// has (Highway's test mock picks the target), then goes back to the best.
template <class F>
void on_every_target(const F& check) {
    for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
        hwy::SetSupportedTargetsForTest(target);
        SCOPED_TRACE(hwy::TargetName(target));
        ASSERT_STREQ(activation_simd_target(), hwy::TargetName(target)) << "the dispatch did not follow the mock";
        check();
        if (::testing::Test::HasFatalFailure()) break;
    }
    hwy::SetSupportedTargetsForTest(0);
}

bool same_float(float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// The clamp-like forms, and Clip with bounds at the zeros and infinities
// (where fmax/fmin and comparisons could disagree on the sign of a zero).
std::vector<Activation> clamp_like_forms() {
    std::vector<Activation> forms;
    for (OpType type : {OpType::kRelu, OpType::kClip, OpType::kLeakyRelu, OpType::kHardSigmoid, OpType::kHardSwish,
                        OpType::kIdentity}) {
        forms.push_back(make(type));
    }
    const float inf = std::numeric_limits<float>::infinity();
    for (auto [lo, hi] : {std::pair<float, float>{0.0f, 6.0f}, {-inf, 0.0f}, {-0.0f, inf}, {-0.0f, 0.0f}}) {
        Activation clip = make(OpType::kClip);
        clip.min = lo;
        clip.max = hi;
        forms.push_back(clip);
    }
    return forms;
}

TEST(ActivationSimd, ClampLikeFormsGiveTheScalarFormsFloats) {
    on_every_target([] {
        for (const Activation& form : clamp_like_forms()) {
            for (bool affine : {false, true}) {
                Activation act = form;
                if (affine) {
                    act.post_scale = 0.37f;
                    act.post_bias = -1.25f;
                }
                const std::vector<float> x = inputs(9.0f);
                const std::vector<float> y = vector_form(act, x);
                for (size_t i = 0; i < x.size(); ++i) {
                    const float want = apply_activation(act, x[i]);
                    ASSERT_TRUE(same_float(y[i], want)) << "op " << name_of(act) << " [" << act.min << ", " << act.max
                                                        << "] affine " << affine << " x=" << x[i] << ": " << y[i]
                                                        << " vs " << want;
                }
            }
        }
    });
}

void check_exp_and_tanh_forms() {
    for (OpType type : {OpType::kSigmoid, OpType::kSilu, OpType::kTanh, OpType::kElu, OpType::kSelu,
                        OpType::kSoftplus, OpType::kGelu}) {
        for (bool affine : {false, true}) {
            Activation act = make(type);
            if (affine) {
                act.post_scale = 1.0f / 6.0f;
                act.post_bias = 0.5f;
            }
            const std::vector<float> x = inputs(120.0f);
            const std::vector<float> y = vector_form(act, x);
            double worst = 0.0;
            for (size_t i = 0; i < x.size(); ++i) {
                const float want = apply_activation(act, x[i]);
                if (std::isnan(want) || std::isinf(want)) {
                    ASSERT_TRUE(same_float(y[i], want)) << "op " << name_of(act) << " x=" << x[i] << ": " << y[i];
                    continue;
                }
                const double scale = std::max({1.0, std::fabs(double(x[i])), std::fabs(double(want))});
                const double error = std::fabs(double(y[i]) - double(want)) / scale;
                worst = std::max(worst, error);
                ASSERT_LE(error, kActivationSimdTolerance)
                    << "op " << name_of(act) << " affine " << affine << " x=" << x[i] << ": " << y[i] << " vs " << want;
            }
            // Printed for the notes: how close each form comes.
            std::printf("%s %s%s: worst scaled error %.3g\n", activation_simd_target(), name_of(act).c_str(),
                        affine ? " (post affine)" : "", worst);
        }
    }
}

TEST(ActivationSimd, ExpAndTanhFormsStayWithinTheTolerance) {
    on_every_target([] { check_exp_and_tanh_forms(); });
}

TEST(ActivationSimd, FormsWithoutAVectorFormAreLeftToTheScalarLoop) {
    Activation gelu = make(OpType::kGelu);
    gelu.tanh_approximation = false;  // erf
    Activation clip = make(OpType::kClip);
    clip.min = std::numeric_limits<float>::quiet_NaN();
    for (const Activation& act : {gelu, clip}) {
        std::vector<float> x = inputs(5.0f);
        const std::vector<float> before = x;
        EXPECT_FALSE(activation_span_simd(act, x.data(), static_cast<int64_t>(x.size())));
        EXPECT_EQ(0, std::memcmp(x.data(), before.data(), x.size() * sizeof(float))) << "values were touched";
        // The span entry point still gives the scalar form's floats.
        apply_activation(act, x.data(), static_cast<int64_t>(x.size()));
        for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same_float(x[i], apply_activation(act, before[i])));
    }
}

// Long spans are cut into chunks over the host threads: each chunk must work
// on its own part of the span (one pass over the whole gives the answer).
TEST(ActivationSimd, ThreadedSpansEqualOnePass) {
    const Activation act = make(OpType::kSilu);
    std::vector<float> x(300001);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int64_t>(i % 2001) - 1000) / 97.0f;
    std::vector<float> threaded = x, single = x;
    apply_activation(act, threaded.data(), static_cast<int64_t>(threaded.size()));
    ASSERT_TRUE(activation_span_simd(act, single.data(), static_cast<int64_t>(single.size())));
    EXPECT_EQ(0, std::memcmp(threaded.data(), single.data(), x.size() * sizeof(float)));
}

}  // namespace
}  // namespace rknn::cpu::kernels
