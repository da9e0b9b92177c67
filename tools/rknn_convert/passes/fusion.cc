// Op fusions: activations and residual adds into Conv/Gemm/MatMul, SiLU and
// GELU patterns into single ops, and removal of identities.
#include <cmath>

#include "cpu/fused_ops.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace rknn::convert {
namespace {

using graph::Op;
using graph::OpType;

bool is_fusable_producer(const graph::Graph& g, const Op& op) {
    if (op.type == OpType::kConv || op.type == OpType::kGemm) return true;
    // ConvTranspose runs on the CPU: an activation fused there is applied in
    // float before the output is rounded (PP-OCR det's final Sigmoid).
    if (op.type == OpType::kConvTranspose) return true;
    // MatMul only with constant weights (it runs as a fully connected layer).
    return op.type == OpType::kMatMul && op.inputs.size() >= 2 && g.is_constant(op.inputs[1]);
}

// The activation an op applies, if it is one a Conv can absorb with clamps
// (with_lut: or with a lookup table).
bool fusable_activation(const graph::Graph& g, const Op& op, bool with_lut, cpu::kernels::Activation* act) {
    act->type = op.type;
    if (with_lut) {
        if (!cpu::kernels::is_activation(op.type) || op.type == OpType::kIdentity || op.type == OpType::kRelu ||
            op.type == OpType::kClip || op.type == OpType::kLeakyRelu)
            return false;
        *act = cpu::kernels::activation_from_attrs(op.type, op.attrs);
        return true;
    }
    switch (op.type) {
    case OpType::kRelu: return true;
    case OpType::kLeakyRelu: act->alpha = op.attrs.get_float("alpha", 0.01f); return true;
    case OpType::kPRelu: {
        // A constant slope: one value is a leaky ReLU; several are checked
        // against the producer's channels by prelu_fits.
        if (op.inputs.size() != 2 || op.inputs[1] < 0 || !g.is_constant(op.inputs[1])) return false;
        const std::vector<float> slopes = constant_floats(g, op.inputs[1]);
        if (slopes.empty()) return false;
        if (slopes.size() == 1) {
            act->type = OpType::kLeakyRelu;
            act->alpha = slopes[0];
        } else {
            act->slopes = slopes;
        }
        return true;
    }
    case OpType::kClip: {
        act->min = op.attrs.get_float("min", -INFINITY);
        act->max = op.attrs.get_float("max", INFINITY);
        if (op.inputs.size() > 1 && op.inputs[1] >= 0 && !scalar_value(g, op.inputs[1], &act->min)) return false;
        if (op.inputs.size() > 2 && op.inputs[2] >= 0 && !scalar_value(g, op.inputs[2], &act->max)) return false;
        return true;
    }
    default: return false;
    }
}

// Whether a PRelu's slope tensor gives one slope per output channel of
// `producer`: [C, 1, 1] or [1, C, 1, 1] after a Conv (channels on axis 1),
// [N] or [1, N] after a Gemm or MatMul (channels last).
bool prelu_fits(const graph::Graph& g, const Op& producer, const Op& prelu) {
    const graph::Shape& y = g.tensors[static_cast<size_t>(producer.outputs[0])].shape;
    const graph::Shape& s = g.tensors[static_cast<size_t>(prelu.inputs[1])].shape;
    if (producer.type == OpType::kConv) {
        if (y.size() != 4) return false;
        const bool c11 = s.size() == 3 && s[0] == y[1] && s[1] == 1 && s[2] == 1;
        const bool one_c11 = s.size() == 4 && s[0] == 1 && s[1] == y[1] && s[2] == 1 && s[3] == 1;
        return c11 || one_c11;
    }
    if (y.size() != 2) return false;
    return (s.size() == 1 && s[0] == y[1]) || (s.size() == 2 && s[0] == 1 && s[1] == y[1]);
}

bool near(float a, float b) { return std::fabs(a - b) <= 1e-4f * std::fabs(b); }

}  // namespace

int remove_identities(graph::Graph* g) {
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        Op& op = g->ops[i];
        const bool dropout_without_mask = op.type == OpType::kDropout && op.outputs.size() == 1;
        if (op.type != OpType::kIdentity && !dropout_without_mask) continue;
        const int32_t in = op.inputs[0];
        const int32_t out = op.outputs[0];
        if (!index.is_output[out]) {
            replace_uses(g, out, in);
        } else if (index.producer[in] >= 0 && index.single_use(in) && !g->is_constant(in)) {
            // Keep the output's name: the producer writes it directly.
            for (int32_t& t : g->ops[index.producer[in]].outputs)
                if (t == in) t = out;
        } else {
            continue;
        }
        dead.insert(static_cast<int32_t>(i));
    }
    erase_ops(g, dead);
    return static_cast<int>(dead.size());
}

int fuse_silu(graph::Graph* g) {
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        Op& mul = g->ops[i];
        if (mul.type != OpType::kMul) continue;
        for (int side = 0; side < 2; ++side) {
            const int32_t s = mul.inputs[side];
            const int32_t p = index.producer[s];
            if (p < 0 || g->ops[p].type != OpType::kSigmoid || !index.single_use(s)) continue;
            const int32_t x = g->ops[p].inputs[0];
            if (mul.inputs[1 - side] != x || dead.count(p)) continue;
            mul.type = OpType::kSilu;
            mul.inputs = {x};
            dead.insert(p);
            break;
        }
    }
    erase_ops(g, dead);
    return static_cast<int>(dead.size());
}

