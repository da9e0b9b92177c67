// The emulator's int8 matrix product, the hot loop of every convolution:
//
//   C[m][n] = sum_k (A[m][k] - 128) * B[n][k]
//
// A holds input values biased by +128 (uint8, the form the x86 VNNI
// instruction takes), one row per output pixel; B holds int8 weights, one
// row per output channel, repacked once per task by pack_weights() for the
// implementation this CPU uses (AVX-512 VNNI, AVX2, or portable C++). Exact
// int32 arithmetic: every path gives the same result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rknn::emulator {

struct PackedWeightsS8 {
    static constexpr int kColumnBlock = 16;  // output channels per block
    static constexpr int kDepthGroup = 4;    // k values per 32-bit lane
    int n = 0;        // output channels
    int k = 0;        // reduction length
    int k_padded = 0; // k rounded up to kDepthGroup
    int n_blocks = 0; // ceil(n / 16), rounded up to an even count
    // [n_block][k / 4][16 columns][4 k], zero padded (VNNI and portable paths).
    std::vector<int8_t> data;
    // [n_block][k / 2][16 columns][2 k] as int16 (AVX2 path: vpmaddwd pairs).
    std::vector<int16_t> data16;
    std::vector<int32_t> column_bias;  // 128 * sum_k B[n][k]: what the +128 input bias adds
};

// B is n x k, row stride ldb bytes.
void pack_weights(const int8_t* b, int n, int k, size_t ldb, PackedWeightsS8* out);

// A: m rows of k_padded bytes (row stride lda >= k_padded, tail bytes 128);
// C: m x n int32, row stride ldc elements.
void gemm_u8s8(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int32_t* c, size_t ldc);

// The same for the columns of blocks [first_block, last_block) only (both
// even, as blocks go in pairs): callers share a wide product out by columns.
void gemm_u8s8_blocks(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block, int last_block,
                      int32_t* c, size_t ldc);

// A given by addresses: element k of row r is rows[r][offsets[k / 4] + k % 4]
// XOR flip. Convolutions read their windows from the input cube this way,
// the offsets giving each group of 4 k values its place in a window; flip is
// 0x80 for int8 bytes (made the +128-biased form) and 0 for biased ones. The
// bytes of k values beyond k are read but weigh nothing (their weights are 0).
struct GemmRows {
    const uint8_t* const* rows = nullptr;  // m entries
    const uint32_t* offsets = nullptr;     // k_padded / 4 entries
    uint8_t flip = 0;
};

// C (m x n int32, row stride ldc) for the columns of blocks [first_block,
// last_block) (rounded to pairs, as in gemm_u8s8_blocks).
void gemm_u8s8_rows(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block, int last_block, int32_t* c,
                    size_t ldc);

// Which implementation gemm_u8s8 uses on this CPU ("avx512vnni", "avx2", "generic").
const char* gemm_u8s8_isa();

namespace detail {
// gemm_u8s8_rows as builds without a rows kernel run it: the rows gathered
// for the portable row-major kernel (for tests on CPUs that have one).
void gemm_u8s8_rows_gathered_generic(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block,
                                     int last_block, int32_t* c, size_t ldc);

// The implementations, over column blocks [first_block, last_block).
void gemm_u8s8_generic(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block,
                       int last_block, int32_t* c, size_t ldc);
#if defined(__x86_64__)
void gemm_u8s8_avx2(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block, int last_block,
                    int32_t* c, size_t ldc);
void gemm_u8s8_rows_avx512vnni(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block, int last_block,
                               int32_t* c, size_t ldc);
#endif
}  // namespace detail

}  // namespace rknn::emulator
