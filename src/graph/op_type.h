// The operator types the graph IR knows: the ONNX operators OpenRKNN supports
// (same names, same semantics as the ONNX opset <= 17 definitions) plus a few
// that only the converter creates (fusions) and kCustom for user ops.
#pragma once

#include <string>

namespace rknn::graph {

// X-macro: one line per op, so name tables cannot drift from the enum.
#define RKNN_GRAPH_OP_TYPES(X)                                                                               \
    X(Conv) X(ConvTranspose) X(Gemm) X(MatMul) X(BatchNormalization) X(Add) X(Sub) X(Mul) X(Div) X(Max)      \
    X(Min) X(Sum) X(Mean) X(Pow) X(Sqrt) X(Reciprocal) X(Abs) X(Neg) X(Exp) X(Log) X(Erf) X(Floor) X(Ceil)   \
    X(Relu) X(Clip) X(LeakyRelu) X(PRelu) X(Sigmoid) X(HardSigmoid) X(HardSwish) X(Tanh) X(Elu) X(Selu)      \
    X(Softplus) X(Gelu) X(MaxPool) X(AveragePool) X(GlobalAveragePool) X(GlobalMaxPool)                     \
    X(InstanceNormalization) X(LayerNormalization) X(Concat) X(Split) X(Slice) X(Reshape) X(Flatten)         \
    X(Squeeze) X(Unsqueeze) X(Transpose) X(Pad) X(Resize) X(Upsample) X(Softmax) X(LogSoftmax)              \
    X(ReduceMean) X(ReduceSum) X(ReduceMax) X(ReduceMin) X(ArgMax) X(ArgMin) X(Gather) X(DepthToSpace)       \
    X(SpaceToDepth) X(Tile) X(Expand) X(Where) X(Equal) X(Greater) X(Less) X(Cast) X(Identity) X(Dropout)    \
    X(Constant) X(Shape) X(ConstantOfShape) X(QuantizeLinear) X(DequantizeLinear)                           \
    /* created by the converter */                                                                          \
    X(Silu) X(Custom)

enum class OpType : uint16_t {
    kUnknown = 0,
#define RKNN_OP_ENUM(name) k##name,
    RKNN_GRAPH_OP_TYPES(RKNN_OP_ENUM)
#undef RKNN_OP_ENUM
};

// "Conv", "Add", ...; "Unknown" for kUnknown.
const char* op_type_name(OpType type);
// kUnknown when `name` is not an op type we know.
OpType op_type_from_name(const std::string& name);

}  // namespace rknn::graph
