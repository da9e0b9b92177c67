// Output dtype and shape of one op from its inputs (ONNX semantics, opset <= 17).
//
// Some ops need input *values* to know their output shape (Reshape's shape,
// Slice's starts, Resize's sizes...). Those values are passed when known: the
// CPU executor always has them; graph-level inference has them for constants.
// When a needed value is missing, inference fails with kFailedPrecondition.
#pragma once

#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::graph {

struct ValueInfo {
    DType dtype = DType::kUndefined;
    Shape shape;
    const void* data = nullptr;  // row-major element values when known
};

// `inputs[i]` is nullptr for an omitted optional input. On success `outputs`
// holds one entry per op output (dtype and shape; data stays null).
Status infer_op(const Op& op, const std::vector<const ValueInfo*>& inputs, std::vector<ValueInfo>* outputs);

// Reads an integer-valued input (int32 or int64 data) as int64s.
StatusOr<std::vector<int64_t>> read_int_values(const ValueInfo* value, const char* what);
// Reads a float-valued input (any float type or integer) as doubles.
StatusOr<std::vector<double>> read_float_values(const ValueInfo* value, const char* what);

// NumPy-style broadcast of two shapes; fails when they are incompatible.
StatusOr<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Normalises a possibly negative axis for a tensor of `rank` dims.
StatusOr<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* op_name);

}  // namespace rknn::graph
