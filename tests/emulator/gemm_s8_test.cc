// The emulator's int8 GEMM (every implementation this CPU has, through the
// public entry points) against a plain int64 product: shapes that cross the
// AVX2 path's row tiles (6), row passes (240) and k slices (512), partial
// column blocks, and column-block ranges that callers share out.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "emulator/kernels/gemm_s8.h"

namespace {

namespace em = rknn::emulator;

struct Problem {
    int m, k, n;
    std::vector<uint8_t> a;  // m x k_padded, tail bytes 128
    std::vector<int8_t> b;   // n x k
    size_t lda;
};

Problem make_problem(int m, int k, int n, std::mt19937& rng) {
    Problem p{m, k, n, {}, {}, static_cast<size_t>((k + 3) & ~3)};
    p.a.assign(static_cast<size_t>(m) * p.lda, 128);
    for (int r = 0; r < m; ++r)
        for (int j = 0; j < k; ++j) p.a[static_cast<size_t>(r) * p.lda + static_cast<size_t>(j)] = static_cast<uint8_t>(rng());
    p.b.resize(static_cast<size_t>(n) * k);
    for (int8_t& w : p.b) w = static_cast<int8_t>(rng());
    return p;
}

int64_t expected(const Problem& p, int r, int col) {
    int64_t sum = 0;
    for (int j = 0; j < p.k; ++j)
        sum += (int64_t{p.a[static_cast<size_t>(r) * p.lda + static_cast<size_t>(j)]} - 128) *
               p.b[static_cast<size_t>(col) * p.k + static_cast<size_t>(j)];
    return sum;
}

TEST(EmulatorGemm, ProductsMatchAPlainProduct) {
    std::mt19937 rng(77);
    const int shapes[][3] = {{1, 1, 1}, {7, 5, 17}, {241, 520, 33}, {300, 1300, 64}, {49, 4608, 40}, {13, 36, 96}};
    for (const auto& s : shapes) {
        const Problem p = make_problem(s[0], s[1], s[2], rng);
        em::PackedWeightsS8 packed;
        em::pack_weights(p.b.data(), p.n, p.k, static_cast<size_t>(p.k), &packed);
        std::vector<int32_t> c(static_cast<size_t>(p.m) * p.n, -1);
        em::gemm_u8s8(p.m, p.a.data(), p.lda, packed, c.data(), static_cast<size_t>(p.n));
        int differ = 0;
        for (int r = 0; r < p.m; ++r)
            for (int col = 0; col < p.n; ++col) differ += c[static_cast<size_t>(r) * p.n + col] != expected(p, r, col);
        EXPECT_EQ(differ, 0) << em::gemm_u8s8_isa() << " m " << p.m << " k " << p.k << " n " << p.n;
    }
}

TEST(EmulatorGemm, BlockRangesWriteTheirColumnsOnly) {
    std::mt19937 rng(78);
    const Problem p = make_problem(20, 70, 75, rng);  // 5 blocks of 16 columns, 6 after rounding to pairs
    em::PackedWeightsS8 packed;
    em::pack_weights(p.b.data(), p.n, p.k, static_cast<size_t>(p.k), &packed);
    ASSERT_EQ(packed.n_blocks, 6);
    // [1, 3) widens to the pairs [0, 4): columns 0..63.
    std::vector<int32_t> c(static_cast<size_t>(p.m) * p.n, -7);
    em::gemm_u8s8_blocks(p.m, p.a.data(), p.lda, packed, 1, 3, c.data(), static_cast<size_t>(p.n));
    int wrong = 0;
    for (int r = 0; r < p.m; ++r)
        for (int col = 0; col < p.n; ++col) {
            const int32_t got = c[static_cast<size_t>(r) * p.n + col];
            wrong += col < 64 ? got != expected(p, r, col) : got != -7;
        }
    EXPECT_EQ(wrong, 0);
    // The last pair holds the partial block: columns 64..74.
    em::gemm_u8s8_blocks(p.m, p.a.data(), p.lda, packed, 4, 6, c.data(), static_cast<size_t>(p.n));
    wrong = 0;
    for (int r = 0; r < p.m; ++r)
        for (int col = 0; col < p.n; ++col) wrong += c[static_cast<size_t>(r) * p.n + col] != expected(p, r, col);
    EXPECT_EQ(wrong, 0);
}

}  // namespace
