#include "model/model_types.h"

namespace rknn::model {
namespace {

namespace fb = openrknn::fb;
using graph::DType;

struct DTypePair {
    DType graph;
    fb::DataType file;
};

constexpr DTypePair kDTypes[] = {
    {DType::kFloat32, fb::DataType_FLOAT32}, {DType::kFloat16, fb::DataType_FLOAT16},
    {DType::kBFloat16, fb::DataType_BFLOAT16}, {DType::kFloat64, fb::DataType_FLOAT64},
    {DType::kInt8, fb::DataType_INT8},         {DType::kUInt8, fb::DataType_UINT8},
    {DType::kInt16, fb::DataType_INT16},       {DType::kUInt16, fb::DataType_UINT16},
    {DType::kInt32, fb::DataType_INT32},       {DType::kUInt32, fb::DataType_UINT32},
    {DType::kInt64, fb::DataType_INT64},       {DType::kUInt64, fb::DataType_UINT64},
    {DType::kBool, fb::DataType_BOOL},
};

}  // namespace

fb::DataType to_fb(DType dtype) {
    for (const DTypePair& p : kDTypes) {
        if (p.graph == dtype) return p.file;
    }
    return fb::DataType_UNDEFINED;
}

DType from_fb(fb::DataType dtype) {
    for (const DTypePair& p : kDTypes) {
        if (p.file == dtype) return p.graph;
    }
    return DType::kUndefined;
}

fb::Layout to_fb(graph::Layout layout) {
    switch (layout) {
    case graph::Layout::kNCHW: return fb::Layout_NCHW;
    case graph::Layout::kNHWC: return fb::Layout_NHWC;
    case graph::Layout::kUndefined: break;
    }
    return fb::Layout_UNDEFINED;
}

graph::Layout from_fb(fb::Layout layout) {
    switch (layout) {
    case fb::Layout_NCHW: return graph::Layout::kNCHW;
    case fb::Layout_NHWC: return graph::Layout::kNHWC;
    default: return graph::Layout::kUndefined;
    }
}

fb::AttributeKind to_fb(graph::Attribute::Kind kind) {
    switch (kind) {
    case graph::Attribute::Kind::kInt: return fb::AttributeKind_INT;
    case graph::Attribute::Kind::kFloat: return fb::AttributeKind_FLOAT;
    case graph::Attribute::Kind::kString: return fb::AttributeKind_STRING;
    case graph::Attribute::Kind::kInts: return fb::AttributeKind_INTS;
    case graph::Attribute::Kind::kFloats: return fb::AttributeKind_FLOATS;
    }
    return fb::AttributeKind_INT;
}

bool from_fb(fb::AttributeKind kind, graph::Attribute::Kind* out) {
    switch (kind) {
    case fb::AttributeKind_INT: *out = graph::Attribute::Kind::kInt; return true;
    case fb::AttributeKind_FLOAT: *out = graph::Attribute::Kind::kFloat; return true;
    case fb::AttributeKind_STRING: *out = graph::Attribute::Kind::kString; return true;
    case fb::AttributeKind_INTS: *out = graph::Attribute::Kind::kInts; return true;
    case fb::AttributeKind_FLOATS: *out = graph::Attribute::Kind::kFloats; return true;
    default: return false;
    }
}

}  // namespace rknn::model
