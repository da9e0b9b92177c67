// Constant folding with the CPU reference kernels: an op whose inputs are all
// known is run once at conversion time and replaced by its results.
#include <cstring>

#include "cpu/graph_executor.h"
#include "graph/shape_inference.h"
#include "graph/topology.h"
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

// Walks the graph in execution order. Each op's output shapes are inferred
// from what is known by then (the input shapes, and the values of constants
// and of everything folded so far), so a Reshape target computed from
// Shape/Gather/Concat chains is a constant by the time the Reshape is reached.
class Folder {
public:
    explicit Folder(graph::Graph* g) : g_(g), shape_known_(g->tensors.size(), false) {}

    StatusOr<int> run(const std::vector<graph::Shape>* input_shapes) {
        RKNN_ASSIGN_OR_RETURN(const std::vector<int32_t> order, graph::topological_order(*g_));
        for (size_t t = 0; t < g_->tensors.size(); ++t) shape_known_[t] = g_->is_constant(static_cast<int32_t>(t));
        for (size_t i = 0; i < g_->inputs.size(); ++i) {
            const int32_t in = g_->inputs[i];
            if (input_shapes != nullptr) g_->tensors[in].shape = (*input_shapes)[i];
            shape_known_[in] = is_static(g_->tensors[in].shape);
        }
        std::set<int32_t> dead;
        for (int32_t index : order) {
            RKNN_ASSIGN_OR_RETURN(const bool folded, visit(index));
            if (folded) dead.insert(index);
        }
        erase_ops(g_, dead);
        return static_cast<int>(dead.size());
    }

private:
    static bool is_static(const graph::Shape& s) {
        for (int64_t d : s) {
            if (d < 0) return false;
        }
        return true;
    }

    // Folds op `index` when it can; otherwise infers its output shapes.
    StatusOr<bool> visit(int32_t index) {
        const graph::Op op = g_->ops[index];
        const auto named = [&](const Status& s) {
            return Status(s.code(), std::string(graph::op_type_name(op.type)) + " \"" + op.name + "\": " + s.message());
        };
        const bool shape_of_known = op.type == graph::OpType::kShape && !op.inputs.empty() && op.inputs[0] >= 0 &&
                                    shape_known_[op.inputs[0]];
        if (shape_of_known && fold_static_shape(g_, op)) return mark_known(op);
        if (all_inputs_constant(*g_, op)) {
            std::vector<cpu::HostTensor> results;
            auto evaluated = evaluate(*g_, op, &results);
            if (!evaluated.is_ok()) return named(evaluated.status());
            if (evaluated.value()) {
                for (size_t k = 0; k < op.outputs.size(); ++k) {
                    graph::Tensor& out = g_->tensors[op.outputs[k]];
                    g_->buffers.push_back(graph::Buffer::copy_of(results[k].raw(), results[k].byte_size()));
                    out.buffer = static_cast<int32_t>(g_->buffers.size() - 1);
                    out.dtype = results[k].dtype();
                    out.shape = results[k].shape();
                }
                return mark_known(op);
            }
        }
        if (op.type == graph::OpType::kCustom) {
            // A user op keeps the shapes the file declares; static ones are known.
            for (int32_t t : op.outputs) shape_known_[t] = is_static(g_->tensors[t].shape);
            return false;
        }
        std::vector<graph::ValueInfo> infos(op.inputs.size());
        std::vector<const graph::ValueInfo*> ptrs(op.inputs.size(), nullptr);
        for (size_t i = 0; i < op.inputs.size(); ++i) {
            const int32_t t = op.inputs[i];
            if (t < 0) continue;
            if (!shape_known_[t]) return keep_declared_shapes(op);  // downstream of a run-time-valued shape
            const graph::Buffer* b = g_->constant_buffer(t);
            infos[i] = {g_->tensors[t].dtype, g_->tensors[t].shape, b != nullptr ? b->data : nullptr};
            ptrs[i] = &infos[i];
        }
        std::vector<graph::ValueInfo> outs;
        const Status inferred = graph::infer_op(op, ptrs, &outs);
        if (inferred.code() == StatusCode::kFailedPrecondition) return keep_declared_shapes(op);  // a run-time value
        if (!inferred.is_ok()) return named(inferred);
        for (size_t k = 0; k < op.outputs.size(); ++k) {
            graph::Tensor& out = g_->tensors[op.outputs[k]];
            out.dtype = outs[k].dtype;
            out.shape = outs[k].shape;
            shape_known_[op.outputs[k]] = true;
        }
        return false;
    }

    // An op whose output shapes are known only at run time: its outputs keep
    // the shapes the file declares, and take the element type the op gives
    // (the file may declare none for them).
    bool keep_declared_shapes(const graph::Op& op) {
        const graph::DType type = output_dtype(op);
        if (type == graph::DType::kUndefined) return false;
        for (int32_t t : op.outputs) g_->tensors[t].dtype = type;
        return false;
    }

    graph::DType output_dtype(const graph::Op& op) const {
        switch (op.type) {
        case graph::OpType::kCast: return graph::dtype_from_name(op.attrs.get_string("to", ""));
        case graph::OpType::kShape:
        case graph::OpType::kArgMax:
        case graph::OpType::kArgMin: return graph::DType::kInt64;
        case graph::OpType::kEqual:
        case graph::OpType::kGreater:
        case graph::OpType::kLess: return graph::DType::kBool;
        case graph::OpType::kWhere: return op.inputs.size() > 1 && op.inputs[1] >= 0 ? g_->tensors[op.inputs[1]].dtype
                                                                                     : graph::DType::kUndefined;
        case graph::OpType::kConstantOfShape: return graph::DType::kUndefined;  // the value attribute decides
        default:
            for (int32_t in : op.inputs) {
                if (in >= 0) return g_->tensors[in].dtype;
            }
            return graph::DType::kUndefined;
        }
    }

    bool mark_known(const graph::Op& op) {
        for (int32_t t : op.outputs) shape_known_[t] = true;
        return true;
    }

    graph::Graph* g_;
    std::vector<bool> shape_known_;
};

}  // namespace

StatusOr<int> fold_constants(graph::Graph* g, const std::vector<graph::Shape>* input_shapes) {
    if (input_shapes != nullptr && input_shapes->size() != g->inputs.size())
        return Status(StatusCode::kInvalidArgument, "one shape per input is needed");
    return Folder(g).run(input_shapes);
}

}  // namespace rknn::convert
