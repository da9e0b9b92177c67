// Where each output element of a Resize / Upsample reads: per dim and output
// position, a short list of (input index, weight) taps, from the op's mode,
// coordinate transformation and rounding attributes. Shared by the float
// reference kernel and the int8 nearest-neighbour kernel, so that both pick
// the same input elements.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/kernel_registry.h"

namespace rknn::cpu::kernels {

struct ResizeTap {
    int64_t index;
    double weight;
};

struct ResizeTaps {
    std::string mode;        // nearest, linear or cubic
    double extrapolation = 0.0;
    // [dim][output position]: the taps, or none when the position falls
    // outside the crop (tf_crop_and_resize), where the output is `extrapolation`.
    std::vector<std::vector<std::vector<ResizeTap>>> taps;
};

// The taps of args' Resize / Upsample (input 0 and output 0 give the shapes).
StatusOr<ResizeTaps> resize_taps(const KernelArgs& args);

}  // namespace rknn::cpu::kernels
