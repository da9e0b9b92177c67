// The plain definition of the matmul API's arithmetic (runtime-spec 8.2),
// which every faster path is held to: C = A x B over one row of A and one
// row of B transposed at a time, in K order.
//
// Integers: each product is (a - zp_a) * (b - zp_b), summed exactly (int64).
// With B's scales per group, each group's sum is scaled on its own; the real
// value is the sum over groups of scale_a * scale_b * sum, in double.
// Floats: products of float16 or bfloat16 values are exact in float32 and
// are summed in float32, in K order.
#pragma once

#include <cstdint>
#include <vector>

namespace rknn::cpu {

// B's quantisation: one (scale, zp) for the layer, one per column of C, or
// one per group of `group_size` K rows and column, [K / group_size][N] with
// N fastest (the vendor demo's order).
struct MatmulBQuant {
    enum class Mode { kLayer, kChannel, kGroup } mode = Mode::kLayer;
    int64_t group_size = 0;
    std::vector<float> scale;
    std::vector<int32_t> zp;
    // Index into scale / zp for K row `k` and column `n`.
    int64_t at(int64_t k, int64_t n, int64_t columns) const {
        switch (mode) {
        case Mode::kLayer: return 0;
        case Mode::kChannel: return n;
        case Mode::kGroup: return (k / group_size) * columns + n;
        }
        return 0;
    }
};

// Integer A [M][K] and B transposed [N][K]: the exact sums into `raw`
// ([M][N], zero points taken off) and, when `real` is given, their real
// values into it (scales applied per group as above).
void matmul_int_reference(int64_t m, int64_t k, int64_t n, const int32_t* a, int32_t a_zp, float a_scale,
                          const int32_t* bt, const MatmulBQuant& b, int64_t* raw, double* real);

// Float A [M][K] and B transposed [N][K] into C [M][N], float32 sums.
void matmul_float_reference(int64_t m, int64_t k, int64_t n, const float* a, const float* bt, float* c);

}  // namespace rknn::cpu
