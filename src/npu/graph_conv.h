// From a graph Conv, Gemm or MatMul op (int8, with its fused activation and residual) to what
// the code generator lowers: the geometry, the epilogue in register terms,
// and the constants in the NPU's layouts (packed weights, BS records). Done
// once at init; the streams are then generated against buffer ids.
#pragma once

#include <memory>
#include <vector>

#include "base/status.h"
#include "cpu/int8/epilogue.h"
#include "graph/graph.h"
#include "npu/conv_lowering.h"

namespace rknn::npu {

struct PreparedConv {
    ConvGeometry geometry;
    int8_t input_zp = 0;
    cpu::int8::Epilogue epilogue;  // owns the LUT that `layer.epilogue` points at
    Int8ConvLayer layer;           // addresses left for the caller
    hw::NpuArch arch = hw::NpuArch::kRk3588;  // the SoC the constants are laid out for
    std::vector<int8_t> weights;   // packed (pack_conv_weights_int8 / pack_dw_weights_int8)
    // RK356x: the weights again as a channel-packed (ARGB) input needs them
    // (pack_image_weights_int8_rk356x), for a layer that can read one; else empty.
    std::vector<int8_t> image_weights;
    std::vector<uint8_t> records;  // BS records for every aligned output channel
    std::vector<uint8_t> bn_records;  // a fused per-channel PRelu's BN records (else empty)
    int residual_input = -1;       // index in op.inputs of the fused residual, -1 when none

    PreparedConv() = default;
    PreparedConv(const PreparedConv&) = delete;
    PreparedConv& operator=(const PreparedConv&) = delete;
};

// kUnimplemented with the reason when the op is not an int8 convolution the
// NPU computes exactly as the reference does (dilation, groups other than 1
// or depthwise, batch > 1, float tensors, an activation the DPU cannot place
// after a residual add, ...).
// `soc` decides the constants' layouts (RK3588 blocks or the RK356x forms).
StatusOr<std::unique_ptr<PreparedConv>> prepare_int8_conv(const graph::Graph& g, const graph::Op& op,
                                                          const hw::SocProfile& soc);

// The dtype-independent part of a graph Conv: geometry, tensors and constants
// (the weights of `dtype`, the bias of `bias_dtype`), validated.
struct ConvParts {
    ConvGeometry geometry;
    const graph::Tensor* x = nullptr;
    const graph::Tensor* w = nullptr;
    const graph::Tensor* y = nullptr;
    const graph::Buffer* weights = nullptr;
    int32_t bias_id = -1;
    const graph::Buffer* bias = nullptr;
};
StatusOr<ConvParts> conv_parts(const graph::Graph& g, const graph::Op& op, graph::DType dtype, graph::DType bias_dtype);

// The same for a one-row Gemm/MatMul: [1, K] x [K, N] (or [N, K] with transB).
struct GemmParts {
    const graph::Tensor* a = nullptr;
    const graph::Tensor* w = nullptr;
    const graph::Tensor* y = nullptr;
    int64_t m = 1, k = 0, n = 0;  // [M, K] x [K, N]
    bool trans_b = false;
    const graph::Buffer* weights = nullptr;
    int32_t bias_id = -1;
    const graph::Buffer* bias = nullptr;
    // Element index of weight (output i, input j) in the constant.
    int64_t weight_index(int64_t i, int64_t j) const { return trans_b ? i * k + j : j * n + i; }
};
StatusOr<GemmParts> gemm_parts(const graph::Graph& g, const graph::Op& op, graph::DType dtype, graph::DType bias_dtype);

// Gemm (transA 0, alpha = beta = 1) and MatMul with constant [K, N] weights
// over one row: a 1x1 convolution of a one-pixel, K-channel cube.
StatusOr<std::unique_ptr<PreparedConv>> prepare_int8_gemm(const graph::Graph& g, const graph::Op& op,
                                                          const hw::SocProfile& soc);

}  // namespace rknn::npu
