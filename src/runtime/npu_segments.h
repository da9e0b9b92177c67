// The NPU side of a schedule: each segment's ops lowered into one program at
// rknn_init (buffers named by id, so the streams are generated once and
// shared by every context of the model), the programs laid out in a regcmd
// buffer and linked against one context's device buffers, and one submit
// per segment at rknn_run.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "driver/kernel_driver.h"
#include "graph/graph.h"
#include "hw/soc_profile.h"
#include "npu/placement.h"
#include "npu/program.h"
#include "runtime/device_buffers.h"
#include "runtime/memory_plan.h"
#include "runtime/schedule.h"

namespace rknn::runtime {

struct SegmentProgram {
    npu::Program program;
    uint64_t regcmd_offset = 0;  // in the regcmd buffer
};

// Lowers every segment. `core_mask` 0: one core, chosen by the kernel.
StatusOr<std::vector<SegmentProgram>> lower_segments(const graph::Graph& g, const Schedule& schedule,
                                                     const std::vector<npu::Placement>& placements,
                                                     const MemoryPlan& memory, const hw::SocProfile& soc,
                                                     uint32_t core_mask);
// Bytes the regcmd buffer needs for them all.
uint64_t regcmd_bytes(const std::vector<SegmentProgram>& segments);

// Writes the constants of every NPU op into the weight buffer.
Status write_constants(const std::vector<npu::Placement>& placements, const MemoryPlan& memory,
                       const DeviceBuffers& buffers);
// Links every program against `bases` (device address per buffer id) for
// streams placed at `stream_base`, writes the words to `stream_host` and
// returns each segment's submit (made once: nothing to build per run).
StatusOr<std::vector<driver::SubmitRequest>> link_segments(const std::vector<SegmentProgram>& segments,
                                                          const std::vector<uint64_t>& bases, uint64_t stream_base,
                                                          uint8_t* stream_host, uint32_t timeout_ms);

// The submit of `program` placed at device address `stream`: one task per
// program task, the per-core ranges for multi-core masks, ping-pong mode.
driver::SubmitRequest make_submit(const npu::Program& program, uint64_t stream, uint32_t timeout_ms);

// What the driver reports of one segment's run.
struct SegmentRun {
    int64_t npu_ns = 0;  // 0 where the driver does not report NPU time
    // Tasks each core ran (the WorkLoad column); all 0 when the driver does
    // not say which core ran a single-core job.
    std::array<uint32_t, driver::kMaxCores> core_tasks{};
};

// Runs one linked segment (`submit` from link_segments); blocks until the
// NPU finished it.
StatusOr<SegmentRun> submit_segment(driver::KernelDriver* driver, const SegmentProgram& segment,
                                    const driver::SubmitRequest& submit);

}  // namespace rknn::runtime
