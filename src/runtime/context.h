// One rknn_context: a compiled model (runtime::CompiledPlan, shared with the
// context's duplicates) and what this context owns to run it on one device.
//
// rknn_init builds it completely: the graph is loaded (copied or mapped) and
// compiled (every op placed on the NPU or the CPU, device memory planned, the
// NPU programs lowered), then this context's device memory is created, the
// constants written and the programs linked against its buffers. rknn_run
// then only converts, submits and computes; the client's calls map one to
// one onto the public methods. A context is used by one thread at a time (as the
// vendor documents); a mutex still keeps a misbehaving client from racing.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/graph_executor.h"
#include "driver/kernel_driver_factory.h"
#include "graph/graph.h"
#include "npu/placement.h"
#include "rknn_api.h"
#include "rknn_openrknn_ext.h"
#include "runtime/compiled_plan.h"
#include "runtime/cube_requant.h"
#include "runtime/custom_op_plugins.h"
#include "runtime/custom_ops.h"
#include "runtime/device_buffers.h"
#include "runtime/fast_io.h"
#include "runtime/io_memory.h"
#include "runtime/memory_plan.h"
#include "runtime/npu_segments.h"
#include "runtime/schedule.h"

namespace rknn::runtime {

// The outputs of one finished run, copied out of the context's memory so
// that the next run may overwrite it (RKNN_FLAG_ASYNC_MASK hands them out
// while that run goes on).
struct OutputSnapshot {
    std::vector<graph::Tensor> declared;  // per output
    std::vector<cpu::HostTensor> values;  // per output; no dtype where rknn_set_io_mem binds it
    // A multi-batch model's run: `declared` B times, `values` empty, and
    // here each item's outputs (batch_fanout.h).
    std::vector<OutputSnapshot> items;
};

class BatchFanout;

class Context {
public:
    // `model`/`size` as rknn_init takes them (size 0: a file path). With
    // RKNN_FLAG_MODEL_BUFFER_ZERO_COPY the bytes are used in place and
    // `model_memory` (if any) is kept alive with the context.
    // `master` (RKNN_FLAG_SHARE_WEIGHT_MEM): a model converted with
    // --remove-weights runs on the master's weights buffer, its constants
    // the master's; an incompatible master is kModelInvalid.
    static StatusOr<std::shared_ptr<Context>> create(const void* model, uint32_t size, uint32_t flags,
                                                     std::shared_ptr<IoMemory> model_memory = nullptr,
                                                     Context* master = nullptr);
    ~Context();

    Status query(int cmd, void* info, uint32_t size);
    Status inputs_set(uint32_t count, const rknn_input* inputs);
    // `keep`: where the outputs are copied when the run succeeds, before
    // the context is free for the next call.
    Status run(OutputSnapshot* keep = nullptr);
    // rknn_register_custom_ops: callbacks for the model's custom op types
    // (custom_ops.h); `init` runs with the tensors of the current shapes.
    Status register_custom_ops(const rknn_custom_op* ops, uint32_t count);
    // Whether this thread is inside a custom op callback (or a plugin's
    // init) that `context` runs while holding its lock: a call back into
    // that context would wait for itself, so the API refuses it.
    static bool in_callbacks_of(const Context* context);
    // rknn_set_input_shapes: the shape set of a dynamic model that rknn_run
    // runs from now on; `attrs` give every input's dims (NHWC for 4-D).
    Status set_input_shapes(uint32_t count, const rknn_tensor_attr* attrs);
    Status outputs_get(uint32_t count, rknn_output* outputs);
    // rknn_outputs_get from a run's copied outputs; it does not wait for a
    // run in progress.
    Status outputs_get_from(const OutputSnapshot& kept, uint32_t count, rknn_output* outputs);
    Status outputs_release(uint32_t count, rknn_output* outputs);
    // Output `k` of the last run, as rknn_outputs_get converts it, into `dst`.
    Status output_to(uint32_t k, bool want_float, void* dst, size_t dst_bytes);
    // RKNN_NPU_CORE_AUTO, a mask of cores the SoC runs together, or _ALL.
    Status set_core_mask(uint32_t mask);
    // A second context for the same model (rknn_dup_context), so that two
    // threads can run the model at once: its own internal, I/O and regcmd
    // buffers, and shared with this one the graph and its constant bytes, the
    // prepared ops, the driver and the weights buffer on the device (which
    // stays until the last context using it is destroyed).
    StatusOr<std::shared_ptr<Context>> duplicate();
    uint32_t flags() const { return flags_; }  // rknn_init's
    // Whether this context and `other` use one weights buffer on the device.
    bool shares_weights_with(const Context& other) const;
    // Items per run: the model's batch (1 unless converted with --batch).
    uint32_t batch() const;
    // rknn_set_batch_core_num: a multi-batch model runs its items on
    // `core_num` cores (1..the SoC's), each core's context on the kernel's
    // choice of core; a core mask set later decides instead.
    Status set_batch_core_num(int core_num);
    // Whether this thread is inside a custom op callback of this context (or
    // of one of a multi-batch model's contexts).
    bool in_own_callbacks() const;

