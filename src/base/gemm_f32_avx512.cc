// gemm_f32's tile loops compiled for AVX512 (chosen at run time on CPUs that have it).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/gemm_f32.h"

namespace rknn::detail {
namespace {
#define GEMM_VECTOR_BYTES 64
#include "base/gemm_f32_tiles.inc"
#undef GEMM_VECTOR_BYTES
}  // namespace

void gemm_f32_panels_avx512(int64_t m, const float* a, int64_t lda, const PackedGemmB& b, int64_t first_panel,
                          int64_t last_panel, float* c, int64_t ldc, bool accumulate) {
    panels(m, a, lda, b, first_panel, last_panel, c, ldc, accumulate);
}

}  // namespace rknn::detail
