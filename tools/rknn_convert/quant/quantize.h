// Rewriting a float graph into the precision the model will run in.
//
// int8 (post-training quantisation):
//   - activations: asymmetric int8 per tensor from the calibrated ranges;
//     tensors an op only moves (Reshape, Transpose, Concat, MaxPool, ...)
//     share one set of parameters with their inputs, so the NPU can alias them;
//   - Conv / Gemm / MatMul weights: symmetric int8 per output channel;
//     biases: int32 with scale s_in * s_w[c]; with bias correction, each
//     output channel's bias also takes away the mean shift that rounding the
//     weights adds, (W_int8 - W) . E[x] from the calibrated channel means;
//   - constant operands of element-wise ops: asymmetric int8 per tensor;
//   - tensors without calibration data (after a custom op) and the outputs of
//     ops named in --fp16-layers stay float16, and so do those ops' weights.
// fp16: every float activation and weight becomes float16; biases and shape
// parameters stay float32.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "quant/calibrate.h"

namespace rknn::convert {

struct QuantizeOptions {
    std::set<std::string> fp16_ops;  // op names kept in float16
    // Channel means by tensor name (Calibration::channel_means); empty: no bias correction.
    const std::map<std::string, std::vector<double>>* channel_means = nullptr;
};

Status quantize_int8(graph::Graph* g, const std::vector<TensorRange>& ranges, const QuantizeOptions& options);

Status convert_to_fp16(graph::Graph* g);

// The int8 parameters of a range (min <= 0 <= max is enforced).
graph::QuantParams int8_params(float min, float max);

}  // namespace rknn::convert
