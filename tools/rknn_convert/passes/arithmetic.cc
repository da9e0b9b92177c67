// Canonical forms for arithmetic with constants, so that later passes match
// one spelling: x / c becomes x * (1 / c), x - c becomes x + (-c), a constant
// first operand of Add/Mul moves second, and x * 1, x + 0 disappear.
#include <cmath>

#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace rknn::convert {
namespace {

using graph::Op;
using graph::OpType;

bool is_float_constant(const graph::Graph& g, int32_t tensor) {
    return tensor >= 0 && g.is_constant(tensor) && g.tensors[tensor].dtype == graph::DType::kFloat32;
}

// Replaces the constant operand of `op` (input 1) with `values`, same shape.
void set_constant_operand(graph::Graph* g, Op* op, const std::vector<float>& values, const char* suffix) {
    const graph::Shape shape = g->tensors[op->inputs[1]].shape;
    op->inputs[1] = add_float_constant(g, g->tensors[op->inputs[1]].name + suffix, shape, values);
}

// Rewrites one op into its canonical form; true when it changed.
bool canonicalize(graph::Graph* g, Op* op) {
    if (op->inputs.size() != 2 || op->inputs[0] < 0 || op->inputs[1] < 0) return false;
    const bool commutative = op->type == OpType::kAdd || op->type == OpType::kMul;
    if (commutative && is_float_constant(*g, op->inputs[0]) && !g->is_constant(op->inputs[1])) {
        std::swap(op->inputs[0], op->inputs[1]);
        return true;
    }
    if (!is_float_constant(*g, op->inputs[1]) || g->is_constant(op->inputs[0])) return false;
    std::vector<float> c = constant_floats(*g, op->inputs[1]);
    if (c.empty()) return false;
    if (op->type == OpType::kDiv) {
        for (float& v : c) {
            // Keep x / 0 as the model wrote it, and a divisor whose reciprocal overflows.
            if (v == 0.0f || !std::isfinite(v) || !std::isfinite(1.0f / v)) return false;
            v = 1.0f / v;
        }
        op->type = OpType::kMul;
        set_constant_operand(g, op, c, "_reciprocal");
        return true;
    }
    if (op->type == OpType::kSub) {
        for (float& v : c) v = -v;
        op->type = OpType::kAdd;
        set_constant_operand(g, op, c, "_negated");
        return true;
    }
    return false;
}

// x * 1 or x + 0 whose result has x's shape and type.
bool is_neutral(const graph::Graph& g, const Op& op) {
    if ((op.type != OpType::kMul && op.type != OpType::kAdd) || op.inputs.size() != 2 || op.inputs[0] < 0 ||
        !is_float_constant(g, op.inputs[1]) || g.is_constant(op.inputs[0]))
        return false;
    const graph::Tensor& x = g.tensors[op.inputs[0]];
    const graph::Tensor& y = g.tensors[op.outputs[0]];
    if (x.dtype != y.dtype || x.shape != y.shape || g.tensors[op.inputs[1]].shape.size() > x.shape.size()) return false;
    const float neutral = op.type == OpType::kMul ? 1.0f : 0.0f;
    for (float v : constant_floats(g, op.inputs[1])) {
        if (v != neutral) return false;
    }
    return true;
}

}  // namespace

int canonicalize_arithmetic(graph::Graph* g) {
    int rewritten = 0;
    for (Op& op : g->ops) rewritten += canonicalize(g, &op) ? 1 : 0;
    // Neutral ops go once the index is valid; an op writing a graph output stays.
    const GraphIndex index(*g);
    std::set<int32_t> dead;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        const Op& op = g->ops[i];
        if (!is_neutral(*g, op) || index.is_output[op.outputs[0]]) continue;
        replace_uses(g, op.outputs[0], op.inputs[0]);
        dead.insert(static_cast<int32_t>(i));
    }
    erase_ops(g, dead);  // also drops the constants nothing reads any more
    return rewritten + static_cast<int>(dead.size());
}

}  // namespace rknn::convert
