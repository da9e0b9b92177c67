// Calibration and analysis inputs: image files (read with stb_image and
// resized to the input's size) or .npy files holding exactly what the user
// will feed (raw NHWC pixels for inputs with mean/std pre-processing).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::convert {

// Samples of a dataset: a folder (every image or .npy file, sorted; models with
// one input) or a list file (one sample per line, one path per input separated
// by spaces; relative paths are relative to the list file).
StatusOr<std::vector<std::vector<std::string>>> list_dataset(const std::string& path, size_t n_inputs);

// One input of one sample as the float graph input tensor (pre-processing applied).
StatusOr<cpu::HostTensor> load_input(const std::string& file, const graph::Graph& g, size_t input_index);

// All inputs of one sample.
StatusOr<std::vector<cpu::HostTensor>> load_sample(const std::vector<std::string>& files, const graph::Graph& g);

}  // namespace rknn::convert
