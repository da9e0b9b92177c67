#include "graph/dtype.h"

namespace rknn::graph {
namespace {

struct DTypeInfo {
    DType dtype;
    const char* name;
    size_t size;
};

constexpr DTypeInfo kInfo[] = {
    {DType::kUndefined, "undefined", 0}, {DType::kFloat32, "float32", 4}, {DType::kFloat16, "float16", 2},
    {DType::kBFloat16, "bfloat16", 2},   {DType::kFloat64, "float64", 8}, {DType::kInt8, "int8", 1},
    {DType::kUInt8, "uint8", 1},         {DType::kInt16, "int16", 2},     {DType::kUInt16, "uint16", 2},
    {DType::kInt32, "int32", 4},         {DType::kUInt32, "uint32", 4},   {DType::kInt64, "int64", 8},
    {DType::kUInt64, "uint64", 8},       {DType::kBool, "bool", 1},
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == kDTypeCount, "one entry per DType");

const DTypeInfo& info(DType dtype) {
    const auto index = static_cast<size_t>(dtype);
    return index < static_cast<size_t>(kDTypeCount) ? kInfo[index] : kInfo[0];
}

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }
const char* dtype_name(DType dtype) { return info(dtype).name; }

DType dtype_from_name(const std::string& name) {
    for (const DTypeInfo& entry : kInfo) {
        if (name == entry.name) return entry.dtype;
    }
    return DType::kUndefined;
}

}  // namespace rknn::graph
