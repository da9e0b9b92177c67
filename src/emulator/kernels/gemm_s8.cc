#include "emulator/kernels/gemm_s8.h"

#include <algorithm>
#include <cstring>

namespace rknn::emulator {

namespace {

using GemmFn = void (*)(int, const uint8_t*, size_t, const PackedWeightsS8&, int, int, int32_t*, size_t);
using RowsFn = void (*)(int, const GemmRows&, const PackedWeightsS8&, int, int, int32_t*, size_t);

// An implementation takes A either row-major (fn) or as addressed rows (rows_fn).
struct Choice {
    GemmFn fn;
    RowsFn rows_fn;
    const char* name;
    bool int16_layout;
};

Choice choose() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw")) {
        return {nullptr, detail::gemm_u8s8_rows_avx512vnni, "avx512vnni", false};
    }
    if (__builtin_cpu_supports("avx2")) return {detail::gemm_u8s8_avx2, nullptr, "avx2", true};
#endif
    return {detail::gemm_u8s8_generic, nullptr, "generic", false};
}

// Rows handed to one row-major call at a time when A comes as addressed rows
// (fewer when rows are long: the gathered rows stay within kGatherBytes).
constexpr int kGatherRows = 240;
constexpr size_t kGatherBytes = size_t{4} << 20;

// Row-major A as addressed rows: a pointer per row, offsets 4g.
void run_row_major_as_rows(RowsFn fn, int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first,
                           int last, int32_t* c, size_t ldc) {
    thread_local std::vector<const uint8_t*> rows;
    thread_local std::vector<uint32_t> offsets;
    rows.resize(static_cast<size_t>(m));
    for (int r = 0; r < m; ++r) rows[static_cast<size_t>(r)] = a + static_cast<size_t>(r) * lda;
    const size_t groups = static_cast<size_t>(b.k_padded / PackedWeightsS8::kDepthGroup);
    if (offsets.size() < groups) {
        offsets.resize(groups);
        for (size_t g = 0; g < groups; ++g) offsets[g] = static_cast<uint32_t>(g * PackedWeightsS8::kDepthGroup);
    }
    GemmRows view;
    view.rows = rows.data();
    view.offsets = offsets.data();
    fn(m, view, b, first, last, c, ldc);
}

// Addressed rows for a row-major kernel: gathered into biased rows, a batch at a time.
void run_rows_as_row_major(GemmFn fn, int m, const GemmRows& a, const PackedWeightsS8& b, int first, int last,
                           int32_t* c, size_t ldc) {
    thread_local std::vector<uint8_t> buffer;
    const size_t lda = static_cast<size_t>(b.k_padded);
    const size_t groups = lda / PackedWeightsS8::kDepthGroup;
    const uint32_t flip = 0x01010101u * a.flip;
    const int batch = static_cast<int>(std::clamp<size_t>(kGatherBytes / std::max<size_t>(lda, 1), 1, kGatherRows));
    for (int r0 = 0; r0 < m; r0 += batch) {
        const int rows = std::min(batch, m - r0);
        buffer.resize(static_cast<size_t>(rows) * lda);
        for (int r = 0; r < rows; ++r) {
            const uint8_t* src = a.rows[r0 + r];
            uint8_t* dst = buffer.data() + static_cast<size_t>(r) * lda;
            for (size_t g = 0; g < groups; ++g) {
                uint32_t v;
                std::memcpy(&v, src + a.offsets[g], 4);
                v ^= flip;
                std::memcpy(dst + 4 * g, &v, 4);
            }
        }
        fn(rows, buffer.data(), lda, b, first, last, c + static_cast<size_t>(r0) * ldc, ldc);
    }
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

namespace {

// Blocks go in pairs (n_blocks is even): whole pairs only, so that the pair
// kernels never reach outside the range or the packed weights.
bool pair_range(const PackedWeightsS8& b, int first_block, int last_block, int* first, int* last) {
    *first = std::max(0, first_block) & ~1;
    *last = std::min((last_block + 1) & ~1, b.n_blocks);
    return *first < *last;
}

}  // namespace

void gemm_u8s8(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int32_t* c, size_t ldc) {
    gemm_u8s8_blocks(m, a, lda, b, 0, b.n_blocks, c, ldc);
}

void gemm_u8s8_blocks(int m, const uint8_t* a, size_t lda, const PackedWeightsS8& b, int first_block, int last_block,
                      int32_t* c, size_t ldc) {
    int first, last;
    if (m <= 0 || !pair_range(b, first_block, last_block, &first, &last)) return;
    const Choice& impl = chosen();
    if (impl.fn != nullptr) {
        impl.fn(m, a, lda, b, first, last, c, ldc);
    } else {
        run_row_major_as_rows(impl.rows_fn, m, a, lda, b, first, last, c, ldc);
    }
}

namespace detail {

void gemm_u8s8_rows_gathered_generic(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block,
                                     int last_block, int32_t* c, size_t ldc) {
    int first, last;
    if (m > 0 && pair_range(b, first_block, last_block, &first, &last))
        run_rows_as_row_major(gemm_u8s8_generic, m, a, b, first, last, c, ldc);
}

}  // namespace detail

void gemm_u8s8_rows(int m, const GemmRows& a, const PackedWeightsS8& b, int first_block, int last_block, int32_t* c,
                    size_t ldc) {
    int first, last;
    if (m <= 0 || !pair_range(b, first_block, last_block, &first, &last)) return;
    const Choice& impl = chosen();
    if (impl.rows_fn != nullptr) {
        impl.rows_fn(m, a, b, first, last, c, ldc);
    } else {
        run_rows_as_row_major(impl.fn, m, a, b, first, last, c, ldc);
    }
}

const char* gemm_u8s8_isa() { return chosen().name; }

}  // namespace rknn::emulator
