// Single-precision matrix product for the host's float work: the emulated
// NPU's fp16 convolutions (products and sums in fp32) and the CPU kernels'
// float convolutions and matrix multiplies.
//
//   C[m][n] (+)= sum over p of A[m][p] * B[p][n]
//
// B is packed once into panels of 16 columns; a register tile of rows by one
// panel then runs over k. Every element is summed in the same order (p = 0,
// 1, ... k - 1, from zero, then added to C when accumulating), with no fused
// multiply-add, whatever the ISA (AVX-512, AVX2, portable C++ or NEON) and
// however the rows are split over threads: the same floats on every host.
#pragma once

#include <cstdint>
#include <vector>

#include "base/uninit_vector.h"

namespace rknn {

struct PackedGemmB {
    static constexpr int kPanel = 16;  // columns per panel
    int64_t k = 0;
    int64_t n = 0;
    UninitVector<float> data;  // [n / 16 panels][k][16], the last panel zero padded

    int64_t panels() const { return (n + kPanel - 1) / kPanel; }
};

// B as k rows of n (row stride ldb), or transposed: n rows of k (row stride ldb).
void pack_gemm_b(const float* b, int64_t ldb, int64_t k, int64_t n, PackedGemmB* out);
void pack_gemm_b_transposed(const float* bt, int64_t ldb, int64_t k, int64_t n, PackedGemmB* out);

// C (m x b.n, row stride ldc) from A (m x b.k, row stride lda), on the calling thread.
void gemm_f32_packed(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, float* c, int64_t ldc,
                     bool accumulate);

// The same product when every element of A and B is a float16 value (the
// emulated NPU's fp16 convolutions): each product is then exact in float32,
// so on CPUs with fused multiply-adds the tiles use them (half the
// arithmetic) and the floats are still those of gemm_f32_packed.
void gemm_f32_packed_halves(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, float* c, int64_t ldc,
                            bool accumulate);

// Packs B (k x n, row stride ldb) and shares the rows of C out over the host threads.
void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc, bool accumulate);

// Which tile loops gemm_f32 uses on this CPU ("avx512f", "avx2", "portable").
const char* gemm_f32_isa();
// Which gemm_f32_packed_halves uses ("avx512f+fma", "avx2+fma", or gemm_f32_isa()'s).
const char* gemm_f32_halves_isa();

namespace detail {
// The tile loops, for the panels [first_panel, last_panel) of B.
using GemmF32Panels = void (*)(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                               int64_t last_panel, float* c, int64_t ldc, bool accumulate);
void gemm_f32_panels_portable(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                              int64_t last_panel, float* c, int64_t ldc, bool accumulate);
#if defined(__x86_64__)
void gemm_f32_panels_avx2(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                          int64_t last_panel, float* c, int64_t ldc, bool accumulate);
void gemm_f32_panels_avx512(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                            int64_t last_panel, float* c, int64_t ldc, bool accumulate);
// With fused multiply-adds, for operands float16 holds (gemm_f32_packed_halves).
void gemm_f32_halves_panels_avx2(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                                 int64_t last_panel, float* c, int64_t ldc, bool accumulate);
void gemm_f32_halves_panels_avx512(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                                   int64_t last_panel, float* c, int64_t ldc, bool accumulate);
#endif
}  // namespace detail

}  // namespace rknn
