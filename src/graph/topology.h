// Structural queries over a Graph: producers, consumers, execution order,
// tensor lifetimes, and the structural validation the model loader runs on
// untrusted files.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::graph {

// The op that writes each tensor, -1 for graph inputs, constants and unused tensors.
std::vector<int32_t> producers(const Graph& graph);
// The ops that read each tensor (in op index order, no duplicates).
std::vector<std::vector<int32_t>> consumers(const Graph& graph);

// Op indices in an order where every op runs after the producers of its
// inputs (stable: ties keep op index order). Fails on a cycle.
StatusOr<std::vector<int32_t>> topological_order(const Graph& graph);

// When each tensor is needed, as positions in `order`: written at `first`
// (-1 for inputs and constants, which exist before the first op), last read
// at `last` (order.size() for graph outputs, which must survive the run).
struct TensorLifetime {
    int32_t first = -1;
    int32_t last = -1;
};
std::vector<TensorLifetime> tensor_lifetimes(const Graph& graph, const std::vector<int32_t>& order);

// Every index in range, every tensor written at most once, no op writing a
// graph input or constant, constants backed by a buffer of the right size,
// inputs/outputs distinct, and an acyclic graph.
Status validate_structure(const Graph& graph);

}  // namespace rknn::graph
