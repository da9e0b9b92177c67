// Multi-op spellings of one operator, found and replaced by that operator:
//   HardSigmoid   relu6(x + 3) / 6           (relu6 = Clip(., 0, 6))
//   HardSwish     x * relu6(x + 3) / 6,  x * (relu6(x + 3) / 6),  x * HardSigmoid(x)
//   LayerNorm     (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta
// Each becomes one op, so an int8 model quantises (or keeps in float) one
// tensor instead of four to nine. Expects canonical arithmetic.
#include <cmath>

#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace rknn::convert {
namespace {

using graph::Op;
using graph::OpType;

bool near(float a, float b) { return std::fabs(a - b) <= 1e-4f * std::max(1.0f, std::fabs(b)); }

// The op writing `tensor` when it has type `type` and `tensor` has no other reader.
int32_t sole_producer(const graph::Graph& g, const GraphIndex& index, int32_t tensor, OpType type) {
    if (tensor < 0 || !index.single_use(tensor)) return -1;
    const int32_t p = index.producer[tensor];
    return p >= 0 && g.ops[p].type == type ? p : -1;
}

// Clip bounds from attributes (opset < 11) or constant inputs.
bool clip_bounds(const graph::Graph& g, const Op& clip, float* lo, float* hi) {
    *lo = clip.attrs.get_float("min", -INFINITY);
    *hi = clip.attrs.get_float("max", INFINITY);
    if (clip.inputs.size() > 1 && clip.inputs[1] >= 0 && !scalar_value(g, clip.inputs[1], lo)) return false;
    if (clip.inputs.size() > 2 && clip.inputs[2] >= 0 && !scalar_value(g, clip.inputs[2], hi)) return false;
    return true;
}

// Whether `op`'s output has the shape of its first input: a constant operand
// of higher rank would broadcast the result up, which the fused op would not.
bool keeps_shape(const graph::Graph& g, const Op& op) {
    return !op.inputs.empty() && op.inputs[0] >= 0 && g.tensors[op.outputs[0]].shape == g.tensors[op.inputs[0]].shape;
}

// When `r` is relu6(x + 3) read only once: x, and the two ops it took.
int32_t relu6_of_x_plus_3(const graph::Graph& g, const GraphIndex& index, int32_t r, std::set<int32_t>* ops) {
    const int32_t clip = sole_producer(g, index, r, OpType::kClip);
    float lo = 0.0f, hi = 0.0f, three = 0.0f;
    if (clip < 0 || !clip_bounds(g, g.ops[clip], &lo, &hi) || lo != 0.0f || !near(hi, 6.0f) ||
        !keeps_shape(g, g.ops[clip]))
        return -1;
    const int32_t add = sole_producer(g, index, g.ops[clip].inputs[0], OpType::kAdd);
    if (add < 0 || !scalar_value(g, g.ops[add].inputs[1], &three) || !near(three, 3.0f) || !keeps_shape(g, g.ops[add]))
        return -1;
    ops->insert({clip, add});
    return g.ops[add].inputs[0];
}

// Mul by one sixth (canonical: the constant second): the other operand.
int32_t times_one_sixth(const graph::Graph& g, const Op& op) {
    float c = 0.0f;
    if (op.type != OpType::kMul || op.inputs.size() != 2 || !scalar_value(g, op.inputs[1], &c) || !near(c, 1.0f / 6.0f) ||
        !keeps_shape(g, op))
        return -1;
    return op.inputs[0];
}

void become(Op* op, OpType type, int32_t x) {
    op->type = type;
    op->inputs = {x};
    op->attrs = {};
    if (type == OpType::kHardSigmoid) {
        op->attrs.set_float("alpha", 1.0f / 6.0f);
        op->attrs.set_float("beta", 0.5f);
    }
}

// Runs `match` on every op; it returns the ops it consumed (not the one it rewrote).
template <typename Match>
int rewrite_all(graph::Graph* g, Match match) {
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    int rewritten = 0;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        if (dead.count(static_cast<int32_t>(i))) continue;
        std::set<int32_t> consumed;
        if (!match(g, index, static_cast<int32_t>(i), &consumed)) continue;
        bool overlap = false;
        for (int32_t op : consumed) overlap = overlap || dead.count(op) || op == static_cast<int32_t>(i);
        if (overlap) continue;  // cannot happen with single-use checks; kept as a guard
        dead.insert(consumed.begin(), consumed.end());
        ++rewritten;
    }
    erase_ops(g, dead);
    return rewritten;
}

