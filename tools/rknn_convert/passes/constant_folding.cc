// Constant folding with the CPU reference kernels: an op whose inputs are all
// known is run once at conversion time and replaced by its results.
#include <cstring>

#include "cpu/graph_executor.h"
#include "graph/shape_inference.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace rknn::convert {
namespace {

// Folded results larger than this stay as ops (e.g. a huge ConstantOfShape).
constexpr size_t kMaxFoldedBytes = size_t{64} << 20;

// Runs `op` alone on its constant inputs. Returns false (no error) when the op
// cannot be evaluated here, e.g. a custom op.
StatusOr<bool> evaluate(const graph::Graph& g, const graph::Op& op, std::vector<cpu::HostTensor>* results) {
    if (op.type == graph::OpType::kCustom) return false;
    graph::Graph mini;
    graph::Op copy = op;
    std::vector<graph::ValueInfo> infos(op.inputs.size());
    std::vector<const graph::ValueInfo*> ptrs(op.inputs.size(), nullptr);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int32_t t = op.inputs[i];
        if (t < 0) continue;
        const graph::Tensor& src = g.tensors[t];
        mini.buffers.push_back(g.buffers[src.buffer]);
        graph::Tensor c = src;
        c.buffer = static_cast<int32_t>(mini.buffers.size() - 1);
        copy.inputs[i] = mini.add_tensor(std::move(c));
        infos[i] = {src.dtype, src.shape, g.buffers[src.buffer].data};
        ptrs[i] = &infos[i];
    }
    std::vector<graph::ValueInfo> outs;
    Status inferred = graph::infer_op(op, ptrs, &outs);
    if (!inferred.is_ok()) return inferred;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        int64_t n = 0;
        if (!graph::checked_num_elements(outs[i].shape, &n) ||
            static_cast<size_t>(n) * graph::dtype_size(outs[i].dtype) > kMaxFoldedBytes)
            return false;
        graph::Tensor t = g.tensors[op.outputs[i]];
        t.dtype = outs[i].dtype;
        t.shape = outs[i].shape;
        t.quant = {};
        copy.outputs[i] = mini.add_tensor(std::move(t));
        mini.outputs.push_back(copy.outputs[i]);
    }
    mini.add_op(std::move(copy));
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(mini));
    RKNN_RETURN_IF_ERROR(exec->run({}, results));
    return true;
}

bool all_inputs_constant(const graph::Graph& g, const graph::Op& op) {
    for (int32_t in : op.inputs) {
        if (in >= 0 && !g.is_constant(in)) return false;
    }
    return true;
}

// Shape of a tensor whose shape is fully known is a constant.
bool fold_static_shape(graph::Graph* g, const graph::Op& op) {
    if (op.type != graph::OpType::kShape || op.inputs.empty() || op.inputs[0] < 0) return false;
    const graph::Shape& s = g->tensors[op.inputs[0]].shape;
    for (int64_t d : s) {
        if (d < 0) return false;
    }
    const int64_t rank = static_cast<int64_t>(s.size());
    int64_t start = op.attrs.get_int("start", 0);
    int64_t end = op.attrs.get_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::min(std::max<int64_t>(start, 0), rank);
    end = std::min(std::max<int64_t>(end, start), rank);
    const std::vector<int64_t> values(s.begin() + start, s.begin() + end);
    graph::Tensor& out = g->tensors[op.outputs[0]];
    g->buffers.push_back(graph::Buffer::copy_of(values.data(), values.size() * 8));
    out.buffer = static_cast<int32_t>(g->buffers.size() - 1);
    out.dtype = graph::DType::kInt64;
    out.shape = {static_cast<int64_t>(values.size())};
    return true;
}

}  // namespace

StatusOr<int> fold_constants(graph::Graph* g) {
    int folded = 0;
    for (bool changed = true; changed;) {
        changed = false;
        std::set<int32_t> dead;
        for (size_t i = 0; i < g->ops.size(); ++i) {
            const graph::Op& op = g->ops[i];
            if (fold_static_shape(g, op)) {
                dead.insert(static_cast<int32_t>(i));
                continue;
            }
            if (!all_inputs_constant(*g, op)) continue;
            std::vector<cpu::HostTensor> results;
            RKNN_ASSIGN_OR_RETURN(const bool evaluated, evaluate(*g, op, &results));
            if (!evaluated) continue;
            for (size_t k = 0; k < op.outputs.size(); ++k) {
                graph::Tensor& out = g->tensors[op.outputs[k]];
                g->buffers.push_back(graph::Buffer::copy_of(results[k].raw(), results[k].byte_size()));
                out.buffer = static_cast<int32_t>(g->buffers.size() - 1);
                out.dtype = results[k].dtype();
                out.shape = results[k].shape();
            }
            dead.insert(static_cast<int32_t>(i));
        }
        if (!dead.empty()) {
            folded += static_cast<int>(dead.size());
            erase_ops(g, dead);
            changed = true;
        }
    }
    return folded;
}

}  // namespace rknn::convert
