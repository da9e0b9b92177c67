#include "graph/tensor.h"

#include <cstring>

#include "base/aligned_bytes.h"

namespace rknn::graph {

bool checked_num_elements(const Shape& shape, int64_t* out) {
    int64_t total = 1;
    for (int64_t dim : shape) {
        if (dim < 0) return false;
        if (dim != 0 && total > kMaxTensorElements / dim) return false;
        total *= dim;
    }
    *out = total;
    return true;
}

int64_t num_elements(const Shape& shape) {
    int64_t total = 1;
    for (int64_t dim : shape) total *= dim;
    return total;
}

std::string shape_to_string(const Shape& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) text += ",";
        text += std::to_string(shape[i]);
    }
    return text + "]";
}

std::string shapes_to_string(const std::vector<Shape>& shapes) {
    std::string text;
    for (const Shape& s : shapes) text += (text.empty() ? "" : " ") + shape_to_string(s);
    return text;
}

Buffer Buffer::copy_of(const void* bytes, size_t size) {
    auto storage = std::make_shared<AlignedBytes>(size);
    if (size) std::memcpy(storage->data(), bytes, size);
    Buffer buffer;
    buffer.data = storage->data();
    buffer.size = size;
    buffer.keep_alive = std::move(storage);
    return buffer;
}

}  // namespace rknn::graph
