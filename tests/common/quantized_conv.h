// One quantised int8 convolution layer built in code, with seeded random
// weights, bias and inputs, run through the int8 CPU reference: the ground
// truth the emulator and code-generator tests compare with bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "cpu/int8/epilogue.h"
#include "graph/op_type.h"

namespace rknn::testing {

struct QuantConvSpec {
    int c_in = 1, c_out = 1, h = 1, w = 1;
    int kh = 1, kw = 1;
    int stride_h = 1, stride_w = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool depthwise = false;
    graph::OpType activation = graph::OpType::kIdentity;
    bool residual = false;   // a fused add of a second int8 tensor
    int32_t input_zp = 0;

    int out_c() const { return depthwise ? c_in : c_out; }
    int out_h() const { return (h + pad_top + pad_bottom - kh) / stride_h + 1; }
    int out_w() const { return (w + pad_left + pad_right - kw) / stride_w + 1; }
    int taps_per_kernel() const { return (depthwise ? 1 : c_in) * kh * kw; }
    std::string describe() const;
};

struct QuantConvCase {
    QuantConvSpec spec;
    std::vector<int8_t> weights;      // [oc][ic per group][kh][kw]
    cpu::HostTensor input;            // [1, c_in, h, w]
    cpu::HostTensor residual;         // [1, oc, oh, ow] when spec.residual
    cpu::HostTensor reference;        // the int8 reference's output
    cpu::int8::Epilogue epilogue;     // its requantisation, for register values
};

// Builds the layer, runs the reference (which must use its int8 kernel) and
// fills `out`; an error names what went wrong.
Status make_quant_conv(const QuantConvSpec& spec, uint32_t seed, QuantConvCase* out);

}  // namespace rknn::testing
