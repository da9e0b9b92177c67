#include "npu/activation_split.h"

#include <cmath>

#include "base/log.h"
#include "cpu/fused_ops.h"
#include "npu/placement.h"

namespace rknn::npu {

namespace {

using graph::OpType;

constexpr const char* kFusionAttributes[] = {"activation", "act_min",    "act_max",   "act_alpha", "act_beta",
                                             "act_gamma",  "act_approximate", "act_slopes", "act_post", "act_range"};

// The activation as an op of its own, with its parameters under the names a
// standalone op takes (cpu/kernels/scalar_math.h activation_from_attrs).
graph::Op standalone(const cpu::kernels::Activation& act, const std::string& name, int32_t in, int32_t out) {
    graph::Op op{act.type, name, "", {in}, {out}, {}};
    switch (act.type) {
    case OpType::kLeakyRelu:
    case OpType::kElu: op.attrs.set_float("alpha", act.alpha); break;
    case OpType::kHardSigmoid:
        op.attrs.set_float("alpha", act.alpha);
        op.attrs.set_float("beta", act.beta);
        break;
    case OpType::kSelu:
        op.attrs.set_float("alpha", act.alpha);
        op.attrs.set_float("gamma", act.gamma);
        break;
    case OpType::kGelu:
        if (act.tanh_approximation) op.attrs.set_string("approximate", "tanh");
        break;
    case OpType::kClip:
        if (std::isfinite(act.min)) op.attrs.set_float("min", act.min);
        if (std::isfinite(act.max)) op.attrs.set_float("max", act.max);
        break;
    default: break;
    }
    if (act.has_post_affine()) {
        op.attrs.set_float("post_scale", act.post_scale);
        op.attrs.set_float("post_bias", act.post_bias);
    }
    return op;
}

bool splittable(const graph::Graph& g, const graph::Op& op) {
    if (op.type != OpType::kConv && op.type != OpType::kGemm && op.type != OpType::kMatMul) return false;
    if (!op.attrs.has("activation") || op.outputs.size() != 1 || op.outputs[0] < 0 ||
        static_cast<size_t>(op.outputs[0]) >= g.tensors.size())
        return false;
    if (g.tensors[static_cast<size_t>(op.outputs[0])].dtype != graph::DType::kFloat16) return false;
    // A per-channel PRelu has no standalone form here; a residual stays fused
    // (it is added before the activation either way).
    return cpu::fusion_of(op).activation.type != OpType::kPRelu;
}

}  // namespace

int split_activations_the_npu_lacks(graph::Graph* g, const hw::SocProfile& soc) {
    int split = 0;
    const size_t ops = g->ops.size();
    for (size_t i = 0; i < ops; ++i) {
        if (!splittable(*g, g->ops[i]) || place_op(*g, g->ops[i], soc).target != Target::kCpu) continue;
        graph::Op bare = g->ops[i];
        for (const char* name : kFusionAttributes) bare.attrs.erase(name);
        if (place_op(*g, bare, soc).target == Target::kCpu) continue;  // nothing gained
        const cpu::kernels::Activation act = cpu::fusion_of(g->ops[i]).activation;
        const int32_t result = bare.outputs[0];
        graph::Tensor before = g->tensors[static_cast<size_t>(result)];
        before.name = g->unique_tensor_name(before.name + "_before_" + graph::op_type_name(act.type));
        before.quant = {};
        const int32_t before_id = g->add_tensor(before);
        bare.outputs[0] = before_id;
        g->ops[i] = bare;
        g->add_op(standalone(act, g->ops[i].name + "_" + graph::op_type_name(act.type), before_id, result));
        RKNN_LOG_AT(3, "op %zu %s: its fused fp16 %s split off (the float pipeline cannot run it): the NPU runs the %s, "
                       "the CPU the activation", i, g->ops[i].name.c_str(), graph::op_type_name(act.type),
                    graph::op_type_name(g->ops[i].type));
        ++split;
    }
    return split;
}

}  // namespace rknn::npu
