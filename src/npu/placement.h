// Where each op of a graph runs: on the NPU when the code generator lowers it
// exactly for the SoC (or, for a channel Concat, when its producers can write
// in place: concat_plan.h), otherwise on the CPU, with the reason (logged at
// RKNN_LOG_LEVEL >= 3 so users can see why a layer left the NPU).
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "hw/soc_profile.h"

namespace rknn::npu {

enum class Target { kNpu, kCpu };

struct Placement {
    Target target = Target::kCpu;
    std::string reason;  // why the CPU, or what the NPU runs
};

Placement place_op(const graph::Graph& g, const graph::Op& op, const hw::SocProfile& soc, uint32_t core_mask = 0);
// Every op, in graph order; logs each CPU placement's reason at level 3.
std::vector<Placement> place_graph(const graph::Graph& g, const hw::SocProfile& soc, uint32_t core_mask = 0);

}  // namespace rknn::npu
