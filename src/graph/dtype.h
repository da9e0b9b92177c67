// Element types of graph tensors.
//
// A superset of what the NPU computes with: the CPU reference and the ONNX
// importer also handle the index, boolean and wide types that models carry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rknn::graph {

enum class DType : uint8_t {
    kUndefined = 0,
    kFloat32,
    kFloat16,
    kBFloat16,
    kFloat64,
    kInt8,
    kUInt8,
    kInt16,
    kUInt16,
    kInt32,
    kUInt32,
    kInt64,
    kUInt64,
    kBool,
};

constexpr int kDTypeCount = static_cast<int>(DType::kBool) + 1;

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);
// Parses a dtype_name() result; kUndefined if unknown.
DType dtype_from_name(const std::string& name);

inline bool is_float(DType d) {
    return d == DType::kFloat32 || d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kFloat64;
}
inline bool is_signed_int(DType d) {
    return d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}
inline bool is_unsigned_int(DType d) {
    return d == DType::kUInt8 || d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64;
}
inline bool is_integer(DType d) { return is_signed_int(d) || is_unsigned_int(d); }

}  // namespace rknn::graph
