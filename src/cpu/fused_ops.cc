#include "cpu/fused_ops.h"

#include <cmath>
#include <string>

namespace rknn::cpu {
namespace {

int32_t residual_slot(graph::OpType type) {
    switch (type) {
    case graph::OpType::kConv:
    case graph::OpType::kGemm: return 3;
    case graph::OpType::kMatMul: return 2;
    default: return -1;
    }
}

}  // namespace

Fusion fusion_of(const graph::Op& op) {
    Fusion f;
    const std::string act = op.attrs.get_string("activation", "");
    if (!act.empty()) {
        // Start from the activation's own defaults, then take what the fusion recorded.
        f.activation = kernels::activation_from_attrs(graph::op_type_from_name(act), graph::Attributes());
        f.activation.min = op.attrs.get_float("act_min", -INFINITY);
        f.activation.max = op.attrs.get_float("act_max", INFINITY);
        f.activation.alpha = op.attrs.get_float("act_alpha", f.activation.alpha);
        f.activation.beta = op.attrs.get_float("act_beta", f.activation.beta);
        f.activation.gamma = op.attrs.get_float("act_gamma", f.activation.gamma);
        f.activation.tanh_approximation = op.attrs.get_string("act_approximate", "none") == "tanh";
        f.activation.slopes = op.attrs.get_floats("act_slopes");
        const std::vector<float> post = op.attrs.get_floats("act_post");
        if (post.size() == 2) {
            f.activation.post_scale = post[0];
            f.activation.post_bias = post[1];
        }
        const std::vector<float> range = op.attrs.get_floats("act_range");
        if (range.size() == 2) {
            f.has_lut_range = true;
            f.lut_min = range[0];
            f.lut_max = range[1];
        }
    }
    const int32_t slot = residual_slot(op.type);
    if (op.attrs.get_int("fused_add", 0) != 0 && slot >= 0 && static_cast<size_t>(slot) < op.inputs.size() &&
        op.inputs[slot] >= 0) {
        f.residual_input = slot;
    }
    return f;
}

void set_fused_activation(graph::Op* op, const kernels::Activation& act) {
    op->attrs.set_string("activation", graph::op_type_name(act.type));
    if (act.type == graph::OpType::kClip) {
        if (std::isfinite(act.min)) op->attrs.set_float("act_min", act.min);
        if (std::isfinite(act.max)) op->attrs.set_float("act_max", act.max);
    }
    if (act.type == graph::OpType::kLeakyRelu || act.type == graph::OpType::kElu || act.type == graph::OpType::kHardSigmoid ||
        act.type == graph::OpType::kSelu)
        op->attrs.set_float("act_alpha", act.alpha);
    if (act.type == graph::OpType::kHardSigmoid) op->attrs.set_float("act_beta", act.beta);
    if (act.type == graph::OpType::kSelu) op->attrs.set_float("act_gamma", act.gamma);
    if (act.type == graph::OpType::kGelu && act.tanh_approximation) op->attrs.set_string("act_approximate", "tanh");
    if (act.type == graph::OpType::kPRelu) op->attrs.set_floats("act_slopes", act.slopes);
    if (act.has_post_affine()) op->attrs.set_floats("act_post", {act.post_scale, act.post_bias});
}

void set_fused_activation_range(graph::Op* op, float min, float max) { op->attrs.set_floats("act_range", {min, max}); }

void set_fused_residual(graph::Op* op, int32_t residual_tensor) {
    const int32_t slot = residual_slot(op->type);
    if (slot < 0) return;
    while (static_cast<int32_t>(op->inputs.size()) < slot) op->inputs.push_back(-1);
    op->inputs.resize(slot);
    op->inputs.push_back(residual_tensor);
    op->attrs.set_int("fused_add", 1);
}

Status apply_fusion_float(const Fusion& fusion, const HostTensor* residual, HostTensor* y) {
    float* out = y->data<float>();
    if (residual != nullptr) {
        if (residual->dtype() != graph::DType::kFloat32 || residual->shape() != y->shape()) {
            return Status(StatusCode::kInvalidArgument, "the fused residual must match the output shape");
        }
        for (int64_t i = 0; i < y->numel(); ++i) out[i] += residual->data<float>()[i];
    }
    if (fusion.activation.type == graph::OpType::kPRelu) {
        // Output channels: axis 1 of a Conv's [N, C, ...], the last axis of a product.
        const graph::Shape& shape = y->shape();
        const std::vector<float>& slopes = fusion.activation.slopes;
        const bool conv = shape.size() >= 3;
        const int64_t channels = shape.empty() ? 0 : (conv ? shape[1] : shape.back());
        if (channels != static_cast<int64_t>(slopes.size()))
            return Status(StatusCode::kInvalidArgument, "the fused PRelu has " + std::to_string(slopes.size()) +
                                                            " slopes for " + std::to_string(channels) + " channels");
        int64_t inner = 1;
        for (size_t d = 2; conv && d < shape.size(); ++d) inner *= shape[d];
        for (int64_t i = 0; i < y->numel(); ++i) {
            const float slope = slopes[static_cast<size_t>(conv ? (i / inner) % channels : i % channels)];
            if (out[i] < 0.0f) out[i] *= slope;
        }
    } else if (fusion.activation.type != graph::OpType::kIdentity) {
        kernels::apply_activation(fusion.activation, out, y->numel());
    }
    return Status::ok();
}

}  // namespace rknn::cpu
