// Automatic mixed precision (--hybrid auto): after quantising, each int8
// layer is run alone on the float model's own inputs (quantised as the int8
// model would see them) and compared with the float layer. Layers whose
// single-layer cosine falls below a threshold are kept in float16, worst
// first and at most a share of the layers, together with the layers that
// feed them (so their input is not rounded to int8 on the way in).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::convert {

class Progress;

struct LayerError {
    std::string op;       // op name
    std::string op_type;
    double cosine = 1.0;  // single-layer cosine over the samples
};

// Every op of `quantized` with an int8 output that `float_graph` also computes
// (by output tensor name), in execution order. `samples` are float inputs.
StatusOr<std::vector<LayerError>> single_layer_errors(const graph::Graph& float_graph, const graph::Graph& quantized,
                                                      const std::vector<std::vector<cpu::HostTensor>>& samples,
                                                      Progress* progress);

// The ops to keep in float16: those below `threshold`, worst first, at most
// `max_share` of `errors` (rounded up: one at least, unless max_share is 0),
// plus the producers of their non-constant inputs.
std::set<std::string> choose_fp16_ops(const graph::Graph& quantized, const std::vector<LayerError>& errors,
                                      double threshold, double max_share, std::vector<LayerError>* kept);

}  // namespace rknn::convert