// relu6(x + 3) * (1/6) -> HardSigmoid(x).
bool match_hard_sigmoid(graph::Graph* g, const GraphIndex& index, int32_t i, std::set<int32_t>* consumed) {
    Op& op = g->ops[i];
    const int32_t r = times_one_sixth(*g, op);
    if (r < 0) return false;
    const int32_t x = relu6_of_x_plus_3(*g, index, r, consumed);
    if (x < 0) return false;
    become(&op, OpType::kHardSigmoid, x);
    return true;
}

// (x * relu6(x + 3)) * (1/6) -> HardSwish(x).
bool match_hard_swish_product(graph::Graph* g, const GraphIndex& index, int32_t i, std::set<int32_t>* consumed) {
    Op& op = g->ops[i];
    const int32_t t = times_one_sixth(*g, op);
    const int32_t product = sole_producer(*g, index, t, OpType::kMul);
    if (product < 0 || g->ops[product].inputs.size() != 2) return false;
    for (int side = 0; side < 2; ++side) {
        std::set<int32_t> ops = {product};
        const int32_t x = relu6_of_x_plus_3(*g, index, g->ops[product].inputs[side], &ops);
        if (x < 0 || g->ops[product].inputs[1 - side] != x || !keeps_shape(*g, g->ops[product])) continue;
        consumed->insert(ops.begin(), ops.end());
        become(&op, OpType::kHardSwish, x);
        return true;
    }
    return false;
}

// x * HardSigmoid(x) with alpha 1/6, beta 1/2 -> HardSwish(x).
bool match_x_times_hard_sigmoid(graph::Graph* g, const GraphIndex& index, int32_t i, std::set<int32_t>* consumed) {
    Op& op = g->ops[i];
    if (op.type != OpType::kMul || op.inputs.size() != 2) return false;
    for (int side = 0; side < 2; ++side) {
        const int32_t h = sole_producer(*g, index, op.inputs[side], OpType::kHardSigmoid);
        if (h < 0) continue;
        const Op& hs = g->ops[h];
        if (hs.inputs.size() != 1 || hs.inputs[0] != op.inputs[1 - side] || hs.attrs.has("post_scale") ||
            !near(hs.attrs.get_float("alpha", 0.2f), 1.0f / 6.0f) || !near(hs.attrs.get_float("beta", 0.5f), 0.5f))
            continue;
        consumed->insert(h);
        become(&op, OpType::kHardSwish, hs.inputs[0]);
        return true;
    }
    return false;
}

// ReduceMean over the last axis only, keeping dims.
bool mean_over_last_axis(const graph::Graph& g, const Op& op) {
    if (op.type != OpType::kReduceMean || op.inputs.empty() || op.inputs[0] < 0) return false;
    const std::vector<int64_t> axes = op.attrs.get_ints("axes");
    const int64_t rank = static_cast<int64_t>(g.tensors[op.inputs[0]].shape.size());
    return op.attrs.get_int("keepdims", 1) == 1 && axes.size() == 1 && rank > 0 &&
           (axes[0] == -1 || axes[0] == rank - 1);
}

// Mul or Add by a constant (canonical form).
bool by_constant(const graph::Graph& g, const Op& op, OpType type) {
    return op.type == type && op.inputs.size() == 2 && op.inputs[1] >= 0 && g.is_constant(op.inputs[1]);
}

// Whether the result of op `i` goes on into a constant Mul (gamma) or Add (beta)
// that the match should take too.
bool continues_affine(const graph::Graph& g, const GraphIndex& index, int32_t i) {
    const int32_t y = g.ops[i].outputs[0];
    if (!index.single_use(y)) return false;
    const Op& next = g.ops[index.readers[y][0]];
    if (next.inputs[0] != y) return false;
    return by_constant(g, next, OpType::kAdd) || (g.ops[i].type == OpType::kDiv && by_constant(g, next, OpType::kMul));
}

