// Parameters of data-movement ops decoded from attributes and (constant or
// run-time) inputs, for the opset variants OpenRKNN accepts. Shape inference
// and the CPU kernels both use these, so they always agree.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/shape_inference.h"

namespace rknn::graph {

// Per-dimension start and step, and the output shape (full rank).
struct SliceParams {
    std::vector<int64_t> starts;
    std::vector<int64_t> steps;
    Shape out;
};
StatusOr<SliceParams> slice_params(const Op& op, const std::vector<const ValueInfo*>& inputs);

// Sizes of the pieces along the split axis (one per output).
struct SplitParams {
    int64_t axis = 0;
    std::vector<int64_t> sizes;
};
StatusOr<SplitParams> split_params(const Op& op, const std::vector<const ValueInfo*>& inputs, size_t n_outputs);

// Pads per dim: begins[rank], ends[rank]; negative values crop.
struct PadParams {
    std::vector<int64_t> begins;
    std::vector<int64_t> ends;
    std::string mode;  // constant, reflect, edge
    Shape out;
};
StatusOr<PadParams> pad_params(const Op& op, const std::vector<const ValueInfo*>& inputs);

// Output shape and per-dim scale (output / input, or as given) of Resize/Upsample.
struct ResizeParams {
    Shape out;
    std::vector<double> scales;
};
StatusOr<ResizeParams> resize_params(const Op& op, const std::vector<const ValueInfo*>& inputs);

StatusOr<Shape> reshape_target(const Op& op, const std::vector<const ValueInfo*>& inputs);
StatusOr<std::vector<int64_t>> transpose_perm(const Op& op, size_t rank);
// Axes of Squeeze/Unsqueeze from the axes input (opset 13) or attribute, normalised.
StatusOr<std::vector<int64_t>> squeeze_axes(const Op& op, const std::vector<const ValueInfo*>& inputs,
                                            int64_t rank);

}  // namespace rknn::graph