int fuse_gelu(graph::Graph* g) {
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    for (size_t e = 0; e < g->ops.size(); ++e) {
        if (g->ops[e].type != OpType::kErf) continue;
        // t = x / sqrt(2)  (or x * 1/sqrt(2))
        const int32_t t = g->ops[e].inputs[0];
        const int32_t scale_op = index.producer[t];
        if (scale_op < 0 || !index.single_use(t)) continue;
        const Op& div = g->ops[scale_op];
        float c = 0.0f;
        const bool is_div = div.type == OpType::kDiv && scalar_value(*g, div.inputs[1], &c) && near(c, std::sqrt(2.0f));
        const bool is_mul = div.type == OpType::kMul && scalar_value(*g, div.inputs[1], &c) && near(c, std::sqrt(0.5f));
        if (!is_div && !is_mul) continue;
        const int32_t x = div.inputs[0];
        // u = erf(t) + 1
        const int32_t erf_out = g->ops[e].outputs[0];
        if (!index.single_use(erf_out)) continue;
        const int32_t add = index.readers[erf_out][0];
        float one = 0.0f;
        if (g->ops[add].type != OpType::kAdd || !scalar_value(*g, other_input(g->ops[add], erf_out), &one) || one != 1.0f)
            continue;
        const int32_t u = g->ops[add].outputs[0];
        if (!index.single_use(u)) continue;
        // Form A: (x * u) * 0.5.  Form B: (x * 0.5) * u.
        const int32_t m1 = index.readers[u][0];
        if (g->ops[m1].type != OpType::kMul) continue;
        const int32_t partner = other_input(g->ops[m1], u);
        int32_t last = -1;
        std::set<int32_t> consumed = {scale_op, static_cast<int32_t>(e), add};
        float half = 0.0f;
        if (partner == x) {
            const int32_t v = g->ops[m1].outputs[0];
            if (!index.single_use(v)) continue;
            const int32_t m2 = index.readers[v][0];
            if (g->ops[m2].type != OpType::kMul || !scalar_value(*g, other_input(g->ops[m2], v), &half) || half != 0.5f)
                continue;
            consumed.insert(m1);
            last = m2;
        } else {
            const int32_t pm = index.producer[partner];
            if (pm < 0 || g->ops[pm].type != OpType::kMul || !index.single_use(partner)) continue;
            const Op& xh = g->ops[pm];
            if (!(xh.inputs[0] == x && scalar_value(*g, xh.inputs[1], &half) && half == 0.5f)) continue;
            consumed.insert(pm);
            last = m1;
        }
        bool overlap = false;
        for (int32_t op : consumed) overlap = overlap || dead.count(op) || op == last;
        if (overlap) continue;
        Op& gelu = g->ops[last];
        gelu.type = OpType::kGelu;
        gelu.inputs = {x};
        gelu.attrs = {};
        dead.insert(consumed.begin(), consumed.end());
    }
    erase_ops(g, dead);
    return static_cast<int>(dead.size()) / 4;
}

int fuse_residual_adds(graph::Graph* g) {
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        const Op& add = g->ops[i];
        if (add.type != OpType::kAdd || add.inputs.size() != 2) continue;
        for (int side = 0; side < 2; ++side) {
            const int32_t a = add.inputs[side];
            const int32_t r = add.inputs[1 - side];
            const int32_t p = index.producer[a];
            if (p < 0 || dead.count(p) || !index.single_use(a) || g->is_constant(r) || a == r) continue;
            Op& conv = g->ops[p];
            if (conv.type != OpType::kConv || conv.attrs.has("activation") || conv.attrs.get_int("fused_add", 0))
                continue;
            const graph::Shape& sa = g->tensors[a].shape;
            if (sa.empty() || sa != g->tensors[r].shape || g->tensors[a].dtype != g->tensors[r].dtype) continue;
            bool dynamic = false;
            for (int64_t d : sa) dynamic = dynamic || d < 0;
            if (dynamic) continue;
            cpu::set_fused_residual(&conv, r);
            conv.outputs[0] = add.outputs[0];
            dead.insert(static_cast<int32_t>(i));
            break;
        }
    }
    erase_ops(g, dead);
    return static_cast<int>(dead.size());
}

namespace {

int fuse_into_producers(graph::Graph* g, bool with_lut, const std::map<std::string, std::pair<float, float>>* ranges) {
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        const Op& act_op = g->ops[i];
        cpu::kernels::Activation act;
        if (!fusable_activation(*g, act_op, with_lut, &act)) continue;
        const int32_t x = act_op.inputs[0];
        const int32_t p = index.producer[x];
        if (p < 0 || dead.count(p) || !index.single_use(x)) continue;
        Op& producer = g->ops[p];
        if (!is_fusable_producer(*g, producer) || producer.attrs.has("activation")) continue;
        if (act.type == OpType::kPRelu && !prelu_fits(*g, producer, act_op)) continue;
        cpu::set_fused_activation(&producer, act);
        if (ranges != nullptr) {
            const auto range = ranges->find(g->tensors[x].name);
            if (range != ranges->end()) cpu::set_fused_activation_range(&producer, range->second.first, range->second.second);
        }
        producer.outputs[0] = act_op.outputs[0];
        dead.insert(static_cast<int32_t>(i));
    }
    erase_ops(g, dead);
    return static_cast<int>(dead.size());
}

}  // namespace

int fuse_activations(graph::Graph* g) { return fuse_into_producers(g, false, nullptr); }

int fuse_lut_activations(graph::Graph* g, const std::map<std::string, std::pair<float, float>>* input_ranges) {
    return fuse_into_producers(g, true, input_ranges);
}

int remove_dead_code(graph::Graph* g) { return remove_dead_ops(g); }

}  // namespace rknn::convert
