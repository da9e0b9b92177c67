// The converter's graph passes, in the order the pipeline runs them.
// Each rewrites the graph in place and returns how many rewrites it made.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::convert {

// Evaluates every op whose inputs are all constants (and Shape of a static
// shape) on the CPU reference, and replaces its outputs with constants.
StatusOr<int> fold_constants(graph::Graph* g);

// Drops Identity and inference-mode Dropout.
int remove_identities(graph::Graph* g);

// Folds BatchNormalization into the preceding Conv / ConvTranspose weights.
StatusOr<int> fold_batch_norm(graph::Graph* g);

// x * Sigmoid(x) -> Silu(x).
int fuse_silu(graph::Graph* g);
// The Erf form of GELU -> Gelu.
int fuse_gelu(graph::Graph* g);
// Conv -> Add(same-shape tensor) becomes a Conv with a fused residual.
int fuse_residual_adds(graph::Graph* g);
// Conv / Gemm / MatMul -> Relu, Clip or LeakyRelu becomes one op.
int fuse_activations(graph::Graph* g);

// Conv / Gemm / MatMul -> a non-linear activation (Sigmoid, Tanh, SiLU, ...)
// becomes one op whose int8 form evaluates the activation with the DPU's
// lookup table. Run after calibration: `input_ranges` (by tensor name) gives
// the calibrated range of each activation's input, recorded on the op for the
// table; without it (float and fp16 models) nothing is recorded.
int fuse_lut_activations(graph::Graph* g, const std::map<std::string, std::pair<float, float>>* input_ranges);

// Removes ops that no output depends on, and unreferenced tensors.
int remove_dead_code(graph::Graph* g);

}  // namespace rknn::convert
