// Helpers shared by the matmul demos: operands in the element type an attr
// names, laid out the way its dims say, and the CPU reference they are
// checked against. Written against include/ only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rknn_matmul_api.h"

namespace examples {

// A matrix of `rows` x `cols` values held as doubles (integer values for
// integer types, values a float16 holds exactly for float types).
struct Matrix {
    int rows = 0, cols = 0;
    std::vector<double> values;
    double at(int r, int c) const { return values[static_cast<size_t>(r) * cols + c]; }
};

// Random values that `type` holds exactly: int4 -8..7, int8 -128..127,
// float16 in [-1, 1).
Matrix random_matrix(int rows, int cols, rknn_tensor_type type, uint32_t seed);

// Writes `m` into `dst` in the layout of `attr` (2-D: rows x cols, or cols
// x rows for a TP_NORM B; 3-D: A's native [K/s][M][s]; 4-D: B's native
// [N/sn][K/sk][sn][sk]). B's native layout is made with
// rknn_B_normal_layout_to_native_layout, as the SDK demo does. false if the
// attr's layout or type is not one these demos write.
bool write_matrix(const Matrix& m, const rknn_matmul_tensor_attr& attr, bool is_b, rknn_matmul_info* info, void* dst);

// Reads C (M x N) from `src` in the layout of `attr` (2-D or C's native
// [N/s][M][s]).
Matrix read_matrix(const void* src, const rknn_matmul_tensor_attr& attr, int rows, int cols);

// C = A x B in double, with per-layer scales and zero points (identity
// when none were set): (a - a_zp)(b - b_zp) summed, times a_scale * b_scale.
Matrix reference_matmul(const Matrix& a, const Matrix& b, double a_scale = 1, int a_zp = 0, double b_scale = 1,
                        int b_zp = 0);

// Compares `got` with `want` for C's type: integers exactly (int8 within one
// code, as rounding the real value may go either way at a tie), float32 and
// float16 within a relative bound. Prints the first mismatch.
bool same_result(const Matrix& got, const Matrix& want, rknn_tensor_type c_type, int k, double c_scale = 1,
                 int c_zp = 0);

}  // namespace examples
