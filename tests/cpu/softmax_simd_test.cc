// The vector softmax (cpu/kernels/softmax_simd) against the reference form it
// stands in for (double exp of each shifted value, double sum, one division):
// within kSoftmaxSimdTolerance on rows of every length around the vector
// width and PP-OCRv4 rec's 6625 classes, and rows the vector form must leave
// to the reference (a NaN or an infinity) refused untouched.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "cpu/kernels/softmax_simd.h"

namespace rknn::cpu::kernels {
namespace {

// normalization.cc's reference form, for one row.
std::vector<float> reference(const std::vector<float>& x) {
    float max = -INFINITY;
    for (float v : x) max = std::fmax(max, v);
    std::vector<double> e(x.size());
    double total = 0.0;
    for (size_t i = 0; i < x.size(); ++i) total += e[i] = std::exp(static_cast<double>(x[i] - max));
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(e[i] / total);
    return out;
}

TEST(SoftmaxSimd, RowsStayWithinTheToleranceOfTheReference) {
    std::mt19937 rng(6625);
    double worst = 0.0;
    int rows = 0;
    for (int64_t n : {1, 2, 7, 15, 16, 17, 31, 33, 100, 1000, 6625}) {
        for (float spread : {0.5f, 8.0f, 60.0f, 200.0f}) {
            std::uniform_real_distribution<float> dist(-spread, spread);
            std::vector<float> x(static_cast<size_t>(n));
            for (float& v : x) v = dist(rng);
            std::vector<float> got(x.size(), -1.0f);
            ASSERT_TRUE(softmax_row_simd(x.data(), got.data(), n)) << n;
            const std::vector<float> want = reference(x);
            for (size_t i = 0; i < x.size(); ++i) {
                const double bound = kSoftmaxSimdTolerance * std::fabs(want[i]) + FLT_MIN;
                const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
                worst = std::max(worst, diff / bound);
                ASSERT_LE(diff, bound) << "n " << n << " spread " << spread << " at " << i << ": " << got[i] << " vs "
                                       << want[i];
            }
            ++rows;
        }
    }
    std::printf("softmax (%s): %d rows, largest difference %.3f of the tolerance\n", softmax_simd_target(), rows, worst);
}

// In place (the output over the input) gives the same values.
TEST(SoftmaxSimd, InPlaceRowsGiveTheSameValues) {
    std::vector<float> x(203);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 9.0f;
    std::vector<float> apart(x.size());
    ASSERT_TRUE(softmax_row_simd(x.data(), apart.data(), static_cast<int64_t>(x.size())));
    ASSERT_TRUE(softmax_row_simd(x.data(), x.data(), static_cast<int64_t>(x.size())));
    EXPECT_EQ(x, apart);
}

TEST(SoftmaxSimd, RowsWithANanOrAnInfinityAreLeftToTheReference) {
    for (float special : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
        for (size_t at : {size_t{0}, size_t{17}, size_t{40}}) {  // in a whole vector and in the tail
            std::vector<float> x(41, 0.25f);
            x[at] = special;
            std::vector<float> out(x.size(), 7.0f);
            EXPECT_FALSE(softmax_row_simd(x.data(), out.data(), static_cast<int64_t>(x.size()))) << special << " at " << at;
            EXPECT_EQ(out, std::vector<float>(x.size(), 7.0f)) << "a refused row was written";
        }
    }
    float one = 1.0f, out = 0.0f;
    EXPECT_FALSE(softmax_row_simd(&one, &out, 0));
}

}  // namespace
}  // namespace rknn::cpu::kernels
