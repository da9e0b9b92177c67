// A human-readable summary of a model graph (inputs, outputs, quantisation,
// op counts, weight bytes), printed by rknn_convert and the demo.
#pragma once

#include <string>

#include "graph/graph.h"

namespace rknn::model {

std::string summarize(const graph::Graph& graph);

}  // namespace rknn::model
