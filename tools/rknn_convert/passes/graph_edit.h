// Small graph surgery helpers for the converter's passes.
#pragma once

#include <set>
#include <vector>

#include "graph/graph.h"

namespace rknn::convert {

// Index views rebuilt on demand (passes change the graph as they go).
struct GraphIndex {
    explicit GraphIndex(const graph::Graph& g);
    std::vector<int32_t> producer;              // op writing each tensor, -1 if none
    std::vector<std::vector<int32_t>> readers;  // ops reading each tensor
    std::vector<bool> is_output;                // graph outputs

    // True if `tensor` is read by exactly one op and is not a graph output.
    bool single_use(int32_t tensor) const {
        return !is_output[tensor] && readers[tensor].size() == 1;
    }
};

// Every op input and graph output reading `from` reads `to` instead.
void replace_uses(graph::Graph* g, int32_t from, int32_t to);

// Removes the listed ops, then every tensor and buffer nothing refers to
// (graph inputs always stay), and renumbers what remains.
void erase_ops(graph::Graph* g, const std::set<int32_t>& ops);

// Removes ops whose outputs never reach a graph output.
int remove_dead_ops(graph::Graph* g);

// The float32 values of a constant tensor, or empty if it is not a float32 constant.
std::vector<float> constant_floats(const graph::Graph& g, int32_t tensor);
// A float32 constant holding one value: that value.
bool scalar_value(const graph::Graph& g, int32_t tensor, float* out);

// When the float32 constant `tensor` broadcast against a tensor of shape `x`
// varies at most along dimension `axis` (a scalar, or [C,1,1] / [1,C,1,1]
// against NCHW for axis 1), its value for each of the x[axis] slices;
// otherwise empty. The constant's rank must not exceed x's, so the broadcast
// keeps x's shape.
std::vector<float> per_channel_values(const graph::Graph& g, int32_t tensor, const graph::Shape& x, size_t axis);

// The other input of a two-input op, given one of them.
inline int32_t other_input(const graph::Op& op, int32_t known) {
    return op.inputs[0] == known ? op.inputs[1] : op.inputs[0];
}

// Adds a float32 constant and returns its tensor index.
int32_t add_float_constant(graph::Graph* g, const std::string& name, const graph::Shape& shape,
                           const std::vector<float>& values);

}  // namespace rknn::convert
