// Scalar definitions of the activation functions (ONNX semantics). The int8
// path samples them to build lookup tables; the float kernels run their
// vector forms (activation_simd.h: the same floats for the clamp-like ones,
// within a documented tolerance for those built on exp/tanh/log1p).
#pragma once

#include <vector>

#include <cmath>

#include "graph/attributes.h"
#include "graph/op_type.h"

namespace rknn::cpu::kernels {

// Parameters of one activation, read once from the op's attributes.
struct Activation {
    graph::OpType type = graph::OpType::kIdentity;
    float alpha = 0.0f;
    float beta = 0.0f;
    float gamma = 0.0f;
    float min = -INFINITY;  // Clip
    float max = INFINITY;
    bool tanh_approximation = false;  // Gelu
    // PRelu fused into a Conv/Gemm/MatMul: one slope per output channel
    // (apply_activation does not take a channel; apply_fusion_float does).
    std::vector<float> slopes;
    // An affine applied after the activation, y = post_scale * f(x) + post_bias:
    // the converter folds a scalar Mul/Add that follows a lookup-table
    // activation into it ("post_scale"/"post_bias" on the op, "act_post" when
    // fused), so the int8 table gives the affine's result directly.
    float post_scale = 1.0f;
    float post_bias = 0.0f;

    bool has_post_affine() const { return post_scale != 1.0f || post_bias != 0.0f; }
};

// Reads alpha/beta/gamma/approximate for `type` with the ONNX defaults, and
// the converter's post_scale/post_bias.
Activation activation_from_attrs(graph::OpType type, const graph::Attributes& attrs);

// Whether `type` is an element-wise activation that Activation can describe.
bool is_activation(graph::OpType type);

float apply_activation(const Activation& act, float x);

// The same over n values in place, through the vector forms of
// activation_simd.h where there is one (the clamp-like activations give the
// scalar form's floats, the exp/tanh-based ones are within its tolerance),
// else per value; long spans are shared out over the host threads.
void apply_activation(const Activation& act, float* values, int64_t n);

}  // namespace rknn::cpu::kernels
