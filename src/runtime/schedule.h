// The order rknn_run follows: runs of consecutive NPU ops become one segment
// (one program, one submit), every other op runs on the CPU kernels. Aliases
// and in-place Concats cost nothing and never split a segment. Between the
// two worlds the schedule names the conversions: a CPU op first unpacks the
// device cubes it reads (once per run), then packs what it wrote into the
// device form when an NPU op or a graph output reads it there.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "npu/placement.h"
#include "runtime/memory_plan.h"

namespace rknn::runtime {

struct NpuSegment {
    std::vector<int32_t> ops;  // ops with tasks, in run order
};

struct CpuStep {
    int32_t op = -1;
    std::vector<int32_t> unpack_before;  // tensors to read back from their device cube first
    std::vector<int32_t> pack_after;     // outputs to write into their device cube after
};

struct Step {
    bool npu = false;
    int32_t index = 0;  // into Schedule::segments or Schedule::cpu_steps
};

struct Schedule {
    std::vector<NpuSegment> segments;
    std::vector<CpuStep> cpu_steps;
    std::vector<Step> steps;
    // Per graph output: true when its value is read back from the device.
    std::vector<bool> output_on_device;
    // Per graph input: true when the NPU reads it (rknn_inputs_set packs it).
    std::vector<bool> input_on_device;
};

// `op_per_segment`: one segment per NPU op (per-layer timing).
Schedule build_schedule(const graph::Graph& g, const std::vector<int32_t>& order,
                        const std::vector<npu::Placement>& placements, const MemoryPlan& memory, bool op_per_segment);

}  // namespace rknn::runtime
