// Where each element of A, B and C lives in the layout a matmul context was
// created with (runtime-spec 8.2): NORM, TP_NORM (B) and NATIVE, with B's K
// segments, and int4 elements two to a byte, the even element in the low
// nibble (as the vendor demo writes them).
#pragma once

#include <cstdint>
#include <vector>

#include "matmul/matmul_rules.h"

namespace rknn::matmul {

// Element offsets (not bytes) for one shape.
struct Offsets {
    const Plan* plan = nullptr;
    int64_t m = 0, k = 0, n = 0;

    int64_t a(int64_t row, int64_t col) const;  // A[row][col], row < M, col < K
    int64_t b(int64_t row, int64_t col) const;  // B[row][col], row < K, col < N
    int64_t c(int64_t row, int64_t col) const;  // C[row][col], row < M, col < N
};

// Element (row, col) of a rows-row matrix in a tiled layout of width `sub`.
inline int64_t tiled_index(int64_t row, int64_t col, int64_t rows, int64_t sub) {
    return (col / sub) * rows * sub + row * sub + col % sub;
}

// A rows x cols matrix of `elem_bytes` elements from one tiled layout to
// another, a contiguous run at a time. A layout of tile width `sub` keeps
// element (row, col) at (col / sub) * rows * sub + row * sub + col % sub:
// sub = cols is row-major (NORM), sub = 8/16/32 a NATIVE A or C, or the
// NPU's feature cube (16 bytes of channels per atom).
void copy_tiled(const uint8_t* src, int64_t src_sub, uint8_t* dst, int64_t dst_sub, int64_t rows, int64_t cols,
                size_t elem_bytes);

// One element as an int (integer types) or a float (float types).
int32_t load_int(const uint8_t* base, int64_t index, Elem e);
float load_float(const uint8_t* base, int64_t index, Elem e);
void store_int(uint8_t* base, int64_t index, Elem e, int32_t value);  // value within the type's range
void store_float(uint8_t* base, int64_t index, Elem e, float value);

// B from NORM [K][N] into `plan`'s NATIVE layout (with its K segments);
// padding written as zero. `out` holds b_bytes() of a NATIVE plan.
void b_norm_to_native(const Plan& plan, const uint8_t* in, uint8_t* out, int64_t k, int64_t n);

}  // namespace rknn::matmul
