// How much arithmetic an op does, from its shapes: the multiply-accumulates
// of the ops that dominate a network (convolutions, GEMM, MatMul). The
// per-layer table sums them per target, the "share of MACs on the NPU" a
// placement is judged by.
#pragma once

#include <cstdint>

#include "graph/graph.h"

namespace rknn::graph {

// 0 for ops without products to sum, and for shapes that are unknown or
// malformed (a dynamic dim, a missing weight).
uint64_t multiply_accumulates(const Graph& graph, const Op& op);

}  // namespace rknn::graph
