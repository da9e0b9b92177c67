// Activations and residual adds that the converter fuses into Conv, Gemm and
// MatMul (attributes "activation", "act_min", "act_max", "act_alpha" and
// "fused_add" with the residual as an extra input). The float kernels and the
// int8 kernels read the fusion from here, so both apply the same thing.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "cpu/kernels/scalar_math.h"
#include "graph/graph.h"

namespace rknn::cpu {

struct Fusion {
    kernels::Activation activation;  // kIdentity when none
    int32_t residual_input = -1;     // index in op.inputs of the added tensor, -1 when none
    // The calibrated range of the activation's input ("act_range"), which sets
    // the int8 lookup table of a non-linear activation.
    bool has_lut_range = false;
    float lut_min = 0.0f;
    float lut_max = 0.0f;
};

Fusion fusion_of(const graph::Op& op);

// Records a fusion on `op` (used by the converter).
void set_fused_activation(graph::Op* op, const kernels::Activation& act);
void set_fused_activation_range(graph::Op* op, float min, float max);
void set_fused_residual(graph::Op* op, int32_t residual_tensor);

// Float path: y += residual (same shape), then the activation, in place.
Status apply_fusion_float(const Fusion& fusion, const HostTensor* residual, HostTensor* y);

}  // namespace rknn::cpu
