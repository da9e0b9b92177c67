#include "passes/graph_edit.h"

#include <cstring>

namespace rknn::convert {

GraphIndex::GraphIndex(const graph::Graph& g)
    : producer(g.tensors.size(), -1), readers(g.tensors.size()), is_output(g.tensors.size(), false) {
    for (size_t op = 0; op < g.ops.size(); ++op) {
        for (int32_t out : g.ops[op].outputs) producer[out] = static_cast<int32_t>(op);
        for (int32_t in : g.ops[op].inputs) {
            if (in < 0) continue;
            auto& list = readers[in];
            if (list.empty() || list.back() != static_cast<int32_t>(op)) list.push_back(static_cast<int32_t>(op));
        }
    }
    for (int32_t out : g.outputs) is_output[out] = true;
}

void replace_uses(graph::Graph* g, int32_t from, int32_t to) {
    for (graph::Op& op : g->ops) {
        for (int32_t& in : op.inputs) {
            if (in == from) in = to;
        }
    }
    for (int32_t& out : g->outputs) {
        if (out == from) out = to;
    }
}

void erase_ops(graph::Graph* g, const std::set<int32_t>& dead) {
    std::vector<graph::Op> ops;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        if (dead.count(static_cast<int32_t>(i)) == 0) ops.push_back(std::move(g->ops[i]));
    }
    g->ops = std::move(ops);

    // Renumber tensors that are still referenced.
    std::vector<bool> used(g->tensors.size(), false);
    for (int32_t t : g->inputs) used[t] = true;
    for (int32_t t : g->outputs) used[t] = true;
    for (const graph::Op& op : g->ops) {
        for (int32_t t : op.inputs)
            if (t >= 0) used[t] = true;
        for (int32_t t : op.outputs) used[t] = true;
    }
    std::vector<int32_t> remap(g->tensors.size(), -1);
    std::vector<graph::Tensor> tensors;
    for (size_t t = 0; t < g->tensors.size(); ++t) {
        if (!used[t]) continue;
        remap[t] = static_cast<int32_t>(tensors.size());
        tensors.push_back(std::move(g->tensors[t]));
    }
    g->tensors = std::move(tensors);
    for (int32_t& t : g->inputs) t = remap[t];
    for (int32_t& t : g->outputs) t = remap[t];
    for (graph::Op& op : g->ops) {
        for (int32_t& t : op.inputs)
            if (t >= 0) t = remap[t];
        for (int32_t& t : op.outputs) t = remap[t];
    }

    // Renumber buffers that are still referenced.
    std::vector<int32_t> buffer_remap(g->buffers.size(), -1);
    std::vector<graph::Buffer> buffers;
    for (graph::Tensor& t : g->tensors) {
        if (t.buffer < 0) continue;
        if (buffer_remap[t.buffer] < 0) {
            buffer_remap[t.buffer] = static_cast<int32_t>(buffers.size());
            buffers.push_back(g->buffers[t.buffer]);
        }
        t.buffer = buffer_remap[t.buffer];
    }
    g->buffers = std::move(buffers);
}

int remove_dead_ops(graph::Graph* g) {
    const GraphIndex index(*g);
    std::vector<bool> needed_tensor(g->tensors.size(), false);
    for (int32_t t : g->outputs) needed_tensor[t] = true;
    std::vector<bool> live(g->ops.size(), false);
    // Walk backwards from the outputs (ops are revisited until nothing changes).
    bool changed = true;
    while (changed) {
        changed = false;
        for (size_t op = g->ops.size(); op-- > 0;) {
            if (live[op]) continue;
            bool feeds = false;
            for (int32_t out : g->ops[op].outputs) feeds = feeds || needed_tensor[out];
            if (!feeds) continue;
            live[op] = changed = true;
            for (int32_t in : g->ops[op].inputs)
                if (in >= 0) needed_tensor[in] = true;
        }
    }
    std::set<int32_t> dead;
    for (size_t op = 0; op < g->ops.size(); ++op)
        if (!live[op]) dead.insert(static_cast<int32_t>(op));
    erase_ops(g, dead);
    return static_cast<int>(dead.size());
}

std::vector<float> constant_floats(const graph::Graph& g, int32_t tensor) {
    const graph::Buffer* buffer = g.constant_buffer(tensor);
    if (buffer == nullptr || g.tensors[tensor].dtype != graph::DType::kFloat32) return {};
    std::vector<float> values(buffer->size / 4);
    if (!values.empty()) std::memcpy(values.data(), buffer->data, values.size() * 4);
    return values;
}

bool scalar_value(const graph::Graph& g, int32_t tensor, float* out) {
    const std::vector<float> v = constant_floats(g, tensor);
    if (v.size() != 1) return false;
    *out = v[0];
    return true;
}

std::vector<float> per_channel_values(const graph::Graph& g, int32_t tensor, const graph::Shape& x, size_t axis) {
    if (tensor < 0 || axis >= x.size() || x[axis] <= 0) return {};
    const std::vector<float> v = constant_floats(g, tensor);
    const graph::Shape& c = g.tensors[tensor].shape;
    if (v.empty() || c.size() > x.size()) return {};
    const int64_t channels = x[axis];
    if (v.size() == 1) return std::vector<float>(static_cast<size_t>(channels), v[0]);
    // Right-align the constant's dims with x's: only `axis` may be other than 1.
    const size_t offset = x.size() - c.size();
    for (size_t d = 0; d < c.size(); ++d) {
        const bool channel_dim = d + offset == axis;
        if (channel_dim ? c[d] != channels : c[d] != 1) return {};
    }
    return static_cast<int64_t>(v.size()) == channels ? v : std::vector<float>{};
}

int32_t add_float_constant(graph::Graph* g, const std::string& name, const graph::Shape& shape,
                           const std::vector<float>& values) {
    return g->add_constant(g->unique_tensor_name(name), graph::DType::kFloat32, shape,
                           graph::Buffer::copy_of(values.data(), values.size() * sizeof(float)));
}

}  // namespace rknn::convert