    // Zero-copy I/O. rknn_create_mem: a buffer on this context's device.
    StatusOr<std::shared_ptr<IoMemory>> create_memory(uint64_t bytes, bool cacheable);
    // rknn_set_io_mem: the `bytes` at `data` (inside `memory`) hold the input
    // or output that `attr` names (by name, then index), laid out as `attr`
    // says; every rknn_run from now on reads it, or writes it.
    // A binding in the native layout, of memory the NPU reaches, is used in
    // place: the streams are relinked onto it and no run copies it.
    // `in_place` false: converted or copied on every run even so (a
    // multi-batch model's items that share cache lines at their edges).
    Status bind_io_memory(std::shared_ptr<IoMemory> memory, uint8_t* data, uint64_t bytes,
                          const rknn_tensor_attr& attr, bool in_place = true);
    // rknn_set_weight_mem (RKNN_FLAG_MEM_ALLOC_OUTSIDE) and rknn_set_internal_mem
    // (also RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE): the `bytes` of `memory` from
    // `offset` hold the weights (written there now) or the internal tensors.
    // The internal memory may be bound to other contexts too, which run in
    // turn: nothing stays in it from one run to the next.
    Status set_weight_memory(std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes);
    Status set_internal_memory(std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes);
    // What rknn_set_io_mem bound for the input or output that `attr` names:
    // which one, the bytes of the client's buffer it covers, and the
    // tensor's (NCHW) shape. kFailedPrecondition when it is not bound.
    struct BoundIo {
        bool input = false;
        uint32_t index = 0;
        uint64_t span = 0;
        graph::Shape shape;
    };
    StatusOr<BoundIo> bound_io(const rknn_tensor_attr& attr);
    // Ends the binding of the input or output `attr` names (none: nothing
    // changes); its bytes are the runtime's again.
    Status unbind_io(const rknn_tensor_attr& attr);
    // A multi-batch model: the contexts its items run on now (else 0).
    size_t batch_contexts_in_use() const;
    // How many inputs and outputs are bound in place (tests, tools).
    size_t in_place_bindings();

