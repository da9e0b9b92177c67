#include "emulator/kernels/gemm_s8.h"

#include <algorithm>
#include <cstring>

namespace rknn::emulator {

namespace {

using GemmFn = void (*)(int, const uint8_t*, size_t, const PackedWeightsS8&, int, int, int32_t*, size_t);

struct Choice {
    GemmFn fn;
    const char* name;
    bool int16_layout;
};

Choice choose() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw")) {
        return {detail::gemm_u8s8_avx512vnni, "avx512vnni", false};
    }
    if (__builtin_cpu_supports("avx2")) return {detail::gemm_u8s8_avx2, "avx2", true};
#endif
    return {detail::gemm_u8s8_generic, "generic", false};
}

const Choice& chosen() {
    static const Choice c = choose();
    return c;
}

void pack_int16(const int8_t* b, int n, int k, size_t ldb, PackedWeightsS8* out) {
    constexpr int kCb = PackedWeightsS8::kColumnBlock;
    const size_t pairs = static_cast<size_t>(out->k_padded / 2);
    out->data16.assign(static_cast<size_t>(out->n_blocks) * pairs * kCb * 2, 0);
    for (int col = 0; col < n; ++col) {
        const int8_t* row = b + static_cast<size_t>(col) * ldb;
        const size_t block = static_cast<size_t>(col / kCb), lane = static_cast<size_t>(col % kCb);
        for (int kk = 0; kk < k; ++kk) {
            out->data16[((block * pairs + static_cast<size_t>(kk / 2)) * kCb + lane) * 2 + static_cast<size_t>(kk % 2)] = row[kk];
        }
    }
}

}  // namespace

void pack_weights(const int8_t* b, int n, int k, size_t ldb, PackedWeightsS8* out) {
    constexpr int kCb = PackedWeightsS8::kColumnBlock;
    constexpr int kDg = PackedWeightsS8::kDepthGroup;
    out->n = n;
    out->k = k;
    out->k_padded = (k + kDg - 1) / kDg * kDg;
    out->n_blocks = (n + kCb - 1) / kCb;
    out->n_blocks += out->n_blocks & 1;  // the fast kernel takes blocks in pairs
    const size_t groups = static_cast<size_t>(out->k_padded / kDg);
    out->data.assign(static_cast<size_t>(out->n_blocks) * groups * kCb * kDg, 0);
    out->column_bias.assign(static_cast<size_t>(out->n_blocks) * kCb, 0);
    for (int col = 0; col < n; ++col) {
        const int8_t* row = b + static_cast<size_t>(col) * ldb;
        const size_t block = static_cast<size_t>(col / kCb);
        const size_t lane = static_cast<size_t>(col % kCb);
        int32_t sum = 0;
        for (int kk = 0; kk < k; ++kk) {
            const size_t g = static_cast<size_t>(kk / kDg);
            out->data[((block * groups + g) * kCb + lane) * kDg + static_cast<size_t>(kk % kDg)] = row[kk];
            sum += row[kk];
        }
        out->column_bias[static_cast<size_t>(col)] = 128 * sum;
    }
    if (chosen().int16_layout) pack_int16(b, n, k, ldb, out);
}

namespace detail {

void gemm_u8s8_generic(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block,
                       int last_block, int32_t* c, size_t ldc) {
    constexpr int kCb = PackedWeightsS8::kColumnBlock;
    constexpr int kDg = PackedWeightsS8::kDepthGroup;
    const int groups = b.k_padded / kDg;
    for (int row = 0; row < m; ++row) {
        const uint8_t* ar = a + static_cast<size_t>(row) * lda;
        for (int blk = first_block; blk < last_block && blk * kCb < b.n; ++blk) {
            int32_t acc[kCb] = {};
            const int8_t* bb = b.data.data() + static_cast<size_t>(blk) * groups * kCb * kDg;
            for (int g = 0; g < groups; ++g) {
                const uint8_t* a4 = ar + g * kDg;
                const int8_t* b4 = bb + static_cast<size_t>(g) * kCb * kDg;
                for (int j = 0; j < kCb; ++j) {
                    acc[j] += a4[0] * b4[j * kDg + 0] + a4[1] * b4[j * kDg + 1] + a4[2] * b4[j * kDg + 2] +
                              a4[3] * b4[j * kDg + 3];
                }
            }
            const int cols = std::min(kCb, b.n - blk * kCb);
            for (int j = 0; j < cols; ++j) {
                const int col = blk * kCb + j;
                c[static_cast<size_t>(row) * ldc + col] = acc[j] - b.column_bias[static_cast<size_t>(col)];
            }
        }
    }
}

}  // namespace detail

void gemm_u8s8(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int32_t* c, size_t ldc) {
    chosen().fn(m, a, lda, b, 0, b.n_blocks, c, ldc);
}

void gemm_u8s8_blocks(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block, int last_block,
                      int32_t* c, size_t ldc) {
    // Blocks go in pairs (n_blocks is even): whole pairs only, so that the
    // pair kernels never reach outside the range or the packed weights.
    const int first = std::max(0, first_block) & ~1;
    const int last = std::min((last_block + 1) & ~1, b.n_blocks);
    if (first < last) chosen().fn(m, a, lda, b, first, last, c, ldc);
}

const char* gemm_u8s8_isa() { return chosen().name; }

}  // namespace rknn::emulator
