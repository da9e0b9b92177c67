// Activation ranges for int8 quantisation, observed by running the float
// graph over a calibration set.
//
// Methods (--calib): "normal" takes the observed min/max; "percentile" cuts
// the given share of the values off the tails; "kl_divergence" clips to the
// threshold whose 8-bit histogram keeps the most information (KL divergence,
// as TensorRT's entropy calibration); "mmse" clips to the range with the
// smallest mean squared quantisation error.
//
// The same pass records, for each tensor a Conv or Gemm reads, the mean of
// every input channel: bias correction (quantize.h) uses it to cancel the
// shift that rounding the weights adds to each output channel.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::convert {

enum class CalibMethod { kMinMax, kPercentile, kKlDivergence, kMmse };

StatusOr<CalibMethod> parse_calib_method(const std::string& name);

struct TensorRange {
    bool valid = false;
    float min = 0.0f;
    float max = 0.0f;
};

struct CalibrationOptions {
    CalibMethod method = CalibMethod::kMinMax;
    double percentile = 99.99;  // kPercentile: the share of values kept, in percent
    bool progress = true;       // a progress bar on stderr
};

struct Calibration {
    // One range per graph tensor (invalid for constants and tensors never
    // computed, e.g. after a custom op).
    std::vector<TensorRange> ranges;
    // By tensor name: the mean of each channel (axis 1 of a Conv input, the
    // last axis of a Gemm/MatMul input) over the samples.
    std::map<std::string, std::vector<double>> channel_means;
};

// `samples[k]` holds the graph inputs of sample k.
StatusOr<Calibration> calibrate(const graph::Graph& g, const std::vector<std::vector<cpu::HostTensor>>& samples,
                                const CalibrationOptions& options);

// Clipping of one histogram (exposed for tests). `counts` spans [lo, hi].
TensorRange kl_range(const std::vector<double>& counts, float lo, float hi);
TensorRange mmse_range(const std::vector<double>& counts, float lo, float hi);
TensorRange percentile_range(const std::vector<double>& counts, float lo, float hi, double percentile);

}  // namespace rknn::convert