    const graph::Graph& graph() const;
    // Ops the NPU runs as tasks (not counting aliases and in-place ops), for tools and tests.
    size_t npu_task_op_count() const;
    // CPU (de)quantisations that convert device cubes directly (CubeRequant).
    size_t cube_requant_count() const;  // not while another thread sets the core mask
    // The plans kept for shapes inside the model's ranges, and the bytes
    // counted against RKNN_DYNAMIC_SHAPE_CACHE_MB (tests, tools).
    struct RangedPlanStats {
        size_t kept = 0;
        uint64_t bytes = 0;
    };
    RangedPlanStats ranged_plan_stats();
    // Of the last finished rknn_run: the NPU time the kernel driver reported,
    // summed over its submits (0 where the driver reports none).
    int64_t last_run_npu_ns();

private:
    // Undoes a register_custom_ops that succeeded (a batch copy after this
    // one failed to register the same ops).
    void unregister_custom_ops(const rknn_custom_op* ops, uint32_t count);
    struct PlanState;  // below: what the context keeps per plan
    Context() = default;
    // A multi-batch model's front over `first` (its batch-1 context) and
    // duplicates of it, one per core the batch may use.
    static StatusOr<std::shared_ptr<Context>> make_batched(std::shared_ptr<Context> first, uint32_t batch);
    // A front running `fanout`, with the flags and driver of `like`.
    static std::shared_ptr<Context> front_of(const Context& like, std::unique_ptr<BatchFanout> fanout);
    // Set on a multi-batch model's front, which has no plan of its own: the
    // public calls go to it (batch_fanout.h).
    std::unique_ptr<BatchFanout> batch_;
    // The front: the cores the batch uses.
    uint32_t batch_mask_ = 0;       // the core mask set, 0: AUTO
    uint32_t batch_core_num_ = 0;   // rknn_set_batch_core_num (0: every core)
    // Uses `mask` (0: AUTO, each context on the kernel's choice, `core_num`
    // of them or every one for 0); kept only when every context took it.
    Status apply_batch_cores(uint32_t mask, uint32_t core_num);
    // This context's memory and links for `plans` (one per shape set; `main`
    // the set of the model's declared shapes). `original`: the context this
    // one duplicates (its weights buffer is shared), or nullptr.
    // `weights_of_original`: the plans' constants are laid out in the
    // original's weights buffer (a model sharing its master's weights).
    Status build(std::vector<std::shared_ptr<const CompiledPlan>> plans, size_t main, const Context* original = nullptr,
                 bool weights_of_original = false);
    // Why `master` cannot lend its weights (RKNN_FLAG_SHARE_WEIGHT_MEM), if it cannot.
    Status check_weights_lendable() const;
    // A model on its master's weights: the master's plan (whose graph owns
    // the constant bytes this one uses) is kept, and MEM_SIZE does not count
    // the weights again.
    std::shared_ptr<const CompiledPlan> master_plan_;
    Status write_all_constants();
    // Every plan's schedule and NPU programs for `core_mask`, linked into the
    // regcmd buffer; the context keeps its previous ones when this fails.
    Status generate_programs(uint32_t core_mask);
    // Whether programs for `core_mask` are one submit per NPU op.
    bool per_op_programs(uint32_t core_mask) const;
    // Links each plan's programs into one new regcmd buffer (one after the
    // other) and puts it in place of the old one; per plan, the submits.
    // Nothing changes when that fails.
    using Submits = std::vector<driver::SubmitRequest>;
    StatusOr<std::vector<Submits>> link_and_install(const std::vector<std::shared_ptr<const LoweredSchedule>>& lowered);
    // NPU SRAM the driver reports (0: none, or no way to ask).
    uint64_t sram_total() const;
    // Bytes of SRAM to ask for the internal buffer (0: none).
    uint64_t sram_request(uint64_t internal_bytes) const;
    bool uses_sram_ = false;  // RKNN_FLAG_ENABLE_SRAM took effect
    Status run_cpu_step(const CpuStep& step);
    Status run_custom_step(const CpuStep& step);
    // The model's custom ops and what is registered for them; per context
    // (a duplicate registers its own). Reset first when the context goes,
    // so that `destroy` callbacks run while everything else is still there.
    std::unique_ptr<CustomOps> custom_ops_;
    // Plugins loaded on request (custom_op_plugins.h); closed after custom_ops_ goes.
    std::unique_ptr<PluginLibraries> plugins_;
    // Values of the plan's inputs and CPU steps, and the steps' kernel calls.
    void prepare_cpu_calls(PlanState& s);
    // A host value for tensor `t` of a plan, in storage every plan of the
    // context shares for that tensor (grown when a plan needs more).
    cpu::HostTensor host_value(int32_t t, const graph::Tensor& declared);
    std::vector<std::shared_ptr<AlignedBytes>> host_storage_;  // per tensor
    // What the driver reported of the segment's submit goes to *run.
    Status run_npu_segment(int32_t segment, SegmentRun* run);
    StatusOr<cpu::HostTensor> output_value(size_t index) const;
    // The value of any tensor after a run: its device cube where the NPU
    // holds it, else the CPU's value.
    StatusOr<cpu::HostTensor> current_value(int32_t tensor) const;
    // inputs_set's work for one input (the mutex held).
    Status set_input(const rknn_input& in);
    // Bytes a pass_through buffer of input `index` must hold.
    uint64_t pass_through_bytes(uint32_t index) const;
    // Zero-copy bindings, applied at the start and the end of every run.
    struct IoBinding {
        std::shared_ptr<IoMemory> memory;
        uint8_t* data = nullptr;
        uint64_t bytes = 0;
        rknn_tensor_attr attr{};
        uint64_t data_bytes = 0;       // what one run reads (inputs, after any compaction) or writes (outputs)
        uint64_t span = 0;             // bytes of the client's buffer the binding covers
        std::vector<uint8_t> staging;  // strided input rows compacted / outputs before their last conversion
        bool in_place = false;         // the NPU reads / writes `data` itself
        bool in_place_allowed = true;  // bind_io_memory's `in_place`
    };
    Status bind_input(IoBinding binding, uint32_t index);
    Status bind_output(IoBinding binding, uint32_t index);
    // Puts the binding's buffer in place of the tensor's I/O buffer where it
    // holds `native` bytes and the NPU can reach it (true); otherwise the I/O
    // buffer is the runtime's again.
    StatusOr<bool> try_bind_in_place(const IoBinding& binding, int32_t tensor, bool native);
    // I/O buffer `buffer` is the runtime's own again (the streams relinked),
    // where a binding used the client's memory in place; unchanged on failure.
    Status restore_io_buffer(int32_t buffer);
    bool tensor_owns_buffer(int32_t tensor) const;
    Status read_bound_inputs();
    Status write_bound_outputs();
    // Client-provided memory (init flags).
    bool weights_outside() const;
    bool internal_outside() const;
    bool io_staged_internally() const;
    bool info_only() const;
    Status refuse_info_only() const;  // kFailedPrecondition for an info-only context
    Status check_memory_ready() const;
    // rknn_set_weight_mem / rknn_set_internal_mem: buffer `id` as client
    // memory, where the init flags left it to the client. False when the
    // model keeps nothing there (nothing attached).
    StatusOr<bool> attach_outside_memory(int32_t id, bool left_to_client, std::shared_ptr<IoMemory> memory,
                                         uint64_t offset, uint64_t bytes);
    // The streams linked again onto the buffers' current addresses.
    Status relink();
    // Buffer `id` as `memory` from `offset`, the streams relinked; nothing
    // changes when that fails.
    Status attach_memory(int32_t id, std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes);
    // Per buffer id: an input the NPU reads in the client's memory. Not
    // invalidated after a segment (the NPU does not write it; invalidating
    // would drop what the client wrote and has not synced yet).
    std::vector<bool> client_input_buffers_;
    // Per buffer id: an output the NPU writes in the client's memory under
    // RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE. Not invalidated after a
    // segment unless a CPU step reads it: the client syncs it (rknn_mem_sync).
    std::vector<bool> client_output_buffers_;
    // Per I/O buffer id: what it is when no binding is used in place.
    std::vector<std::shared_ptr<const DeviceBuffers::Slot>> io_slots_;
    // io_staged_internally(): per input, the native bytes rknn_inputs_set
    // staged, put back at every run (other contexts may share the memory).
    std::vector<std::vector<uint8_t>> staged_inputs_;
    // io_staged_internally(): per output, its native bytes after the last run,
    // what rknn_outputs_get reads (another context may run over the memory).
    std::vector<std::vector<uint8_t>> kept_outputs_;
    void keep_outputs();
    // Where tensor `t`'s device cube is to be read after a run: the kept copy
    // of an output, else its home.
    const uint8_t* cube_after_run(int32_t t) const;
    std::vector<std::optional<IoBinding>> input_bindings_, output_bindings_;
    static bool bound(const std::vector<std::optional<IoBinding>>& bindings) {
        for (const auto& b : bindings)
            if (b) return true;
        return false;
    }
    void dump_layers() const;  // RKNN_LOG_LEVEL >= 5
    std::string memory_table() const;  // RKNN_LOG_LEVEL >= 3
    Status query_tensor_attr(int cmd, rknn_tensor_attr* attr);
    Status check_input_index(uint32_t index) const;  // kInvalidArgument past the inputs
    Status query_dynamic_range(rknn_input_range* range) const;
    Status query_shape_range(rknn_openrknn_shape_range* range) const;
    std::string perf_table() const;

