// The float GEMM against the plain triple loop it promises to equal bit for
// bit: each element summed from zero over p in order, products and sums
// rounded separately (this file is built with -ffp-contract=off, as the
// GEMM is), for every ISA this CPU has, packed either way, split or not.
#include "base/gemm_f32.h"
#include "base/half.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace rknn {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// C = C0 (+) A * B in the promised order.
std::vector<float> reference(int64_t m, int64_t n, int64_t k, const std::vector<float>& a, const std::vector<float>& b,
                             const std::vector<float>& c0, bool accumulate) {
    std::vector<float> c = c0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (int64_t p = 0; p < k; ++p) sum += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(p * n + j)];
            float& out = c[static_cast<size_t>(i * n + j)];
            out = accumulate ? out + sum : sum;
        }
    return c;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

struct Shape {
    int64_t m, n, k;
};

const Shape kShapes[] = {{1, 1, 1}, {2, 1100, 13}, {7, 17, 5}, {6, 16, 64}, {13, 33, 129}, {64, 48, 300}, {200, 70, 40}, {5, 300, 9}};

TEST(GemmF32, EqualsTheOrderedTripleLoopOnEveryPath) {
    std::vector<std::pair<const char*, detail::GemmF32Panels>> paths = {{"portable", detail::gemm_f32_panels_portable}};
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) paths.push_back({"avx2", detail::gemm_f32_panels_avx2});
    if (__builtin_cpu_supports("avx512f")) paths.push_back({"avx512f", detail::gemm_f32_panels_avx512});
#endif
    uint32_t seed = 1;
    for (const Shape& s : kShapes) {
        const auto a = random_floats(static_cast<size_t>(s.m * s.k), seed++);
        const auto b = random_floats(static_cast<size_t>(s.k * s.n), seed++);
        const auto c0 = random_floats(static_cast<size_t>(s.m * s.n), seed++);
        // B as given and as its transpose pack to the same panels.
        PackedGemmB packed, packed_t;
        pack_gemm_b(b.data(), s.n, s.k, s.n, &packed);
        std::vector<float> bt(b.size());
        for (int64_t p = 0; p < s.k; ++p)
            for (int64_t j = 0; j < s.n; ++j) bt[static_cast<size_t>(j * s.k + p)] = b[static_cast<size_t>(p * s.n + j)];
        pack_gemm_b_transposed(bt.data(), s.k, s.k, s.n, &packed_t);
        ASSERT_EQ(packed.data, packed_t.data);
        for (bool accumulate : {false, true}) {
            const auto want = reference(s.m, s.n, s.k, a, b, c0, accumulate);
            for (const auto& [name, run] : paths) {
                std::vector<float> c = c0;
                run(s.m, a.data(), s.k, packed, 0, packed.panels(), c.data(), s.n, accumulate);
                EXPECT_TRUE(same_bits(c, want)) << name << " " << s.m << "x" << s.n << "x" << s.k << " acc " << accumulate;
            }
            std::vector<float> c = c0;
            gemm_f32(s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n, accumulate);
            EXPECT_TRUE(same_bits(c, want)) << "gemm_f32 " << s.m << "x" << s.n << "x" << s.k;
        }
    }
}

// Large enough to be split over the host threads, by rows and by panels.
TEST(GemmF32, ThreadedProductsEqualTheReference) {
    for (const Shape& s : {Shape{300, 40, 200}, Shape{8, 640, 300}}) {
        const auto a = random_floats(static_cast<size_t>(s.m * s.k), 11);
        const auto b = random_floats(static_cast<size_t>(s.k * s.n), 12);
        const std::vector<float> c0(static_cast<size_t>(s.m * s.n), 0.0f);
        std::vector<float> c(c0.size(), 1.0f);
        gemm_f32(s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n, false);
        EXPECT_TRUE(same_bits(c, reference(s.m, s.n, s.k, a, b, c0, false))) << s.m << "x" << s.n;
    }
}

// Leading dimensions wider than the rows: only the rows' elements change.
TEST(GemmF32, HonoursLeadingDimensions) {
    const int64_t m = 9, n = 20, k = 7, lda = 11, ldb = 23, ldc = 29;
    const auto a = random_floats(static_cast<size_t>(m * lda), 21);
    const auto b = random_floats(static_cast<size_t>(k * ldb), 22);
    std::vector<float> c(static_cast<size_t>(m * ldc), -7.0f);
    gemm_f32(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, false);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
            float want = -7.0f;
            if (j < n) {
                want = 0.0f;
                for (int64_t p = 0; p < k; ++p) want += a[static_cast<size_t>(i * lda + p)] * b[static_cast<size_t>(p * ldb + j)];
            }
            EXPECT_EQ(c[static_cast<size_t>(i * ldc + j)], want) << i << "," << j;
        }
}

// Operands float16 holds (the emulator's fp16 convolutions): the tiles with
// fused multiply-adds give the floats of the separate multiply and add, bit
// for bit, since each product is exact in float32. Values span the float16
// range: subnormals, the largest finite, both signs.
TEST(GemmF32, HalvesProductsEqualTheSeparateMultiplyAndAdd) {
    std::mt19937 rng(909);
    const auto half_value = [&]() {
        uint16_t h = static_cast<uint16_t>(rng());
        if ((h & 0x7c00) == 0x7c00) h &= 0xbfff;  // no infinities or NaNs
        return half_to_float(h);
    };
    for (const auto& [m, k, n] : {std::tuple<int, int, int>{13, 480, 37}, {96, 27, 16}, {5, 3, 70}, {40, 240, 120}}) {
        SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + " on " + gemm_f32_halves_isa());
        std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n);
        for (float& v : a) v = half_value();
        for (float& v : b) v = half_value();
        PackedGemmB packed;
        pack_gemm_b(b.data(), n, k, n, &packed);
        for (bool accumulate : {false, true}) {
            std::vector<float> want(static_cast<size_t>(m) * n, 0.5f), got(want);
            gemm_f32_packed(m, a.data(), k, packed, want.data(), n, accumulate);
            gemm_f32_packed_halves(m, a.data(), k, packed, got.data(), n, accumulate);
            ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0) << "accumulate " << accumulate;
        }
    }
}

}  // namespace
}  // namespace rknn
