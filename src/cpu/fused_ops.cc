#include "cpu/fused_ops.h"

#include <cmath>

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
        f.activation.type = graph::op_type_from_name(act);
        f.activation.min = op.attrs.get_float("act_min", -INFINITY);
        f.activation.max = op.attrs.get_float("act_max", INFINITY);
        f.activation.alpha = op.attrs.get_float("act_alpha", 0.0f);
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
    if (act.type == graph::OpType::kLeakyRelu) op->attrs.set_float("act_alpha", act.alpha);
}

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
    if (fusion.activation.type != graph::OpType::kIdentity) {
        for (int64_t i = 0; i < y->numel(); ++i) out[i] = kernels::apply_activation(fusion.activation, out[i]);
    }
    return Status::ok();
}

}  // namespace rknn::cpu
