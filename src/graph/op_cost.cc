#include "graph/op_cost.h"

#include <limits>

namespace rknn::graph {

namespace {

// Saturates: a malformed model's shapes must not wrap into a small count.
uint64_t times(uint64_t a, uint64_t b) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) return std::numeric_limits<uint64_t>::max();
    return a * b;
}

const Shape* shape_of(const Graph& graph, const std::vector<int32_t>& tensors, size_t i) {
    if (i >= tensors.size() || tensors[i] < 0 || static_cast<size_t>(tensors[i]) >= graph.tensors.size()) return nullptr;
    return &graph.tensors[static_cast<size_t>(tensors[i])].shape;
}

// The product of `shape`'s dims, 0 when one is unknown or the product is
// beyond any real tensor.
uint64_t elements(const Shape* shape) {
    int64_t n = 0;
    if (shape == nullptr || !checked_num_elements(*shape, &n)) return 0;
    return static_cast<uint64_t>(n);
}

// dims [first, end) of a weight shape multiplied, 0 when one is not positive.
uint64_t product_from(const Shape* shape, size_t first) {
    if (shape == nullptr || shape->size() <= first) return 0;
    uint64_t n = 1;
    for (size_t d = first; d < shape->size(); ++d) {
        if ((*shape)[d] <= 0) return 0;
        n = times(n, static_cast<uint64_t>((*shape)[d]));
    }
    return n;
}

}  // namespace

uint64_t multiply_accumulates(const Graph& graph, const Op& op) {
    switch (op.type) {
    case OpType::kConv:
        // Each output element sums over the weight's (C/group, kh, kw).
        return times(elements(shape_of(graph, op.outputs, 0)), product_from(shape_of(graph, op.inputs, 1), 1));
    case OpType::kConvTranspose:
        // Each input element scatters over the weight's (M/group, kh, kw).
        return times(elements(shape_of(graph, op.inputs, 0)), product_from(shape_of(graph, op.inputs, 1), 1));
    case OpType::kGemm: {
        const Shape* a = shape_of(graph, op.inputs, 0);
        if (a == nullptr || a->size() != 2) return 0;
        const int64_t k = op.attrs.get_int("transA", 0) != 0 ? (*a)[0] : (*a)[1];
        return k > 0 ? times(elements(shape_of(graph, op.outputs, 0)), static_cast<uint64_t>(k)) : 0;
    }
    case OpType::kMatMul: {
        const Shape* a = shape_of(graph, op.inputs, 0);
        if (a == nullptr || a->empty() || a->back() <= 0) return 0;
        return times(elements(shape_of(graph, op.outputs, 0)), static_cast<uint64_t>(a->back()));
    }
    default: return 0;
    }
}

}  // namespace rknn::graph
