// Automatic mixed precision. After quantising, each int8 layer is run alone
// on the float model's own inputs (quantised as the int8 model would see
// them) and compared with the float layer. Then, either:
//  - --hybrid auto: layers whose single-layer cosine falls below a threshold
//    are kept in float16, worst first and at most a share of the layers;
//  - --hybrid output: the whole model is measured at its outputs. Starting
//    with every layer in float16, layers go back to int8 in blocks, the most
//    accurate single layers first, as long as every output of every probe
//    sample keeps its cosine against the float model (a block that does not
//    is halved down to the layers that must stay). A layer's error
//    can grow or shrink on the way to the outputs (a softmax sharpens it), so
//    single-layer scores alone pick the wrong layers on some models.
// Either way a kept layer's producers stay float16 too, so its input is not
// rounded to int8 on the way in.
#pragma once

#include <functional>
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

// The float model's outputs on a few samples, for measuring a converted
// model by what it returns rather than layer by layer.
class OutputProbe {
public:
    // `samples` are float inputs, as for single_layer_errors.
    static StatusOr<OutputProbe> create(const graph::Graph& float_graph,
                                        std::vector<std::vector<cpu::HostTensor>> samples);

    // The lowest cosine, over samples and outputs, between what `converted`
    // returns on the CPU reference and what the float model returns. It
    // stops at the first sample under `stop_below`, and tries the sample
    // that stopped it first next time (a failing set usually fails there).
    StatusOr<double> worst_cosine(const graph::Graph& converted, double stop_below = 0.0);

    size_t samples() const { return samples_.size(); }

private:
    std::vector<std::vector<cpu::HostTensor>> samples_;
    std::vector<std::vector<cpu::HostTensor>> expected_;  // float32, per sample and output
    std::vector<size_t> order_;                           // the samples, likeliest to fail first
};

// The worst output cosine of the model with `kept` (and their producers) in
// float16 and everything else int8; it may stop measuring once under
// `stop_below` (OutputProbe::worst_cosine).
using KeptSetScore = std::function<StatusOr<double>(const std::vector<LayerError>& kept, double stop_below)>;

struct OutputSearch {
    std::vector<LayerError> kept;   // worst single layer first
    double worst_all_fp16 = 1.0;    // the outputs' worst cosine with every layer kept
    double worst = 1.0;             // ... with `kept`
    size_t evaluations = 0;         // models measured
};

// --hybrid output: the layers of `errors` to keep in float16 so that the
// outputs' worst cosine stays >= `floor`. When even every layer in float16
// falls below it, every layer is kept. `progress` counts the layers decided.
StatusOr<OutputSearch> fewest_fp16_layers_for_outputs(std::vector<LayerError> errors, double floor,
                                                      const KeptSetScore& score, Progress* progress);

}  // namespace rknn::convert
