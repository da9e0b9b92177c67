// The small int8 model the API tests run, and helpers to feed it: small_cnn
// (Conv -> Relu -> MaxPool -> Reshape -> Gemm) calibrated and quantised by
// the converter, taking [1, 8, 8, 3] NHWC uint8 pixels with mean/std.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "rknn_api.h"

namespace rknn::testing {

// Calibrates a one-input float graph on `count` seeded random samples of
// its [1, 3, 8, 8] input (values in about [-2, 2]) and quantises it to int8.
void quantize_8x8(graph::Graph* g, uint32_t seed, int count);
graph::Graph quantized_cnn();
// Its Conv -> Relu -> MaxPool: a 4-D int8 output the NPU writes.
graph::Graph conv_pool_model();
// rknn_init on the serialised graph, whose bytes are freed right after (as
// clients do); -1000 when the graph does not serialise.
int init_graph(const graph::Graph& g, uint32_t flags, rknn_context* ctx);
// 8 x 8 x 3 seeded random pixels.
std::vector<uint8_t> pixels(uint32_t seed);
// Input 0 of the given bytes, type and layout.
rknn_input input_of(void* buf, uint32_t size, rknn_tensor_type type, rknn_tensor_format fmt);
// Output 0 (float32 or the model's type, NCHW) after running pixels(seed)
// through the general API; empty after a failed call (which the test sees).
std::vector<uint8_t> run_pixels(rknn_context ctx, uint32_t seed, bool want_float);
// The same for any uint8 NHWC pixels of input 0.
std::vector<uint8_t> run_image(rknn_context ctx, std::vector<uint8_t> pixels, bool want_float);

}  // namespace rknn::testing
