// Small graphs built in code for the tests of the model format, the CPU
// kernels and the converter passes.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace rknn::testing {

// A float constant with values from a fixed-seed generator.
int32_t random_constant(graph::Graph* g, const std::string& name, const graph::Shape& shape, uint32_t seed,
                        float lo = -1.0f, float hi = 1.0f);

// input [1,3,8,8] -> Conv 3x3 (8 ch, pad 1) -> Relu -> MaxPool 2x2 -> Reshape [1, 128]
// -> Gemm (10 outputs) -> output.
graph::Graph small_cnn();

}  // namespace rknn::testing
