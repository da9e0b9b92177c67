#include "base/gemm_f32.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/parallel.h"

namespace rknn {
namespace detail {
namespace {
#define GEMM_VECTOR_BYTES 16
#include "base/gemm_f32_tiles.inc"
#undef GEMM_VECTOR_BYTES
}  // namespace

void gemm_f32_panels_portable(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                              int64_t last_panel, float* c, int64_t ldc, bool accumulate) {
    panels(m, a, lda, b, first_panel, last_panel, c, ldc, accumulate);
}

}  // namespace detail

namespace {

constexpr int kW = PackedGemmB::kPanel;
// Below this many multiply-adds a product stays on the calling thread.
constexpr int64_t kParallelMacs = int64_t{1} << 20;
// Up to this many rows, B is read in place rather than packed.
constexpr int64_t kFewRows = 2;
// Rows per chunk when rows are shared out: whole tiles on every ISA.
constexpr int64_t kRowsPerChunk = 12;

struct Dispatch {
    detail::GemmF32Panels panels;
    const char* name;
};

Dispatch pick() {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return {detail::gemm_f32_panels_avx512, "avx512f"};
    if (__builtin_cpu_supports("avx2")) return {detail::gemm_f32_panels_avx2, "avx2"};
#endif
    return {detail::gemm_f32_panels_portable, "portable"};
}

const Dispatch& dispatch() {
    static const Dispatch d = pick();
    return d;
}

Dispatch pick_halves() {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("fma")) {
        if (__builtin_cpu_supports("avx512f")) return {detail::gemm_f32_halves_panels_avx512, "avx512f+fma"};
        if (__builtin_cpu_supports("avx2")) return {detail::gemm_f32_halves_panels_avx2, "avx2+fma"};
    }
#endif
    return pick();
}

const Dispatch& dispatch_halves() {
    static const Dispatch d = pick_halves();
    return d;
}

// A product of a few rows: not worth packing B. Each row is summed into a
// block of columns in the tiles' order (from zero, p in order), then stored.
void few_rows(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc, bool accumulate) {
    constexpr int64_t kColumns = 512;
    float sum[kColumns];
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j0 = 0; j0 < n; j0 += kColumns) {
            const int64_t cols = std::min(kColumns, n - j0);
            std::fill(sum, sum + cols, 0.0f);
            for (int64_t p = 0; p < k; ++p) {
                const float av = a[i * lda + p];
                const float* brow = b + p * ldb + j0;
                for (int64_t j = 0; j < cols; ++j) sum[j] += av * brow[j];
            }
            float* crow = c + i * ldc + j0;
            if (accumulate) {
                for (int64_t j = 0; j < cols; ++j) crow[j] += sum[j];
            } else {
                std::copy(sum, sum + cols, crow);
            }
        }
    }
}

// Sizes the panels without clearing them (the packing writes every used
// column); only the last panel's padding columns are zeroed.
void resize_packed(int64_t k, int64_t n, PackedGemmB* out) {
    out->k = k;
    out->n = n;
    out->data.resize(static_cast<size_t>(out->panels() * k * kW));
    const int64_t cols = n - (out->panels() - 1) * kW;
    if (cols == kW || k == 0) return;
    float* last = out->data.data() + (out->panels() - 1) * k * kW;
    for (int64_t r = 0; r < k; ++r) std::fill(last + r * kW + cols, last + (r + 1) * kW, 0.0f);
}

// Panels are packed over the host's threads when B is large.
constexpr int64_t kParallelPackFloats = int64_t{1} << 16;

}  // namespace

void pack_gemm_b(const float* b, int64_t ldb, int64_t k, int64_t n, PackedGemmB* out) {
    resize_packed(k, n, out);
    const int64_t panels = out->panels();
    parallel_for(panels, k * n >= kParallelPackFloats ? 1 : std::max<int64_t>(panels, 1), [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int64_t cols = std::min<int64_t>(kW, n - p * kW);
            float* panel = out->data.data() + p * k * kW;
            for (int64_t r = 0; r < k; ++r)
                std::memcpy(panel + r * kW, b + r * ldb + p * kW, sizeof(float) * static_cast<size_t>(cols));
        }
    });
}

void pack_gemm_b_transposed(const float* bt, int64_t ldb, int64_t k, int64_t n, PackedGemmB* out) {
    resize_packed(k, n, out);
    for (int64_t col = 0; col < n; ++col) {
        float* panel = out->data.data() + (col / kW) * k * kW + col % kW;
        const float* src = bt + col * ldb;
        for (int64_t r = 0; r < k; ++r) panel[r * kW] = src[r];
    }
}

void gemm_f32_packed(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, float* c, int64_t ldc,
                     bool accumulate) {
    if (m <= 0 || b.n <= 0) return;
    dispatch().panels(m, a, lda, b, 0, b.panels(), c, ldc, accumulate);
}

void gemm_f32_packed_halves(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, float* c, int64_t ldc,
                            bool accumulate) {
    if (m <= 0 || b.n <= 0) return;
    dispatch_halves().panels(m, a, lda, b, 0, b.panels(), c, ldc, accumulate);
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
              int64_t ldc, bool accumulate) {
    if (m <= 0 || n <= 0) return;
    if (m <= kFewRows) {
        few_rows(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
        return;
    }
    PackedGemmB packed;
    pack_gemm_b(b, ldb, k, n, &packed);
    const Dispatch& d = dispatch();
    const int64_t macs = m * n * std::max<int64_t>(k, 1);
    if (macs < kParallelMacs || host_threads() == 1) {
        d.panels(m, a, lda, packed, 0, packed.panels(), c, ldc, accumulate);
        return;
    }
    // Rows in whole tiles when there are enough of them, else panels of columns.
    if (m >= 4 * kRowsPerChunk * host_threads()) {
        parallel_for(m, kRowsPerChunk, [&](int64_t r0, int64_t r1) {
            d.panels(r1 - r0, a + r0 * lda, lda, packed, 0, packed.panels(), c + r0 * ldc, ldc, accumulate);
        });
    } else {
        parallel_for(packed.panels(), 1, [&](int64_t p0, int64_t p1) {
            d.panels(m, a, lda, packed, p0, p1, c, ldc, accumulate);
        });
    }
}

const char* gemm_f32_isa() { return dispatch().name; }

const char* gemm_f32_halves_isa() { return dispatch_halves().name; }

}  // namespace rknn
