// Whole-graph shape inference.
#pragma once

#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::graph {

// Infers every non-constant tensor's dtype and shape from `input_shapes` (one
// per graph input), in execution order, and writes them into the graph.
// Values that decide shapes must come from constants; an op whose output
// shape depends on a run-time value fails with kFailedPrecondition. Custom ops
// keep their declared output shapes.
Status infer_graph_shapes(Graph* graph, const std::vector<Shape>& input_shapes);

// The same for a finished graph at other input shapes (a dynamic model's
// shape sets): only shapes change. Every tensor keeps its stored element
// type, which a quantised graph does not always derive from its inputs (a
// DequantizeLinear into a float16 layer is stored as float16).
Status reinfer_graph_shapes(Graph* graph, const std::vector<Shape>& input_shapes);

// Checks a graph as loaded from a file: inference from the declared input
// shapes must agree with every declared dtype and shape (dims declared -1 are
// wildcards). Ops whose outputs depend on run-time values are not checked,
// nor is anything downstream of them.
Status check_graph_shapes(const Graph& graph);

}  // namespace rknn::graph
