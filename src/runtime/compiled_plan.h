// What rknn_init compiles for a model, once: the graph, where each op runs
// (the NPU ops prepared, their weights packed), the device memory plan, and
// per core mask the schedule and the NPU programs. A plan is read-only once
// built. Every context that runs the model shares it: rknn_dup_context's
// copies now; the shape sets and batch copies of a model are plans too.
//
// What one context owns while it runs (device buffers, I/O bindings, host
// values, the streams linked against its buffers, statistics) stays in
// runtime::Context; docs/architecture.md has the split.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "base/status.h"
#include "cpu/graph_executor.h"
#include "driver/kernel_driver_factory.h"
#include "graph/graph.h"
#include "npu/placement.h"
#include "runtime/cube_requant.h"
#include "runtime/io_memory.h"
#include "runtime/memory_plan.h"
#include "runtime/npu_segments.h"
#include "runtime/schedule.h"

namespace rknn::runtime {

// The order one run follows and the NPU programs it submits, for one core
// mask. The programs name buffers by id; each context links them against
// its own buffers.
struct LoweredSchedule {
    uint32_t core_mask = 0;  // 0: one core, the kernel's choice
    Schedule schedule;
    std::vector<SegmentProgram> programs;
    // Per op: CPU (de)quantisations between NPU layers that convert the
    // device cubes directly (their tensors have no host values).
    std::vector<std::optional<CubeRequant>> cube_requants;
    size_t cube_requant_count() const;
};

class CompiledPlan {
public:
    struct Options {
        // The client provides every buffer (RKNN_FLAG_MEM_ALLOC_OUTSIDE):
        // the I/O regions are staged in the internal buffer.
        bool stage_io_internally = false;
        // False: every internal tensor gets bytes of its own (layer dumps).
        bool share_internal = true;
    };

    // `model_memory` (may be null) holds the bytes `graph`'s constants
    // borrow (a zero-copy model buffer); the plan keeps it alive.
    static StatusOr<std::shared_ptr<const CompiledPlan>> compile(graph::Graph graph,
                                                                 std::shared_ptr<IoMemory> model_memory,
                                                                 const driver::OpenedDriver& driver, Options options);
    // Every plan of a model: one for a static model; for a dynamic one
    // (graph.shape_sets), one per shape set in the model's order, each with
    // the shapes inferred from its set's input shapes. The plans use the same
    // device buffer ids for the model's inputs and outputs and one weight
    // layout: a constant that packs to the same bytes in two sets is stored
    // once. A set the graph cannot take is refused, named.
    static StatusOr<std::vector<std::shared_ptr<const CompiledPlan>>> compile_all(
        const graph::Graph& graph, std::shared_ptr<IoMemory> model_memory, const driver::OpenedDriver& driver,
        Options options);

    // A plan for `shapes` (inside the model's input ranges, one per input)
    // that runs in the device buffers of `laid_out`, the model's shape-set
    // plans: the same homes for the inputs and outputs, and its constants
    // found in their weight layout (nothing new is written to the device).
    // `laid_out.front()` is the plan whose graph is inferred again. Refuses,
    // saying why, a shape the graph cannot take or whose packed weights no
    // set has.
    static StatusOr<std::shared_ptr<const CompiledPlan>> compile_at(
        const std::vector<graph::Shape>& shapes, const std::vector<std::shared_ptr<const CompiledPlan>>& laid_out,
        const driver::OpenedDriver& driver, Options options);

    // A plan for `graph` (a model converted with --remove-weights, its
    // constants taken from the master's graph) whose packed constants are
    // all found in the weight layout of `master`'s plans, so that it runs on
    // the master's weights buffer. kModelInvalid, naming the op, otherwise.
    static StatusOr<std::shared_ptr<const CompiledPlan>> compile_sharing(
        graph::Graph graph, std::shared_ptr<IoMemory> model_memory,
        const std::vector<std::shared_ptr<const CompiledPlan>>& master, const driver::OpenedDriver& driver,
        Options options);

    // Host bytes the plan holds beyond what it shares: packed constants
    // (its NPU ops' own copies) and the graph's tensors.
    uint64_t host_bytes() const;

    // The schedule and programs for `core_mask`, `per_op` meaning one
    // segment per NPU op (per-layer timing, layers split over cores).
    // Lowered on first use and kept: contexts asking again share them.
    StatusOr<std::shared_ptr<const LoweredSchedule>> lowered(uint32_t core_mask, bool per_op) const;

    // Ops the NPU runs as tasks (not counting aliases and in-place ops).
    size_t npu_task_op_count() const;

    graph::Graph graph;
    std::vector<int32_t> order;      // a topological order of the ops
    std::vector<int32_t> producers;  // per tensor: the op writing it, or -1
    std::vector<npu::Placement> placements;
    MemoryPlan memory;
    // CPU kernels for the ops placed on the CPU (its calls are const).
    std::unique_ptr<cpu::GraphExecutor> executor;

private:
    CompiledPlan() = default;
    static StatusOr<std::shared_ptr<CompiledPlan>> build(graph::Graph graph, std::shared_ptr<IoMemory> model_memory,
                                                         const driver::OpenedDriver& driver, Options options);
    std::optional<CubeRequant> plan_cube_requant(const CpuStep& step) const;
    // Points every packed constant of `plan` at the same bytes in the weight
    // layout of `laid_out` (and sizes its weight buffer as theirs); the name
    // of the first op whose constants are not there, else nullptr.
    static const char* find_constants_in(const std::vector<std::shared_ptr<const CompiledPlan>>& laid_out,
                                         CompiledPlan* plan);

    const hw::SocProfile* soc_ = nullptr;
    std::shared_ptr<IoMemory> model_memory_;
    mutable std::mutex lowered_mutex_;
    mutable std::map<std::pair<uint32_t, bool>, std::shared_ptr<const LoweredSchedule>> lowered_;
};

}  // namespace rknn::runtime
