// Channel concatenation (and split) without a copy: in NC1HWC2, a cube's channels
// [c0, c0 + C) with c0 a multiple of C2 are whole surfaces at byte offset
// (c0 / C2) x H x W x 16. So when every input but the last has a multiple of
// C2 channels and all share the output's dtype and quantisation, each producer can
// write its output straight into the concatenation's buffer at its offset
// (the DPU zeroes only the padding lanes of its own last surface, which only
// the last input has). The runtime binds the producers' outputs accordingly.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "hw/soc_profile.h"

namespace rknn::npu {

struct ConcatPlan {
    std::vector<uint64_t> input_offsets;  // byte offset of each input's cube in the output cube
    uint64_t output_bytes = 0;            // the output cube's size
};

// kUnimplemented, with the reason, when the concatenation needs a copy.
// int8 cubes have C2 = 16, fp16 cubes C2 = 8 (16-byte atoms either way).
// RK356x (int8 only): 8-byte atoms in padded surfaces, and parts start on
// 32 channels, since a depthwise group writes 32 and the CNA reads channels
// in sixteens; the output has room for align(C, 32) channels.
StatusOr<ConcatPlan> plan_concat_in_place(const graph::Graph& g, const graph::Op& op,
                                          hw::NpuArch arch = hw::NpuArch::kRk3588);

// The reverse, a channel Split without a copy: each output is the input's
// surfaces from its first channel on, read in place by its consumers. Every
// output must start on an atom, and every output but the last hold whole
// atoms, so that no consumer sees another output's channels in its padding
// lanes (the last one's are the input's own).
struct SplitPlan {
    std::vector<uint64_t> output_offsets;  // byte offset of each output's cube in the input cube
};
StatusOr<SplitPlan> plan_split_in_place(const graph::Graph& g, const graph::Op& op,
                                        hw::NpuArch arch = hw::NpuArch::kRk3588);

}  // namespace rknn::npu
