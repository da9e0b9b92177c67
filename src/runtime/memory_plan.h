// Where every tensor the NPU touches lives in device memory, planned once at
// rknn_init (nothing is allocated on the rknn_run path).
//
// Tensors are grouped into regions: an alias (Flatten of a one-pixel cube)
// is its input's bytes, and the inputs of a channel Concat in place are
// slices of the Concat's output. A region that holds a graph input or output
// gets a device buffer of its own (so that zero-copy I/O can later rebind it
// by relinking); all other regions share the internal buffer, where regions
// whose lifetimes do not overlap share bytes. Constants of the NPU ops go to
// the weight buffer, and one scratch area (the largest any op asks for) ends
// the internal buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "npu/placement.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {

// Relocation buffer ids (npu::BufferRef::buffer) of the device buffers.
constexpr int32_t kWeightBuffer = 0;
constexpr int32_t kInternalBuffer = 1;
constexpr int32_t kFirstIoBuffer = 2;  // then one per I/O region

// Every tensor and constant starts on this boundary in its buffer, as the
// vendor places tensors.
constexpr uint64_t kPlanAlignment = 128;
inline uint64_t plan_aligned(uint64_t bytes) { return (bytes + kPlanAlignment - 1) & ~(kPlanAlignment - 1); }

struct DeviceHome {
    int32_t buffer = -1;  // -1: the tensor has no device form
    uint64_t offset = 0;
    uint64_t bytes = 0;   // of the tensor's own cube (or packed image)
    // > 0: a channel-packed image with rows this many pixels apart instead of
    // a cube (native_tensor.h): graph inputs of 1, 3 or 4 channels that only
    // convolutions able to read them that way consume.
    uint32_t packed_row_pixels = 0;
    bool valid() const { return buffer >= 0; }
};

struct MemoryPlan {
    NativeForm form;                     // how the SoC lays out the cubes
    std::vector<DeviceHome> homes;       // per tensor
    std::vector<uint64_t> buffer_bytes;  // per buffer id
    std::vector<std::vector<uint64_t>> constant_offsets;  // per op: its constants in the weight buffer
    uint64_t scratch_offset = 0;         // in the internal buffer
    uint64_t scratch_bytes = 0;
    uint64_t internal_tensor_bytes = 0;  // sum of the internal regions before sharing
    // Per buffer id, where place_io_in_internal put the I/O regions in the
    // internal buffer (empty when they have buffers of their own).
    std::vector<uint64_t> io_staging_offsets;
};

// Binds in-place ops to regions. An alias or Concat whose tensors already
// belong to another region (a tensor read by two in-place Concats, say) is
// moved to the CPU in `placements`, with the reason.
// `order` is a topological order of the ops.
// `share_internal` false: every internal region gets bytes of its own (for
// dumps that read every tensor after the run).
StatusOr<MemoryPlan> plan_memory(const graph::Graph& g, const std::vector<int32_t>& order,
                                 std::vector<npu::Placement>* placements, const NativeForm& form,
                                 bool share_internal = true);

// For a context whose client provides all memory (RKNN_FLAG_MEM_ALLOC_OUTSIDE):
// the I/O regions get bytes of their own after everything else in the
// internal buffer, which grows by as much. They stage what rknn_inputs_set
// writes and a binding that cannot be used in place.
void place_io_in_internal(MemoryPlan* plan);
// The same for plans that run in one context's buffers (a dynamic model's):
// each I/O region at `offsets[id]` of the internal buffer, which is
// `internal_bytes` long. False (nothing changed) when the plan's own
// internal bytes reach past the first region or a region past the next.
bool place_io_in_internal_at(MemoryPlan* plan, const std::vector<uint64_t>& offsets, uint64_t internal_bytes);
// Offsets for every plan of `plans` (by place_io_in_internal_at): after the
// largest internal area, each region as large as the largest plan's.
std::vector<uint64_t> common_io_offsets(const std::vector<const MemoryPlan*>& plans, uint64_t* internal_bytes);

}  // namespace rknn::runtime
