// Small graphs built in code for the tests of the model format, the CPU
// kernels and the converter passes.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::testing {

// A float constant with values from a fixed-seed generator.
int32_t random_constant(graph::Graph* g, const std::string& name, const graph::Shape& shape, uint32_t seed,
                        float lo = -1.0f, float hi = 1.0f);

// Quantised tensors for the int8 tests.
graph::QuantParams per_tensor(float scale, int32_t zero_point);
int32_t add_tensor(graph::Graph* g, const std::string& name, graph::DType dtype, const graph::Shape& shape,
                   const graph::QuantParams& q = {});
// x -> QuantizeLinear or DequantizeLinear (one constant scale and zero
// point) -> y, with x declared `in_dtype` and y `out_dtype`; the int8 side
// carries the same parameters.
graph::Graph conversion_graph(graph::OpType type, graph::DType in_dtype, graph::DType out_dtype, const graph::Shape& shape,
                              float scale, int8_t zero_point);
// Uniformly random int8 codes from a fixed seed.
cpu::HostTensor random_int8(const graph::Shape& shape, const graph::QuantParams& q, uint32_t seed);

// Float32 values uniform in [lo, hi) from a fixed seed.
cpu::HostTensor random_floats(const graph::Shape& shape, uint32_t seed, float lo, float hi);
// How many ops of `type` the graph holds.
int count_ops(const graph::Graph& g, graph::OpType type);

// Runs `g` on the CPU reference (int8 kernels where the tensors are
// quantised, unless `int8_kernels` is false); the outputs as float32.
StatusOr<std::vector<cpu::HostTensor>> run_reference(const graph::Graph& g, const std::vector<cpu::HostTensor>& inputs,
                                                     bool int8_kernels = true);
// The largest |a - b| over two float32 tensors; infinity when their shapes differ.
float max_abs_difference(const cpu::HostTensor& a, const cpu::HostTensor& b);

// input [1,3,8,8] -> Conv 3x3 (8 ch, pad 1) -> Relu -> MaxPool 2x2 -> Reshape [1, 128]
// -> Gemm (10 outputs) -> output.
graph::Graph small_cnn();

}  // namespace rknn::testing
