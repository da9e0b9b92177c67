// BatchNormalization folded into the convolution that feeds it:
//   k = scale / sqrt(var + eps);  W' = W * k (per output channel);  b' = (b - mean) * k + B
#include <cmath>

#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace rknn::convert {
namespace {

using graph::OpType;

// Output-channel axis of the weights, or -1 if this producer cannot absorb a BN.
int channel_axis(const graph::Op& producer) {
    if (producer.type == OpType::kConv) return 0;
    if (producer.type == OpType::kConvTranspose && producer.attrs.get_int("group", 1) == 1) return 1;
    return -1;
}

bool try_fold(graph::Graph* g, const GraphIndex& index, int32_t bn_index, std::set<int32_t>* dead) {
    const graph::Op& bn = g->ops[bn_index];
    if (bn.outputs.size() != 1) return false;
    const int32_t x = bn.inputs[0];
    const int32_t p = index.producer[x];
    if (p < 0 || !index.single_use(x)) return false;
    graph::Op& conv = g->ops[p];
    const int axis = channel_axis(conv);
    if (axis < 0 || conv.attrs.has("activation") || conv.attrs.get_int("fused_add", 0) != 0) return false;
    std::vector<float> params[4];
    for (int i = 0; i < 4; ++i) {
        params[i] = constant_floats(*g, bn.inputs[1 + i]);
        if (params[i].empty()) return false;
    }
    std::vector<float> w = constant_floats(*g, conv.inputs[1]);
    if (w.empty()) return false;
    const graph::Shape w_shape = g->tensors[conv.inputs[1]].shape;
    const int64_t channels = w_shape[axis];
    for (const std::vector<float>& p4 : params) {
        if (static_cast<int64_t>(p4.size()) != channels) return false;
    }
    const float eps = bn.attrs.get_float("epsilon", 1e-5f);
    std::vector<float> k(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) k[c] = params[0][c] / std::sqrt(params[3][c] + eps);
    // Scale the weights along the channel axis.
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < w_shape.size(); ++d) inner *= w_shape[d];
    for (size_t i = 0; i < w.size(); ++i) w[i] *= k[(static_cast<int64_t>(i) / inner) % channels];
    std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
    if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) {
        bias = constant_floats(*g, conv.inputs[2]);
        if (static_cast<int64_t>(bias.size()) != channels) return false;
    }
    for (int64_t c = 0; c < channels; ++c) bias[c] = (bias[c] - params[2][c]) * k[c] + params[1][c];
    const std::string base = g->tensors[conv.inputs[1]].name;
    conv.inputs[1] = add_float_constant(g, base + "_bn", w_shape, w);
    if (conv.inputs.size() < 3) conv.inputs.resize(3, -1);
    conv.inputs[2] = add_float_constant(g, base + "_bn_bias", {channels}, bias);
    conv.outputs[0] = bn.outputs[0];
    dead->insert(bn_index);
    return true;
}

}  // namespace

StatusOr<int> fold_batch_norm(graph::Graph* g) {
    int folded = 0;
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        if (g->ops[i].type == OpType::kBatchNormalization && try_fold(g, index, static_cast<int32_t>(i), &dead)) ++folded;
    }
    erase_ops(g, dead);
    return folded;
}

}  // namespace rknn::convert