    std::mutex mutex_;
    uint32_t flags_ = 0;
    std::shared_ptr<driver::OpenedDriver> driver_;  // shared with duplicates
    std::unique_ptr<DeviceBuffers> buffers_;  // after driver_: released first
    int32_t regcmd_buffer_ = -1;

    // Cache maintenance by ranges (a buffer's bytes from an offset): what the
    // CPU wrote since the last submit, flushed before the next one, and what
    // the host reads after a segment (tensors CPU steps unpack, the outputs),
    // invalidated after each. Without ranges (rocket syncs whole buffers;
    // level-5 dumps read every tensor) every data buffer is synced instead.
    struct ByteRange {
        int32_t buffer = -1;
        uint64_t offset = 0, bytes = 0;
        bool cpu_step = false;  // in host_reads: a CPU step reads it (else an output)
    };
    std::vector<ByteRange> cpu_written_;

    // What this context keeps for one plan: a static model has one, a
    // dynamic model one per shape set (all made at rknn_init, so that
    // rknn_set_input_shapes only points set_ at another).
    struct PlanState {
        std::shared_ptr<const CompiledPlan> plan;      // shared with duplicates
        std::shared_ptr<const LoweredSchedule> lowered;  // the plan's, for core_mask_
        std::vector<driver::SubmitRequest> submits;    // per segment, linked to buffers_
        std::vector<cpu::HostTensor> values;           // per tensor: the CPU's value
        // Per op: the CPU steps' kernel calls prepared at init (their tensors
        // in values), so that a run allocates nothing for them; empty where
        // the op needs conversions (GraphExecutor::run_op then).
        std::vector<std::optional<cpu::GraphExecutor::PreparedCall>> cpu_calls;
        std::vector<ByteRange> host_reads;
        // Per segment: the host_reads its ops' outputs overlap, the only ones
        // its submit can have made stale.
        std::vector<std::vector<size_t>> segment_host_reads;
        // Of the last run in this plan (PERF_DETAIL, RKNN_LOG_LEVEL=4).
        std::vector<int64_t> step_us;
        std::vector<int64_t> step_npu_ns;  // driver-reported, per NPU step (-1: a CPU step)
        std::vector<std::array<uint32_t, driver::kMaxCores>> step_core_tasks;  // per step (CPU steps: 0)
        // Per op: a custom op's conversions and callbacks, for their own rows
        // in the table (all 0: not run in this plan yet, or the built-in kernel).
        std::vector<CustomOps::Timing> custom_timing;
        // Table-driven conversions (fast_io.h), per input / output; empty
        // where the generic path applies.
        std::vector<std::vector<int8_t>> pixel_codes;
        std::vector<std::optional<PixelRule>> pixel_rules;  // the same tables as arithmetic, where they are
        std::vector<bool> input_read_on_cpu;
        std::vector<std::optional<Dequant>> dequant_rules;
    };
    std::vector<PlanState> sets_;  // made once at rknn_init, never resized
    std::vector<uint64_t> buffer_bytes_;  // per buffer id: the most any plan needs
    PlanState* set_ = nullptr;     // the plan rknn_run runs
    // The plan of the model's declared (largest) shapes: INPUT_ATTR and
    // OUTPUT_ATTR report it, and its buffers are the ones every plan uses.
    const PlanState* main_set_ = nullptr;
    bool dynamic_ = false;       // the model lists shape sets
    bool shape_chosen_ = false;  // a dynamic model: rknn_set_input_shapes was called
    bool ran_since_switch_ = true;  // rknn_outputs_get reads the current set's last run
    Status refuse_before_shapes(const char* call) const;
    // rknn_set_input_shapes' checks of `attrs`: the count, index order,
    // rank and fmt of every input (not yet whether a plan takes the dims).
    Status check_shape_attrs(uint32_t count, const rknn_tensor_attr* attrs) const;
    // Whether `attrs` give the input shapes of `state`'s plan.
    bool runs_shapes(const PlanState& state, const rknn_tensor_attr* attrs) const;
    // The error for dims that no set names and no range holds.
    Status shapes_not_accepted(uint32_t count, const rknn_tensor_attr* attrs) const;
    // Makes `state` the plan rknn_run runs; I/O memory bindings end.
    Status switch_to(PlanState* state);

