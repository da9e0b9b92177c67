// Small helpers shared by the reference kernels: dtype dispatch, broadcast
// indexing and row-major stride arithmetic. Kernels stay plain loops.
#pragma once

#include <cstdint>
#include <vector>

#include "base/half.h"
#include "base/status.h"
#include "cpu/kernel_registry.h"
#include "graph/shape_inference.h"

namespace rknn::cpu::kernels {

using graph::DType;

// Calls f(T{}) with T the C++ type of `dtype`, for the numeric types.
template <typename F>
Status visit_numeric(DType dtype, F&& f) {
    switch (dtype) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    case DType::kInt8: return f(int8_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUInt64: return f(uint64_t{});
    default:
        return Status(StatusCode::kInvalidArgument, std::string("unsupported dtype ") + graph::dtype_name(dtype));
    }
}

// Same, adding bool (as uint8_t) for ops that also select booleans.
template <typename F>
Status visit_numeric_or_bool(DType dtype, F&& f) {
    if (dtype == DType::kBool) return f(uint8_t{});
    return visit_numeric(dtype, std::forward<F>(f));
}

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const graph::Shape& shape);

// Strides to read `in` while walking an output of shape `out` (NumPy broadcast:
// dims aligned to the right, size-1 dims get stride 0).
std::vector<int64_t> broadcast_strides(const graph::Shape& in, const graph::Shape& out);

// True if `in` broadcasts to `out` without changing `out` (right-aligned,
// each dim 1 or equal).
bool broadcasts_into(const graph::Shape& in, const graph::Shape& out);

// Visits every output element in row-major order and passes the matching
// element offsets of up to three broadcast inputs: f(out_index, off0, off1, off2).
template <typename F>
void for_each_broadcast(const graph::Shape& out, const std::vector<std::vector<int64_t>>& in_strides, F&& f) {
    const size_t rank = out.size();
    int64_t total = 1;
    for (int64_t d : out) total *= d;
    if (total == 0) return;
    std::vector<int64_t> index(rank, 0);
    int64_t off[3] = {0, 0, 0};
    const size_t n_in = in_strides.size();
    for (int64_t i = 0; i < total; ++i) {
        f(i, off[0], off[1], off[2]);
        // Advance the odometer and the input offsets.
        for (size_t d = rank; d-- > 0;) {
            if (++index[d] < out[d]) {
                for (size_t k = 0; k < n_in; ++k) off[k] += in_strides[k][d];
                break;
            }
            for (size_t k = 0; k < n_in; ++k) off[k] -= in_strides[k][d] * (out[d] - 1);
            index[d] = 0;
        }
    }
}

// Elements before `axis` (outer), along it, and after it (inner).
struct AxisSplit {
    int64_t outer = 1;
    int64_t axis = 1;
    int64_t inner = 1;
};
AxisSplit split_at_axis(const graph::Shape& shape, int64_t axis);
// Softmax's view of its input: split at `axis`, or for opsets before 13
// (legacy_2d) with everything from `axis` on as one axis (normalization.cc).
StatusOr<AxisSplit> softmax_view(const KernelArgs& args);

inline Status require(bool condition, const char* message) {
    return condition ? Status::ok() : Status(StatusCode::kInvalidArgument, message);
}

}  // namespace rknn::cpu::kernels
