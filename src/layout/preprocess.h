// Input pre-processing: from what the user feeds (e.g. NHWC uint8 pixels) to
// the graph's input tensor (NCHW float), applying the model's per-channel
// mean/std: x' = (x - mean[c]) / std[c]. The converter uses it on calibration
// data; the runtime uses it in rknn_inputs_set.
#pragma once

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::layout {

// `user` is laid out as pre.user_layout (NHWC or NCHW) and has any numeric
// dtype; the result is float32 in the graph input's layout (NCHW for 4-D).
// reverse_channels flips the channel order first (RGB <-> BGR).
StatusOr<cpu::HostTensor> apply_preprocess(const cpu::HostTensor& user, const graph::InputPreprocess& pre,
                                           const graph::Shape& graph_shape);

}  // namespace rknn::layout
