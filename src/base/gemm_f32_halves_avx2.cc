// gemm_f32's tile loops for operands that float16 holds (gemm_f32_packed_halves),
// compiled for AVX2 with fused multiply-adds: each product of two such
// values is exact in float32, so a fused multiply-add rounds once where the
// separate multiply and add round once too (the product's rounding does
// nothing), and the floats are those of gemm_f32_packed.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/gemm_f32.h"

namespace rknn::detail {
namespace {
#define GEMM_VECTOR_BYTES 32
#include "base/gemm_f32_tiles.inc"
#undef GEMM_VECTOR_BYTES
}  // namespace

void gemm_f32_halves_panels_avx2(int64_t m, const float* a, int64_t lda, const PackedGemmB& b,
                                 int64_t first_panel, int64_t last_panel, float* c, int64_t ldc, bool accumulate) {
    panels(m, a, lda, b, first_panel, last_panel, c, ldc, accumulate);
}

}  // namespace rknn::detail
