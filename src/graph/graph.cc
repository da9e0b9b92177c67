#include "graph/graph.h"

namespace rknn::graph {

bool ShapeRange::contains(const Shape& shape) const {
    if (shape.size() != min.size() || shape.size() != max.size() || shape.size() != step.size()) return false;
    for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] < min[d] || shape[d] > max[d] || step[d] <= 0 || (shape[d] - min[d]) % step[d] != 0) return false;
    return true;
}

std::string shape_range_to_string(const ShapeRange& range) {
    std::string text = "[";
    for (size_t d = 0; d < range.min.size() && d < range.max.size() && d < range.step.size(); ++d) {
        text += (d ? "," : "") + std::to_string(range.min[d]);
        if (range.max[d] != range.min[d]) {
            text += ".." + std::to_string(range.max[d]);
            if (range.step[d] != 1) text += ":" + std::to_string(range.step[d]);
        }
    }
    return text + "]";
}

int32_t Graph::add_tensor(Tensor tensor) {
    tensors.push_back(std::move(tensor));
    return static_cast<int32_t>(tensors.size() - 1);
}

int32_t Graph::add_constant(const std::string& name, DType dtype, const Shape& shape, Buffer buffer) {
    buffers.push_back(std::move(buffer));
    Tensor tensor;
    tensor.name = name;
    tensor.dtype = dtype;
    tensor.shape = shape;
    tensor.buffer = static_cast<int32_t>(buffers.size() - 1);
    return add_tensor(std::move(tensor));
}

int32_t Graph::add_op(Op op) {
    ops.push_back(std::move(op));
    return static_cast<int32_t>(ops.size() - 1);
}

bool Graph::is_constant(int32_t tensor) const {
    return tensor >= 0 && static_cast<size_t>(tensor) < tensors.size() && tensors[tensor].buffer >= 0;
}

const Buffer* Graph::constant_buffer(int32_t tensor) const {
    if (!is_constant(tensor)) return nullptr;
    const int32_t index = tensors[tensor].buffer;
    return static_cast<size_t>(index) < buffers.size() ? &buffers[index] : nullptr;
}

int32_t Graph::find_tensor(const std::string& name) const {
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].name == name) return static_cast<int32_t>(i);
    }
    return -1;
}

std::string Graph::unique_tensor_name(const std::string& base) const {
    if (find_tensor(base) < 0) return base;
    for (int suffix = 1;; ++suffix) {
        std::string candidate = base + "_" + std::to_string(suffix);
        if (find_tensor(candidate) < 0) return candidate;
    }
}

}  // namespace rknn::graph
