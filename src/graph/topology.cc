#include "graph/topology.h"

#include <algorithm>
#include <queue>

namespace rknn::graph {

std::vector<int32_t> producers(const Graph& graph) {
    std::vector<int32_t> result(graph.tensors.size(), -1);
    for (size_t op = 0; op < graph.ops.size(); ++op) {
        for (int32_t out : graph.ops[op].outputs) {
            if (out >= 0 && static_cast<size_t>(out) < result.size()) result[out] = static_cast<int32_t>(op);
        }
    }
    return result;
}

std::vector<std::vector<int32_t>> consumers(const Graph& graph) {
    std::vector<std::vector<int32_t>> result(graph.tensors.size());
    for (size_t op = 0; op < graph.ops.size(); ++op) {
        for (int32_t in : graph.ops[op].inputs) {
            if (in < 0 || static_cast<size_t>(in) >= result.size()) continue;
            auto& list = result[in];
            if (list.empty() || list.back() != static_cast<int32_t>(op)) list.push_back(static_cast<int32_t>(op));
        }
    }
    return result;
}

StatusOr<std::vector<int32_t>> topological_order(const Graph& graph) {
    const std::vector<int32_t> producer = producers(graph);
    const size_t n = graph.ops.size();
    std::vector<int32_t> pending(n, 0);
    std::vector<std::vector<int32_t>> dependents(n);
    for (size_t op = 0; op < n; ++op) {
        for (int32_t in : graph.ops[op].inputs) {
            if (in < 0 || static_cast<size_t>(in) >= producer.size()) continue;
            const int32_t p = producer[in];
            if (p < 0) continue;
            ++pending[op];
            dependents[p].push_back(static_cast<int32_t>(op));
        }
    }
    // A min-heap keeps the order stable: among ready ops the lowest index runs first.
    std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
    for (size_t op = 0; op < n; ++op) {
        if (pending[op] == 0) ready.push(static_cast<int32_t>(op));
    }
    std::vector<int32_t> order;
    order.reserve(n);
    while (!ready.empty()) {
        const int32_t op = ready.top();
        ready.pop();
        order.push_back(op);
        for (int32_t next : dependents[op]) {
            if (--pending[next] == 0) ready.push(next);
        }
    }
    if (order.size() != n) {
        return Status(StatusCode::kModelInvalid, "the graph has a cycle (" + std::to_string(n - order.size()) +
                                                     " ops never become ready)");
    }
    return order;
}

std::vector<TensorLifetime> tensor_lifetimes(const Graph& graph, const std::vector<int32_t>& order) {
    std::vector<TensorLifetime> life(graph.tensors.size());
    for (size_t pos = 0; pos < order.size(); ++pos) {
        const Op& op = graph.ops[order[pos]];
        for (int32_t out : op.outputs) {
            if (out >= 0) life[out].first = static_cast<int32_t>(pos);
        }
        for (int32_t in : op.inputs) {
            if (in >= 0) life[in].last = std::max(life[in].last, static_cast<int32_t>(pos));
        }
    }
    for (int32_t out : graph.outputs) {
        if (out >= 0 && static_cast<size_t>(out) < life.size()) life[out].last = static_cast<int32_t>(order.size());
    }
    return life;
}

namespace {

Status check_index(int64_t index, size_t size, const char* what, size_t where) {
    if (index < 0 || static_cast<size_t>(index) >= size) {
        return make_status(StatusCode::kModelInvalid, "%s %zu refers to tensor %lld, but there are %zu tensors",
                           what, where, static_cast<long long>(index), size);
    }
    return Status::ok();
}

Status check_constants(const Graph& graph) {
    for (size_t t = 0; t < graph.tensors.size(); ++t) {
        const Tensor& tensor = graph.tensors[t];
        if (tensor.buffer < 0) continue;
        if (static_cast<size_t>(tensor.buffer) >= graph.buffers.size()) {
            return make_status(StatusCode::kModelInvalid, "tensor %zu (%s) uses buffer %d of %zu", t,
                               tensor.name.c_str(), tensor.buffer, graph.buffers.size());
        }
        int64_t elements = 0;
        if (!checked_num_elements(tensor.shape, &elements)) {
            return make_status(StatusCode::kModelInvalid, "constant %s has an invalid shape %s", tensor.name.c_str(),
                               shape_to_string(tensor.shape).c_str());
        }
        const uint64_t expected = static_cast<uint64_t>(elements) * dtype_size(tensor.dtype);
        if (graph.buffers[tensor.buffer].size != expected) {
            return make_status(StatusCode::kModelInvalid, "constant %s %s %s needs %llu bytes, its buffer has %zu",
                               tensor.name.c_str(), dtype_name(tensor.dtype), shape_to_string(tensor.shape).c_str(),
                               static_cast<unsigned long long>(expected), graph.buffers[tensor.buffer].size);
        }
    }
    return Status::ok();
}

// A dynamic model's input ranges (--dynamic-range): one per input, of the
// input's rank, each dim 1 <= min <= max with a step of at least 1, and
// every shape set inside them.
Status validate_input_ranges(const Graph& graph) {
    if (graph.input_ranges.empty()) return Status::ok();
    if (graph.shape_sets.empty())
        return Status(StatusCode::kModelInvalid, "the model has input ranges but no shape sets");
    if (graph.input_ranges.size() != graph.inputs.size())
        return make_status(StatusCode::kModelInvalid, "%zu input ranges for %zu inputs", graph.input_ranges.size(),
                           graph.inputs.size());
    for (size_t i = 0; i < graph.input_ranges.size(); ++i) {
        const ShapeRange& r = graph.input_ranges[i];
        const size_t rank = graph.tensors[static_cast<size_t>(graph.inputs[i])].shape.size();
        if (r.min.size() != rank || r.max.size() != rank || r.step.size() != rank)
            return make_status(StatusCode::kModelInvalid, "the range of input %zu does not have the input's %zu dims",
                               i, rank);
        constexpr int64_t kMostDim = int64_t{1} << 31;  // rknn_tensor_attr dims are uint32
        for (size_t d = 0; d < rank; ++d)
            if (r.min[d] < 1 || r.max[d] < r.min[d] || r.max[d] >= kMostDim || r.step[d] < 1)
                return make_status(StatusCode::kModelInvalid,
                                   "the range of input %zu, dim %zu: min %lld, max %lld, step %lld", i, d,
                                   static_cast<long long>(r.min[d]), static_cast<long long>(r.max[d]),
                                   static_cast<long long>(r.step[d]));
        for (size_t k = 0; k < graph.shape_sets.size(); ++k)
            if (!r.contains(graph.shape_sets[k][i]))
                return make_status(StatusCode::kModelInvalid, "shape set %zu: input %zu %s is outside its range", k, i,
                                   shape_to_string(graph.shape_sets[k][i]).c_str());
    }
    return Status::ok();
}

}  // namespace

Status validate_structure(const Graph& graph) {
    const size_t n = graph.tensors.size();
    for (size_t i = 0; i < graph.inputs.size(); ++i) RKNN_RETURN_IF_ERROR(check_index(graph.inputs[i], n, "input", i));
    for (size_t i = 0; i < graph.outputs.size(); ++i)
        RKNN_RETURN_IF_ERROR(check_index(graph.outputs[i], n, "output", i));
    RKNN_RETURN_IF_ERROR(check_constants(graph));

    std::vector<uint8_t> written(n, 0);
    for (int32_t in : graph.inputs) {
        if (written[in]) return make_status(StatusCode::kModelInvalid, "tensor %d is listed twice as an input", in);
        if (graph.tensors[in].buffer >= 0)
            return make_status(StatusCode::kModelInvalid, "input tensor %d is a constant", in);
        written[in] = 1;
    }
    for (size_t op = 0; op < graph.ops.size(); ++op) {
        const Op& o = graph.ops[op];
        if (o.type == OpType::kUnknown) return make_status(StatusCode::kModelInvalid, "op %zu has no known type", op);
        for (int32_t in : o.inputs) {
            if (in != -1) RKNN_RETURN_IF_ERROR(check_index(in, n, "an input of op", op));
        }
        for (int32_t out : o.outputs) {
            RKNN_RETURN_IF_ERROR(check_index(out, n, "an output of op", op));
            if (graph.tensors[out].buffer >= 0)
                return make_status(StatusCode::kModelInvalid, "op %zu writes constant tensor %d", op, out);
            if (written[out])
                return make_status(StatusCode::kModelInvalid, "tensor %d is written twice (op %zu)", out, op);
            written[out] = 1;
        }
    }
    for (size_t op = 0; op < graph.ops.size(); ++op) {
        for (int32_t in : graph.ops[op].inputs) {
            if (in >= 0 && !written[in] && graph.tensors[in].buffer < 0)
                return make_status(StatusCode::kModelInvalid, "op %zu reads tensor %d (%s), which nothing produces",
                                   op, in, graph.tensors[in].name.c_str());
        }
    }
    for (int32_t out : graph.outputs) {
        if (!written[out] && graph.tensors[out].buffer < 0)
            return make_status(StatusCode::kModelInvalid, "output tensor %d is never produced", out);
    }
    if (!graph.preprocess.empty() && graph.preprocess.size() != graph.inputs.size())
        return make_status(StatusCode::kModelInvalid, "%zu pre-processing entries for %zu inputs",
                           graph.preprocess.size(), graph.inputs.size());
    // The API reports at most RKNN_MAX_DYNAMIC_SHAPE_NUM sets, and the
    // runtime compiles every one at init.
    constexpr size_t kMaxShapeSets = 512;
    if (graph.shape_sets.size() > kMaxShapeSets)
        return make_status(StatusCode::kModelInvalid, "%zu shape sets; at most %zu", graph.shape_sets.size(),
                           kMaxShapeSets);
    for (size_t k = 0; k < graph.shape_sets.size(); ++k) {
        if (graph.shape_sets[k].size() != graph.inputs.size())
            return make_status(StatusCode::kModelInvalid, "shape set %zu has %zu shapes for %zu inputs", k,
                               graph.shape_sets[k].size(), graph.inputs.size());
    }
    RKNN_RETURN_IF_ERROR(validate_input_ranges(graph));
    return topological_order(graph).status();
}

}  // namespace rknn::graph
