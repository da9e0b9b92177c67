// Seeded random convolution shapes for the code-generator tests: channels not
// multiples of C2, sizes 1..18, strides 1..4 per axis, kernels 1..7 (square
// or not), valid, same and explicit padding, every activation, residual adds.
#pragma once

#include <random>

#include "common/quantized_conv.h"
#include "npu/conv_regs.h"

namespace rknn::testing {

QuantConvSpec random_conv_spec(std::mt19937& rng, bool depthwise, bool fully_connected);
// The layer's geometry for the code generator.
npu::ConvGeometry conv_geometry(const QuantConvSpec& s);

}  // namespace rknn::testing