// The decomposed layer normalisation, matched from its last op (Div, or the
// Mul by gamma, or the Add of beta).
bool match_layer_norm(graph::Graph* g, const GraphIndex& index, int32_t i, std::set<int32_t>* consumed) {
    int32_t at = i, gamma = -1, beta = -1;
    const auto step_back = [&](OpType type, int32_t* constant) {
        if (!by_constant(*g, g->ops[at], type)) return true;
        *constant = g->ops[at].inputs[1];
        const int32_t in = g->ops[at].inputs[0];
        const int32_t p = index.producer[in];
        if (p < 0 || !index.single_use(in)) return false;
        if (at != i) consumed->insert(at);
        at = p;
        return true;
    };
    if (!step_back(OpType::kAdd, &beta) || !step_back(OpType::kMul, &gamma)) return false;
    const Op& div = g->ops[at];
    if (div.type != OpType::kDiv || div.inputs.size() != 2 || continues_affine(*g, index, i)) return false;
    if (at != i) consumed->insert(at);
    // Div(d, Sqrt(Add(ReduceMean(Pow(d, 2)), eps))), d = Sub(x, ReduceMean(x)).
    const int32_t d = div.inputs[0];
    const int32_t sqrt = sole_producer(*g, index, div.inputs[1], OpType::kSqrt);
    const int32_t add_eps = sqrt < 0 ? -1 : sole_producer(*g, index, g->ops[sqrt].inputs[0], OpType::kAdd);
    float eps = -1.0f;
    if (add_eps < 0 || !scalar_value(*g, g->ops[add_eps].inputs[1], &eps) || !(eps >= 0.0f)) return false;
    const int32_t var = sole_producer(*g, index, g->ops[add_eps].inputs[0], OpType::kReduceMean);
    if (var < 0 || !mean_over_last_axis(*g, g->ops[var])) return false;
    const int32_t square = sole_producer(*g, index, g->ops[var].inputs[0], OpType::kPow);
    float two = 0.0f;
    if (square < 0 || g->ops[square].inputs.size() != 2 || g->ops[square].inputs[0] != d ||
        !scalar_value(*g, g->ops[square].inputs[1], &two) || two != 2.0f)
        return false;
    const int32_t sub = d < 0 ? -1 : index.producer[d];  // d is read by the Pow and the Div only
    if (sub < 0 || g->ops[sub].type != OpType::kSub || index.is_output[d] || index.readers[d].size() != 2) return false;
    const int32_t x = g->ops[sub].inputs[0];
    const int32_t mean = sole_producer(*g, index, g->ops[sub].inputs[1], OpType::kReduceMean);
    if (mean < 0 || g->ops[mean].inputs[0] != x || !mean_over_last_axis(*g, g->ops[mean])) return false;
    // gamma and beta must vary along the normalised (last) axis only.
    const graph::Shape xs = g->tensors[x].shape;
    if (xs.empty() || xs.back() <= 0 || g->tensors[x].dtype != graph::DType::kFloat32 ||
        g->tensors[g->ops[i].outputs[0]].shape != xs)  // eps, the exponent or gamma/beta broadcast no higher
        return false;
    const size_t width = static_cast<size_t>(xs.back());
    const std::vector<float> g_values =
        gamma >= 0 ? per_channel_values(*g, gamma, xs, xs.size() - 1) : std::vector<float>(width, 1.0f);
    const std::vector<float> b_values =
        beta >= 0 ? per_channel_values(*g, beta, xs, xs.size() - 1) : std::vector<float>(width, 0.0f);
    if (g_values.size() != width || b_values.size() != width) return false;
    consumed->insert({sqrt, add_eps, var, square, sub, mean});
    Op& last = g->ops[i];
    const std::string base = last.name;
    last.type = OpType::kLayerNormalization;
    last.inputs = {x, add_float_constant(g, base + "_gamma", {xs.back()}, g_values),
                   add_float_constant(g, base + "_beta", {xs.back()}, b_values)};
    last.attrs = {};
    last.attrs.set_int("axis", -1);
    last.attrs.set_float("epsilon", eps);
    return true;
}

}  // namespace

int fuse_hard_activations(graph::Graph* g) {
    int fused = rewrite_all(g, match_hard_swish_product);
    fused += rewrite_all(g, match_hard_sigmoid);
    fused += rewrite_all(g, match_x_times_hard_sigmoid);
    return fused;
}

int fuse_layer_norms(graph::Graph* g) { return rewrite_all(g, match_layer_norm); }

}  // namespace rknn::convert
