// Where each op of a graph runs: on the NPU when the code generator lowers it
// exactly for the SoC (or, for a channel Concat, when its producers can write
// in place: concat_plan.h), otherwise on the CPU, with the reason (logged at
// RKNN_LOG_LEVEL >= 3 so users can see why a layer left the NPU).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hw/soc_profile.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

enum class Target { kNpu, kCpu };

// How an NPU-placed op runs: as tasks, or as no task at all because its
// output is the same memory as its input (an alias) or because its producers
// write straight into its buffer (a channel Concat in place).
enum class NpuForm { kTasks, kAlias, kConcatInPlace, kSplitInPlace };

struct Placement {
    Target target = Target::kCpu;
    NpuForm form = NpuForm::kTasks;
    std::string reason;  // why the CPU, or what the NPU runs
    // kTasks: the op as prepared to decide, kept so the runtime need not
    // prepare (pack weights) twice.
    std::shared_ptr<const PreparedOp> prepared;
};

Placement place_op(const graph::Graph& g, const graph::Op& op, const hw::SocProfile& soc, uint32_t core_mask = 0);
// Every op, in graph order; logs each CPU placement's reason at level 3.
// Ends with keep_lone_aliases_on_cpu.
std::vector<Placement> place_graph(const graph::Graph& g, const hw::SocProfile& soc, uint32_t core_mask = 0);

// An alias saves a copy between NPU ops. One with no NPU op on either side
// (only CPU ops, graph inputs and outputs, or other such aliases around it)
// would only add a pack and an unpack per run: it moves to the CPU. Run it
// again after any pass that moves ops to the CPU.
void keep_lone_aliases_on_cpu(const graph::Graph& g, std::vector<Placement>* placements);

}  // namespace rknn::npu
