// The converter's graph passes, in the order the pipeline runs them.
// Each rewrites the graph in place and returns how many rewrites it made.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::convert {

// Specialises the graph to `input_shapes` (one per input; nullptr keeps the
// declared ones): walks it in execution order, infers each op's output shapes,
// and evaluates every op whose inputs are all constants (and Shape of a known
// shape) on the CPU reference, replacing its outputs with constants. Ops
// downstream of a run-time-valued shape keep their declared shapes.
StatusOr<int> fold_constants(graph::Graph* g, const std::vector<graph::Shape>* input_shapes = nullptr);

// Drops Identity and inference-mode Dropout.
int remove_identities(graph::Graph* g);

// x / c -> x * (1/c), x - c -> x + (-c), c + x -> x + c, c * x -> x * c; drops
// x * 1 and x + 0 (passes below expect this form).
int canonicalize_arithmetic(graph::Graph* g);

// Folds BatchNormalization into the preceding Conv / ConvTranspose weights.
StatusOr<int> fold_batch_norm(graph::Graph* g);
// Any other BatchNormalization with constant parameters -> Mul + Add per channel.
StatusOr<int> batch_norms_to_affine(graph::Graph* g);

// Per-channel (or scalar) Mul/Add by constants (affine_folding.cc):
// after a Conv / ConvTranspose / Gemm, into its weights and bias;
int fold_affine_into_producers(graph::Graph* g);
// scalar ones after a lookup-table activation, into the activation (post_scale/post_bias);
int fold_affine_into_activations(graph::Graph* g);
// before Convs without padding, into their weights and bias;
int fold_affine_into_consumers(graph::Graph* g);
// and what is left on NCHW tensors -> a depthwise 1x1 Conv.
int affine_to_depthwise(graph::Graph* g);

// ConvTranspose whose kernel equals its stride -> a 1x1 Conv to M*s*s
// channels and DepthToSpace (CRD); an element-wise activation reading it
// alone moves before the DepthToSpace (deconvolution.cc).
int deconvolutions_to_depth_to_space(graph::Graph* g);

// relu6(x+3)/6 -> HardSigmoid, x*relu6(x+3)/6 and x*HardSigmoid(x) -> HardSwish.
int fuse_hard_activations(graph::Graph* g);
// The decomposed layer normalisation over the last axis -> LayerNormalization.
int fuse_layer_norms(graph::Graph* g);

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

// After the float16 layers are known: the bias of a float16 HardSwish's post
// affine moves into the bias of the convolutions reading it, when every
// reader is a float16 convolution without padding (affine_folding.cc). The
// NPU then runs the activation in one DPU pass instead of two.
int fold_fp16_activation_bias_into_readers(graph::Graph* g);

// Removes ops that no output depends on, and unreferenced tensors.
int remove_dead_code(graph::Graph* g);

}  // namespace rknn::convert
