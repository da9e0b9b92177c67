// Window geometry of convolutions and pools (ONNX auto_pad / pads / strides /
// dilations / ceil_mode rules), shared by shape inference and the kernels so
// that both agree on every output size and padding.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/attributes.h"
#include "graph/tensor.h"

namespace rknn::graph {

struct SpatialParams {
    std::vector<int64_t> kernel;
    std::vector<int64_t> strides;
    std::vector<int64_t> dilations;
    std::vector<int64_t> pads_begin;
    std::vector<int64_t> pads_end;
    std::vector<int64_t> out;  // output spatial sizes
};

// Conv and pooling: `in` are the input's spatial dims, `kernel` the window.
StatusOr<SpatialParams> forward_spatial(const Attributes& attrs, const Shape& in, const std::vector<int64_t>& kernel,
                                        bool is_pool);

// ConvTranspose: output sizes from output_shape or from strides/pads/output_padding.
StatusOr<SpatialParams> transpose_spatial(const Attributes& attrs, const Shape& in,
                                          const std::vector<int64_t>& kernel);

}  // namespace rknn::graph
