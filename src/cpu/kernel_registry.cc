#include "cpu/kernel_registry.h"

#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/kernels.h"

namespace rknn::cpu {
namespace {

using graph::DType;
using graph::OpType;
namespace k = kernels;
namespace q = int8;

constexpr uint32_t kNumericOrBool = kNumericDTypes | dtype_bit(DType::kBool);
constexpr uint32_t kQuantizeIn = dtype_bit(DType::kFloat32) | dtype_bit(DType::kInt32);
constexpr uint32_t kDequantizeIn = dtype_bit(DType::kInt8) | dtype_bit(DType::kUInt8) | dtype_bit(DType::kInt32);

// clang-format off
const KernelEntry kKernels[] = {
    // type                          reference kernel        native dtypes    int8 kernel          moves data, writes all
    {OpType::kConv,                  k::conv,                kFloat32Only,    q::conv,             false, true},
    {OpType::kConvTranspose,         k::conv_transpose,      kFloat32Only,    nullptr,             false, true},
    {OpType::kGemm,                  k::gemm,                kFloat32Only,    q::gemm,             false},
    {OpType::kMatMul,                k::matmul,              kFloat32Only,    q::matmul,           false},
    {OpType::kBatchNormalization,    k::batch_normalization, kFloat32Only,    nullptr,             false},
    {OpType::kAdd,                   k::add,                 kNumericDTypes,  q::add,              false},
    {OpType::kSub,                   k::sub,                 kNumericDTypes,  q::sub,              false},
    {OpType::kMul,                   k::mul,                 kNumericDTypes,  q::mul,              false},
    {OpType::kDiv,                   k::div,                 kNumericDTypes,  nullptr,             false},
    {OpType::kMax,                   k::max,                 kNumericDTypes,  q::max,              false},
    {OpType::kMin,                   k::min,                 kNumericDTypes,  q::min,              false},
    {OpType::kSum,                   k::sum,                 kNumericDTypes,  nullptr,             false},
    {OpType::kMean,                  k::mean,                kNumericDTypes,  nullptr,             false},
    {OpType::kPow,                   k::pow,                 kNumericDTypes,  nullptr,             false},
    {OpType::kSqrt,                  k::unary_math,          kFloat32Only,    nullptr,             false},
    {OpType::kReciprocal,            k::unary_math,          kFloat32Only,    nullptr,             false},
    {OpType::kAbs,                   k::abs,                 kNumericDTypes,  nullptr,             false},
    {OpType::kNeg,                   k::neg,                 kNumericDTypes,  nullptr,             false},
    {OpType::kExp,                   k::unary_math,          kFloat32Only,    nullptr,             false},
    {OpType::kLog,                   k::unary_math,          kFloat32Only,    nullptr,             false},
    {OpType::kErf,                   k::unary_math,          kFloat32Only,    nullptr,             false},
    {OpType::kFloor,                 k::unary_math,          kFloat32Only,    nullptr,             false},
    {OpType::kCeil,                  k::unary_math,          kFloat32Only,    nullptr,             false},
    {OpType::kRelu,                  k::relu,                kNumericDTypes,  q::relu,             false},
    {OpType::kClip,                  k::clip,                kNumericDTypes,  q::clip,             false},
    {OpType::kLeakyRelu,             k::activation,          kFloat32Only,    q::leaky_relu,       false},
    {OpType::kPRelu,                 k::prelu,               kFloat32Only,    q::prelu,            false},
    {OpType::kSigmoid,               k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kHardSigmoid,           k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kHardSwish,             k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kTanh,                  k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kElu,                   k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kSelu,                  k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kSoftplus,              k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kGelu,                  k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kSilu,                  k::activation,          kFloat32Only,    q::lut_activation,   false},
    {OpType::kMaxPool,               k::max_pool,            kNumericDTypes,  q::max_pool,         false},
    {OpType::kAveragePool,           k::average_pool,        kFloat32Only,    q::average_pool,     false},
    {OpType::kGlobalAveragePool,     k::global_average_pool, kFloat32Only,    q::global_average_pool, false},
    {OpType::kGlobalMaxPool,         k::global_max_pool,     kNumericDTypes,  q::global_max_pool,  false},
    {OpType::kInstanceNormalization, k::instance_normalization, kFloat32Only, nullptr,             false},
    {OpType::kLayerNormalization,    k::layer_normalization, kFloat32Only,    nullptr,             false},
    {OpType::kConcat,                k::concat,              kAllDTypes,      nullptr,             true},
    {OpType::kSplit,                 k::split,               kAllDTypes,      nullptr,             true},
    {OpType::kSlice,                 k::slice,               kAllDTypes,      nullptr,             true},
    {OpType::kReshape,               k::copy_data,           kAllDTypes,      nullptr,             true},
    {OpType::kFlatten,               k::copy_data,           kAllDTypes,      nullptr,             true},
    {OpType::kSqueeze,               k::copy_data,           kAllDTypes,      nullptr,             true},
    {OpType::kUnsqueeze,             k::copy_data,           kAllDTypes,      nullptr,             true},
    {OpType::kTranspose,             k::transpose,           kAllDTypes,      nullptr,             true},
    // Pad fills with a value and Resize may interpolate: not plain moves
    // (nearest-neighbour int8 Resize has its own kernel).
    {OpType::kPad,                   k::pad,                 kAllDTypes,      nullptr,             false},
    {OpType::kResize,                k::resize,              kFloat32Only,    q::resize,           false},
    {OpType::kUpsample,              k::resize,              kFloat32Only,    q::resize,           false},
    {OpType::kSoftmax,               k::softmax,             kFloat32Only,    q::softmax,          false},
    {OpType::kLogSoftmax,            k::log_softmax,         kFloat32Only,    nullptr,             false},
    {OpType::kReduceMean,            k::reduce,              kNumericDTypes,  nullptr,             false},
    {OpType::kReduceSum,             k::reduce,              kNumericDTypes,  nullptr,             false},
    {OpType::kReduceMax,             k::reduce,              kNumericDTypes,  nullptr,             false},
    {OpType::kReduceMin,             k::reduce,              kNumericDTypes,  nullptr,             false},
    {OpType::kArgMax,                k::arg_reduce,          kNumericDTypes,  nullptr,             false},
    {OpType::kArgMin,                k::arg_reduce,          kNumericDTypes,  nullptr,             false},
    {OpType::kGather,                k::gather,              kAllDTypes,      nullptr,             true},
    {OpType::kDepthToSpace,          k::depth_to_space,      kAllDTypes,      nullptr,             true},
    {OpType::kSpaceToDepth,          k::space_to_depth,      kAllDTypes,      nullptr,             true},
    {OpType::kTile,                  k::tile,                kAllDTypes,      nullptr,             true},
    {OpType::kExpand,                k::expand,              kAllDTypes,      nullptr,             true},
    {OpType::kWhere,                 k::where,               kAllDTypes,      nullptr,             true},
    {OpType::kEqual,                 k::equal,               kNumericOrBool,  nullptr,             false},
    {OpType::kGreater,               k::greater,             kNumericDTypes,  nullptr,             false},
    {OpType::kLess,                  k::less,                kNumericDTypes,  nullptr,             false},
    {OpType::kCast,                  k::cast,                kAllDTypes,      nullptr,             false},
    {OpType::kIdentity,              k::identity,            kAllDTypes,      nullptr,             true},
    {OpType::kDropout,               k::identity,            kAllDTypes,      nullptr,             true},
    {OpType::kConstant,              k::constant,            kAllDTypes,      nullptr,             false},
    {OpType::kShape,                 k::shape,               kAllDTypes,      nullptr,             false},
    {OpType::kConstantOfShape,       k::constant_of_shape,   kAllDTypes,      nullptr,             false},
    {OpType::kQuantizeLinear,        k::quantize_linear,     kQuantizeIn,     nullptr,             false},
    {OpType::kDequantizeLinear,      k::dequantize_linear,   kDequantizeIn,   nullptr,             false, true},
};
// clang-format on

}  // namespace

const KernelEntry* find_kernel(graph::OpType type) {
    for (const KernelEntry& entry : kKernels) {
        if (entry.type == type) return &entry;
    }
    return nullptr;
}

}  // namespace rknn::cpu
