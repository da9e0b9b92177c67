#include "graph/shape_check.h"

#include "graph/op_schema.h"
#include "graph/shape_inference.h"
#include "graph/topology.h"

namespace rknn::graph {
namespace {

// Per tensor: what is known while walking the graph.
struct Known {
    bool valid = false;
    ValueInfo info;
};

std::vector<Known> seed(const Graph& graph) {
    std::vector<Known> known(graph.tensors.size());
    for (size_t t = 0; t < graph.tensors.size(); ++t) {
        const Buffer* buffer = graph.constant_buffer(static_cast<int32_t>(t));
        if (buffer == nullptr) continue;
        known[t].valid = true;
        known[t].info = {graph.tensors[t].dtype, graph.tensors[t].shape, buffer->data};
    }
    return known;
}

// Runs inference for one op; `ok` false when an input is unknown or a value is missing.
Status infer_one(const Graph& graph, const Op& op, const std::vector<Known>& known, std::vector<ValueInfo>* out,
                 bool* ok) {
    *ok = false;
    std::vector<const ValueInfo*> in(op.inputs.size(), nullptr);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int32_t t = op.inputs[i];
        if (t < 0) continue;
        if (!known[t].valid) return Status::ok();
        in[i] = &known[t].info;
    }
    if (op.type == OpType::kCustom) {
        out->clear();
        for (int32_t t : op.outputs) out->push_back({graph.tensors[t].dtype, graph.tensors[t].shape, nullptr});
        *ok = true;
        return Status::ok();
    }
    Status status = infer_op(op, in, out);
    if (status.code() == StatusCode::kFailedPrecondition) return Status::ok();
    RKNN_RETURN_IF_ERROR(status);
    *ok = true;
    return Status::ok();
}

bool shape_matches(const Shape& declared, const Shape& inferred) {
    if (declared.size() != inferred.size()) return false;
    for (size_t d = 0; d < declared.size(); ++d) {
        if (declared[d] >= 0 && declared[d] != inferred[d]) return false;
    }
    return true;
}

}  // namespace

namespace {

// `keep_dtypes`: only shapes are written; each tensor keeps its stored
// element type, and ops after it see that type.
Status infer_shapes(Graph* graph, const std::vector<Shape>& input_shapes, bool keep_dtypes) {
    if (input_shapes.size() != graph->inputs.size())
        return Status(StatusCode::kInvalidArgument, "one shape per input is needed");
    RKNN_ASSIGN_OR_RETURN(const std::vector<int32_t> order, topological_order(*graph));
    std::vector<Known> known = seed(*graph);
    for (size_t i = 0; i < input_shapes.size(); ++i) {
        Tensor& t = graph->tensors[graph->inputs[i]];
        t.shape = input_shapes[i];
        known[graph->inputs[i]] = {true, {t.dtype, t.shape, nullptr}};
    }
    for (int32_t index : order) {
        const Op& op = graph->ops[index];
        std::vector<ValueInfo> out;
        bool ok = false;
        RKNN_RETURN_IF_ERROR(infer_one(*graph, op, known, &out, &ok));
        if (!ok) {
            return Status(StatusCode::kFailedPrecondition,
                          std::string(op_type_name(op.type)) + " \"" + op.name +
                              "\": its output shape depends on a value known only at run time");
        }
        for (size_t i = 0; i < op.outputs.size(); ++i) {
            Tensor& t = graph->tensors[op.outputs[i]];
            t.shape = out[i].shape;
            if (op.type != OpType::kCustom && !keep_dtypes) t.dtype = out[i].dtype;
            known[op.outputs[i]] = {true, {t.dtype, t.shape, nullptr}};
        }
    }
    return Status::ok();
}

}  // namespace

Status infer_graph_shapes(Graph* graph, const std::vector<Shape>& input_shapes) {
    return infer_shapes(graph, input_shapes, /*keep_dtypes=*/false);
}

Status reinfer_graph_shapes(Graph* graph, const std::vector<Shape>& input_shapes) {
    return infer_shapes(graph, input_shapes, /*keep_dtypes=*/true);
}

Status check_graph_shapes(const Graph& graph) {
    RKNN_ASSIGN_OR_RETURN(const std::vector<int32_t> order, topological_order(graph));
    std::vector<Known> known = seed(graph);
    for (int32_t in : graph.inputs) {
        const Tensor& t = graph.tensors[in];
        bool dynamic = false;
        for (int64_t d : t.shape) dynamic = dynamic || d < 0;
        if (!dynamic) known[in] = {true, {t.dtype, t.shape, nullptr}};
    }
    for (int32_t index : order) {
        const Op& op = graph.ops[index];
        RKNN_RETURN_IF_ERROR(check_arity(op));
        std::vector<ValueInfo> out;
        bool ok = false;
        RKNN_RETURN_IF_ERROR(infer_one(graph, op, known, &out, &ok).with_context("op " + std::to_string(index)));
        if (!ok) continue;
        for (size_t i = 0; i < op.outputs.size(); ++i) {
            const Tensor& t = graph.tensors[op.outputs[i]];
            // Quantised graphs may store a different element type than inference
            // derives from float inputs; shapes must always agree.
            if (!shape_matches(t.shape, out[i].shape)) {
                return make_status(StatusCode::kModelInvalid, "op %d (%s \"%s\") output %zu: declared shape %s, inferred %s",
                                   index, op_type_name(op.type), op.name.c_str(), i, shape_to_string(t.shape).c_str(),
                                   shape_to_string(out[i].shape).c_str());
            }
            known[op.outputs[i]] = {true, {t.dtype, out[i].shape, nullptr}};
        }
    }
    return Status::ok();
}

}  // namespace rknn::graph
