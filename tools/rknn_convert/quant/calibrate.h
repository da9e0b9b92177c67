// Activation ranges for int8 quantisation, observed by running the float
// graph over a calibration set.
//
// Methods (--calib): "normal" takes the observed min/max; "kl_divergence"
// clips to the threshold whose 8-bit histogram keeps the most information
// (KL divergence, as TensorRT's entropy calibration); "mmse" clips to the
// range with the smallest mean squared quantisation error.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::convert {

enum class CalibMethod { kMinMax, kKlDivergence, kMmse };

StatusOr<CalibMethod> parse_calib_method(const std::string& name);

struct TensorRange {
    bool valid = false;
    float min = 0.0f;
    float max = 0.0f;
};

// One range per graph tensor (invalid for constants and tensors never computed,
// e.g. after a custom op). `samples[k]` holds the graph inputs of sample k.
StatusOr<std::vector<TensorRange>> calibrate(const graph::Graph& g,
                                             const std::vector<std::vector<cpu::HostTensor>>& samples,
                                             CalibMethod method);

// Clipping of one histogram (exposed for tests). `counts` spans [lo, hi].
TensorRange kl_range(const std::vector<double>& counts, float lo, float hi);
TensorRange mmse_range(const std::vector<double>& counts, float lo, float hi);

}  // namespace rknn::convert
