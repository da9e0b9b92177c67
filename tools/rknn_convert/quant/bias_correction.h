// Empirical bias correction of an int8 graph.
//
// quantize_int8 already cancels the mean shift that rounding the weights adds
// to each output channel, assuming the layer reads what the float model
// reads. In the int8 model a layer's input carries the rounding of every
// layer before it, and that error has a mean of its own (activation tables,
// clipped ranges, per-tensor scales that flatten small channels). This pass
// runs the int8 model over the calibration samples one layer at a time, in
// execution order, and moves each int8 Conv/Gemm bias by
// -W_int8 . (E[x_int8] - E[x_float]), so that the layer's output mean is the
// float model's given what it really reads. Going layer by layer matters: a
// layer is measured after the layers before it were corrected, so no shift is
// cancelled twice.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"
#include "util/progress.h"

namespace rknn::convert {

struct BiasCorrectionResult {
    int layers_corrected = 0;
    double largest_shift = 0.0;  // the largest change of a bias, in units of its output's scale
    // Ops the CPU could not run ("name: reason"); what depends on them keeps
    // its weight-rounding correction.
    std::vector<std::string> failed_ops;
};

// `float_means`: the float model's input channel means by tensor name
// (Calibration::channel_means) over the same `samples`, which hold the graph
// inputs as the float model takes them. `progress` counts ops.
StatusOr<BiasCorrectionResult> correct_biases_empirically(graph::Graph* quantized,
                                                          const std::map<std::string, std::vector<double>>& float_means,
                                                          const std::vector<std::vector<cpu::HostTensor>>& samples,
                                                          Progress* progress);

}  // namespace rknn::convert