    // Shapes inside the model's input ranges (rknn_convert --dynamic-range)
    // that no shape set names: each gets a plan on first use, in the same
    // buffers as the sets, with streams of its own. They are kept, most
    // recently used first, while the bytes they hold stay under
    // ranged_limit_ (RKNN_DYNAMIC_SHAPE_CACHE_MB); the plan running is kept
    // regardless.
    struct RangedPlan {
        std::vector<graph::Shape> shapes;  // per input, in the model's order
        PlanState state;
        driver::BufferObject streams;      // its regcmd streams
        uint64_t bytes = 0;                // host and stream bytes it holds
    };
    std::list<RangedPlan> ranged_;
    uint64_t ranged_bytes_ = 0;
    uint64_t ranged_limit_ = 0;
    CompiledPlan::Options plan_options_;  // how the sets' plans were compiled
    static uint64_t ranged_limit_from_env();
    // The kept or a new plan for `shapes`, made the most recently used;
    // `compiled`: a new one was prepared (its CPU kernels ran once, into
    // the host values the plans share), even when this then fails.
    StatusOr<PlanState*> ranged_plan(const std::vector<graph::Shape>& shapes, bool* compiled);
    // Drops the least recently used plans beyond the limit.
    void trim_ranged_plans();
    // A plan's programs linked into a new stream buffer of their own.
    struct DetachedLink {
        driver::BufferObject streams;
        Submits submits;
    };
    StatusOr<DetachedLink> link_detached(const LoweredSchedule& lowered);
    // Every kept ranged plan's programs (`lowered`, in ranged_'s order)
    // linked anew against the buffers' current addresses; installed by
    // install_ranged_links, or discarded.
    StatusOr<std::vector<DetachedLink>> link_ranged_plans(
        const std::vector<std::shared_ptr<const LoweredSchedule>>& lowered);
    void install_ranged_links(std::vector<DetachedLink> links,
                              const std::vector<std::shared_ptr<const LoweredSchedule>>& lowered);
    void discard_links(std::vector<DetachedLink>* links);
    // A plan state's step timings and host reads, once lowered and linked.
    void finish_linking(PlanState& s);

