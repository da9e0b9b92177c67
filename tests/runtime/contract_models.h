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
// A 4-D NCHW shape as rknn_set_input_shapes takes it: NHWC dims, fmt NHWC.
void set_nhwc_dims(const graph::Shape& nchw, rknn_tensor_attr* attr);
// Seeded random uint8 NHWC pixels for an NCHW input shape.
std::vector<uint8_t> random_pixels(const graph::Shape& nchw, uint32_t seed);
// Memory for the largest input (uint8 pixels) and output (float32), as the
// dynamic-shape zero-copy flow makes it; false when a call fails.
bool create_max_io_mems(rknn_context ctx, rknn_tensor_mem** in, rknn_tensor_mem** out);
// RKNN_FLAG_MEM_ALLOC_OUTSIDE: weights and internal memory of the sizes
// MEM_SIZE reports, made and given to `ctx` (the caller destroys them);
// a part of size 0 gets none (nullptr); false when a call fails.
bool give_all_memory(rknn_context ctx, rknn_tensor_mem** weights, rknn_tensor_mem** internal);
// The dynamic-shape zero-copy flow after a shape change: `in` bound as uint8
// NHWC pixels and `out` as float32 NCHW with the CURRENT attrs; `out_attr`
// gets the output's. False when a call fails.
bool bind_current_io(rknn_context ctx, rknn_tensor_mem* in, rknn_tensor_mem* out, rknn_tensor_attr* out_attr);

}  // namespace rknn::testing
