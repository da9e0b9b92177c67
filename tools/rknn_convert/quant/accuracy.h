// Per-layer accuracy analysis, as the vendor toolkit's accuracy_analysis:
// run the float graph and the converted graph on the same input and compare
// every tensor both have (by name) with cosine similarity and Euclidean distance.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::convert {

class Progress;

struct LayerAccuracy {
    std::string tensor;
    std::string op_type;
    double cosine = 0.0;
    double euclidean = 0.0;
};

// `float_inputs` feed the float graph; the converted graph gets them
// converted to its input dtypes. Layers are listed in execution order.
// `progress` (may be null) counts the converted graph's ops.
StatusOr<std::vector<LayerAccuracy>> compare_layers(const graph::Graph& float_graph, const graph::Graph& converted,
                                                    const std::vector<cpu::HostTensor>& float_inputs,
                                                    Progress* progress = nullptr);

std::string format_accuracy_table(const std::vector<LayerAccuracy>& layers);

double cosine_similarity(const std::vector<float>& a, const std::vector<float>& b);
double euclidean_distance(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace rknn::convert