    bool ranged_sync_ = true;
    bool cpu_wrote_ = false;  // without ranges: since the last submit
    // Before the CPU writes `home`: the cache lines it shares with other
    // bytes are made current first (a flush writes whole lines back), and the
    // lines are remembered for the next flush.
    Status begin_cpu_write(const DeviceHome& home);
    void plan_host_reads(PlanState& state);
    // Also at the end of rknn_inputs_set and rknn_run: lines the CPU wrote
    // are not left dirty for another context using the same memory to meet.
    Status sync_before_submit();
    // After segment `segment`'s submit (-1: any segment may have run);
    // `whole_buffers`: every data buffer (for layer dumps).
    Status sync_after_submit(int32_t segment = -1, bool whole_buffers = false);
    uint32_t timeout_ms_ = 20000;
    uint32_t core_mask_ = 0;  // 0: one core, the kernel's choice

    // Run statistics (PERF_RUN, PERF_DETAIL, RKNN_LOG_LEVEL=4).
    uint64_t runs_ = 0;
    int64_t last_run_us_ = 0;
    int64_t last_run_npu_ns_ = 0;  // driver-reported NPU time of the last finished run
    std::string perf_text_;  // the last PERF_DETAIL answer (valid until the next query or destroy)

    // Buffers rknn_outputs_get allocated. Their own lock: outputs taken from
    // a snapshot are handed out and released while a run holds mutex_.
    std::mutex owned_mutex_;
    std::set<void*> owned_outputs_;
    // The checks of preallocated buffers, then each output allocated (where
    // asked) and filled by `fill(k, out, bytes)`.
    template <typename Fill>
    Status fill_outputs(const std::vector<const graph::Tensor*>& declared, uint32_t count, rknn_output* outputs,
                        Fill&& fill);
    Status keep_snapshot(OutputSnapshot* keep) const;

    void prepare_fast_io(PlanState& s);
    bool set_pixels_fast(const rknn_input& in);
    bool get_float_fast(size_t index, rknn_output* out) const;
};

}  // namespace rknn::runtime
