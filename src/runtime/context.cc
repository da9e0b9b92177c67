#include "runtime/context.h"
#include "runtime/batch_fanout.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "runtime/cube_float.h"
#include "model/model_file.h"
#include "runtime/layer_dump.h"
#include "runtime/native_tensor.h"
#include "runtime/npu_timeout.h"

namespace rknn::runtime {

namespace {

// The contexts whose custom op callbacks this thread is running (innermost last).
thread_local std::vector<const Context*> t_callback_owners;

// Marks `context` as running callbacks on this thread for the scope.
class InCallbacks {
public:
    explicit InCallbacks(const Context* context) { t_callback_owners.push_back(context); }
    ~InCallbacks() { t_callback_owners.pop_back(); }
    InCallbacks(const InCallbacks&) = delete;
    InCallbacks& operator=(const InCallbacks&) = delete;
};

}  // namespace
namespace {

using Clock = std::chrono::steady_clock;

int64_t micros_since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
}

// `borrow`: the bytes are used in place (RKNN_FLAG_MODEL_BUFFER_ZERO_COPY).
StatusOr<graph::Graph> load_graph(const void* model, uint32_t size, bool borrow, const graph::Graph* master) {
    if (size > 0)
        return model::load_model_from_memory(
            model, size, borrow ? model::BufferOwnership::kBorrow : model::BufferOwnership::kCopy, master);
    const char* path = static_cast<const char*>(model);
    if (std::strlen(path) == 0) return RKNN_INVALID_ARGUMENT("size is 0 and the model path is empty");
    return model::load_model_from_file(path, master);
}

// The vendor runtime raises the process to nice -19 unless told not to; a
// process without the permission simply keeps its priority.
void raise_priority(uint32_t flags) {
    if (flags & RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY) return;
    if (setpriority(PRIO_PROCESS, 0, -19) != 0) RKNN_LOG_AT(2, "could not raise the process priority (not permitted)");
}

// The shape set of the shapes a dynamic model's graph declares (the
// converter stores the graph at its largest set), else the first.
size_t main_shape_set(const graph::Graph& g) {
    std::vector<graph::Shape> declared;
    for (int32_t t : g.inputs) declared.push_back(g.tensors[static_cast<size_t>(t)].shape);
    const auto found = std::find(g.shape_sets.begin(), g.shape_sets.end(), declared);
    return found == g.shape_sets.end() ? 0 : static_cast<size_t>(found - g.shape_sets.begin());
}

}  // namespace

StatusOr<std::shared_ptr<Context>> Context::create(const void* model, uint32_t size, uint32_t flags,
                                                   std::shared_ptr<IoMemory> model_memory, Context* master) {
    std::shared_ptr<Context> context(new Context());
    context->flags_ = flags;
    // The master's plan (graph, weight layout; never changed once made) and
    // driver, taken under its lock; it is held again only to share its
    // weights buffer, so that its runs are not held up by this compile.
    std::shared_ptr<const CompiledPlan> master_plan;
    if (master != nullptr) {
        std::lock_guard<std::mutex> lock(master->mutex_);
        RKNN_RETURN_IF_ERROR(master->check_weights_lendable());
        if (flags & (RKNN_FLAG_MEM_ALLOC_OUTSIDE | RKNN_FLAG_COLLECT_MODEL_INFO_ONLY))
            return RKNN_INVALID_ARGUMENT("RKNN_FLAG_SHARE_WEIGHT_MEM: the weights are the master's, not memory the "
                                         "client provides (RKNN_FLAG_MEM_ALLOC_OUTSIDE) or none");
        master_plan = master->main_set_->plan;
        context->driver_ = master->driver_;  // one device: the weights buffer is the master's
    }
    RKNN_ASSIGN_OR_RETURN(graph::Graph graph, load_graph(model, size, (flags & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) != 0,
                                                         master_plan != nullptr ? &master_plan->graph : nullptr));
    context->dynamic_ = !graph.shape_sets.empty();
    if (master != nullptr && (context->dynamic_ || graph.batch > 1))
        return RKNN_INVALID_ARGUMENT("RKNN_FLAG_SHARE_WEIGHT_MEM is not for dynamic-shape or multi-batch models");
    if (master == nullptr) {
        RKNN_ASSIGN_OR_RETURN(driver::OpenedDriver opened, driver::open_kernel_driver());
        context->driver_ = std::make_shared<driver::OpenedDriver>(std::move(opened));
    }
    CompiledPlan::Options options;
    options.stage_io_internally = context->io_staged_internally();
    options.share_internal = log::level() < 5;  // level 5 dumps every tensor after the run: each its own bytes
    context->plan_options_ = options;
    context->ranged_limit_ = ranged_limit_from_env();
    if (master != nullptr) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledPlan> plan,
                              CompiledPlan::compile_sharing(graph, std::move(model_memory), {master_plan},
                                                            *context->driver_, options));
        context->master_plan_ = master_plan;
        std::lock_guard<std::mutex> lock(master->mutex_);  // as rknn_dup_context holds its original
        RKNN_RETURN_IF_ERROR(master->check_weights_lendable());
        RKNN_RETURN_IF_ERROR(context->build({plan}, 0, master, /*weights_of_original=*/true));
        raise_priority(flags);
        return context;
    }
    RKNN_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<const CompiledPlan>> plans,
                          CompiledPlan::compile_all(graph, std::move(model_memory), *context->driver_, options));
    RKNN_RETURN_IF_ERROR(context->build(std::move(plans), main_shape_set(graph)));
    raise_priority(flags);
    if (graph.batch > 1) return make_batched(std::move(context), graph.batch);
    return context;
}

StatusOr<std::shared_ptr<Context>> Context::duplicate() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) {
        RKNN_ASSIGN_OR_RETURN(std::unique_ptr<BatchFanout> fanout, batch_->duplicate());
        std::shared_ptr<Context> copy = front_of(*this, std::move(fanout));
        copy->batch_mask_ = batch_mask_;
        copy->batch_core_num_ = batch_core_num_;
        return copy;
    }
    if (dynamic_)
        return Status(StatusCode::kFailedPrecondition,
                      "a dynamic-shape model cannot be duplicated (as the vendor documents); rknn_init it again");
    std::shared_ptr<Context> copy(new Context());
    copy->flags_ = flags_;
    copy->driver_ = driver_;
    copy->master_plan_ = master_plan_;  // a slave's copy is on the master's weights too
    // The graph, prepared ops and programs are shared, not compiled again.
    RKNN_RETURN_IF_ERROR(copy->build({main_set_->plan}, 0, this));
    if (core_mask_ != 0) RKNN_RETURN_IF_ERROR(copy->generate_programs(core_mask_));
    return copy;
}

bool Context::shares_weights_with(const Context& other) const {
    if (batch_ || other.batch_) {
        const Context& a = batch_ ? *batch_->contexts()[0] : *this;
        const Context& b = other.batch_ ? *other.batch_->contexts()[0] : other;
        return a.shares_weights_with(b);
    }
    return buffers_ != nullptr && other.buffers_ != nullptr && buffers_->shares(kWeightBuffer, *other.buffers_);
}

Context::~Context() {
    batch_.reset();  // its threads and contexts first
    custom_ops_.reset();
    plugins_.reset();
    for (void* p : owned_outputs_) std::free(p);
    for (RangedPlan& entry : ranged_) buffers_->discard(&entry.streams);
    buffers_.reset();
}

Status Context::check_weights_lendable() const {
    if (batch_) return Status(StatusCode::kUnimplemented, "a multi-batch master lending its weights: not implemented");
    if (dynamic_) return RKNN_INVALID_ARGUMENT("the master is a dynamic-shape model, which cannot lend its weights");
    if (info_only()) return RKNN_INVALID_ARGUMENT("the master was made with RKNN_FLAG_COLLECT_MODEL_INFO_ONLY");
    if (buffer_bytes_[kWeightBuffer] > 0 && !buffers_->present(kWeightBuffer))
        return Status(StatusCode::kFailedPrecondition,
                      "the master's weights are not in place yet (rknn_set_weight_mem on the master first)");
    return Status::ok();
}

Status Context::build(std::vector<std::shared_ptr<const CompiledPlan>> plans, size_t main, const Context* original,
                      bool weights_of_original) {
    sets_.resize(plans.size());
    for (size_t k = 0; k < plans.size(); ++k) sets_[k].plan = std::move(plans[k]);
    set_ = &sets_[main];
    main_set_ = set_;
    const graph::Graph& g = set_->plan->graph;
    timeout_ms_ = npu_timeout_ms(20000);
    ranged_sync_ = driver_->driver->syncs_byte_ranges() && log::level() < 5;
    // Every plan runs in the same buffers: each as large as the largest set needs.
    buffer_bytes_ = set_->plan->memory.buffer_bytes;
    for (const PlanState& s : sets_)
        for (size_t id = 0; id < buffer_bytes_.size(); ++id)
            buffer_bytes_[id] = std::max(buffer_bytes_[id], s.plan->memory.buffer_bytes[id]);
    std::vector<uint64_t> bytes = buffer_bytes_;
    regcmd_buffer_ = static_cast<int32_t>(bytes.size());
    bytes.push_back(0);  // the regcmd streams: generate_programs sizes it
    // Memory the client provides is not allocated here (spec 4.3).
    if (weights_outside()) bytes[kWeightBuffer] = 0;
    if (internal_outside()) bytes[kInternalBuffer] = 0;
    if (io_staged_internally()) std::fill(bytes.begin() + kFirstIoBuffer, bytes.begin() + regcmd_buffer_, 0);
    // A duplicate runs its original's plan: the weights on the device are
    // the same bytes at the same offsets, shared.
    const bool share_weights = original != nullptr &&
                               (original->main_set_->plan == set_->plan || weights_of_original) &&
                               original->buffers_->present(kWeightBuffer);
    // (A master without NPU weights has no buffer to share, nor does its slave need one.)
    if (weights_of_original && !share_weights && buffer_bytes_[kWeightBuffer] > 0)
        return RKNN_INTERNAL_ERROR("the master's weights cannot be shared");
    if (share_weights) bytes[kWeightBuffer] = 0;
    const uint64_t sram = sram_request(bytes[kInternalBuffer]);
    RKNN_ASSIGN_OR_RETURN(buffers_, DeviceBuffers::create(driver_, bytes, sram > 0 ? kInternalBuffer : -1, sram));
    uses_sram_ = buffers_->sram_bytes(kInternalBuffer) > 0;  // the driver may give none
    if (io_staged_internally()) {
        for (int32_t id = kFirstIoBuffer; id < regcmd_buffer_; ++id)
            buffers_->attach_view(id, kInternalBuffer, set_->plan->memory.io_staging_offsets[static_cast<size_t>(id)],
                                  buffer_bytes_[static_cast<size_t>(id)]);  // every plan stages it there
    }
    for (int32_t id = kFirstIoBuffer; id < regcmd_buffer_; ++id) io_slots_.push_back(buffers_->slot(id));
    client_input_buffers_.assign(static_cast<size_t>(regcmd_buffer_), false);
    client_output_buffers_.assign(static_cast<size_t>(regcmd_buffer_), false);
    if (share_weights) {
        RKNN_RETURN_IF_ERROR(buffers_->share(kWeightBuffer, *original->buffers_));
    } else if (!weights_outside()) {
        RKNN_RETURN_IF_ERROR(write_all_constants());
    }
    RKNN_RETURN_IF_ERROR(generate_programs(0));
    custom_ops_ = std::make_unique<CustomOps>(g, driver_);
    if (!g.custom_ops.empty() && !info_only() && custom_op_plugins_requested()) {
        InCallbacks scope(this);
        InCallbacks duplicated(original);  // rknn_dup_context holds the original's lock
        plugins_ = std::make_unique<PluginLibraries>();
        plugins_->load(custom_op_plugin_directory(), *custom_ops_, g);
    }

    // The largest set first: its host values are the storage the others share.
    std::vector<PlanState*> by_size{set_};
    for (PlanState& s : sets_)
        if (&s != set_) by_size.push_back(&s);
    for (PlanState* s : by_size) {
        prepare_cpu_calls(*s);
        prepare_fast_io(*s);
    }
    if (buffers_->sram_bytes(kInternalBuffer) > 0) {
        const uint64_t base = buffers_->device_address(kInternalBuffer);
        RKNN_LOG_AT(3, "Total allocated Internal SRAM Size: %llu, Addr: [0x%llx, 0x%llx)",
                    static_cast<unsigned long long>(buffers_->sram_bytes(kInternalBuffer)),
                    static_cast<unsigned long long>(base),
                    static_cast<unsigned long long>(base + buffers_->sram_bytes(kInternalBuffer)));
    }
    size_t npu_ops = 0, tasks = 0;
    for (const NpuSegment& s : set_->lowered->schedule.segments) npu_ops += s.ops.size();
    for (const SegmentProgram& p : set_->lowered->programs) tasks += p.program.tasks.size();
    RKNN_LOGI("model: %zu ops, %zu with NPU tasks in %zu segment(s) (%zu tasks, %llu regcmd bytes), %zu on the CPU",
              g.ops.size(), npu_ops, set_->lowered->programs.size(), tasks,
              static_cast<unsigned long long>(regcmd_bytes(set_->lowered->programs)), set_->lowered->schedule.cpu_steps.size());
    if (dynamic_) RKNN_LOGI("dynamic shapes: %zu shape sets; call rknn_set_input_shapes to choose one", sets_.size());
    if (log::level() >= 3) RKNN_LOG_AT(3, "%s", memory_table().c_str());
    return Status::ok();
}

Status Context::write_all_constants() {
    // The plans share one weight layout; each writes its own constants.
    for (const PlanState& s : sets_)
        RKNN_RETURN_IF_ERROR(write_constants(s.plan->placements, s.plan->memory, *buffers_));
    return Status::ok();
}

bool Context::per_op_programs(uint32_t core_mask) const {
    // Layers split over several cores need every core done before the next
    // layer starts: one submit per op then.
    return (flags_ & RKNN_FLAG_COLLECT_PERF_MASK) != 0 || log::level() >= 4 || __builtin_popcount(core_mask) > 1;
}

Status Context::generate_programs(uint32_t core_mask) {
    const bool per_op = per_op_programs(core_mask);
    std::vector<std::shared_ptr<const LoweredSchedule>> lowered, ranged_lowered;
    for (const PlanState& s : sets_) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<const LoweredSchedule> one, s.plan->lowered(core_mask, per_op));
        lowered.push_back(std::move(one));
    }
    for (const RangedPlan& entry : ranged_) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<const LoweredSchedule> one, entry.state.plan->lowered(core_mask, per_op));
        ranged_lowered.push_back(std::move(one));
    }
    RKNN_ASSIGN_OR_RETURN(std::vector<DetachedLink> ranged_links, link_ranged_plans(ranged_lowered));
    StatusOr<std::vector<Submits>> submits = link_and_install(lowered);
    if (!submits.is_ok()) {
        discard_links(&ranged_links);
        return submits.status();
    }
    for (size_t k = 0; k < sets_.size(); ++k) {
        PlanState& s = sets_[k];
        s.lowered = std::move(lowered[k]);
        s.submits = std::move(submits.value()[k]);
        finish_linking(s);
    }
    install_ranged_links(std::move(ranged_links), ranged_lowered);
    core_mask_ = core_mask;
    return Status::ok();
}

void Context::finish_linking(PlanState& s) {
    s.step_us.assign(s.lowered->schedule.steps.size(), 0);
    s.step_npu_ns.assign(s.lowered->schedule.steps.size(), -1);
    s.step_core_tasks.assign(s.lowered->schedule.steps.size(), {});
    s.custom_timing.assign(s.plan->graph.ops.size(), CustomOps::Timing());
    plan_host_reads(s);
}

uint64_t Context::sram_total() const {
    auto total = driver_->driver->action(driver::Action::kGetTotalSramSize);
    return total.is_ok() ? total.value() : 0;
}

uint64_t Context::sram_request(uint64_t internal_bytes) const {
    // RKNN_FLAG_ENABLE_SRAM: the internal tensors in as much SRAM as is free
    // (4 KiB chunks; the rest of the buffer is DDR); where there is none, the
    // flag is a wish.
    if ((flags_ & RKNN_FLAG_ENABLE_SRAM) == 0) return 0;
    if (internal_outside()) {
        RKNN_LOGW("RKNN_FLAG_ENABLE_SRAM: the client provides the internal memory; no SRAM is taken");
        return 0;
    }
    if (internal_bytes == 0) return 0;
    auto free_sram = driver_->driver->action(driver::Action::kGetFreeSramSize);
    const uint64_t free_bytes = free_sram.is_ok() && sram_total() > 0 ? free_sram.value() / 4096 * 4096 : 0;
    if (free_bytes == 0) {
        RKNN_LOGW("RKNN_FLAG_ENABLE_SRAM: the %s driver on %s has no free NPU SRAM; the internal tensors stay in DDR",
                  driver_->driver->backend_name(), driver_->soc->name);
        return 0;
    }
    return std::min<uint64_t>((internal_bytes + 4095) / 4096 * 4096, free_bytes);
}

StatusOr<std::vector<Context::Submits>> Context::link_and_install(
    const std::vector<std::shared_ptr<const LoweredSchedule>>& lowered) {
    std::vector<uint64_t> offsets;
    uint64_t stream_bytes = 0;
    for (const auto& one : lowered) {
        offsets.push_back(stream_bytes);
        stream_bytes += plan_aligned(regcmd_bytes(one->programs));
    }
    RKNN_ASSIGN_OR_RETURN(driver::BufferObject streams, buffers_->create_detached(stream_bytes));
    std::vector<Submits> linked(lowered.size());
    Status status = Status::ok();
    for (size_t k = 0; k < lowered.size() && status.is_ok(); ++k) {
        StatusOr<Submits> submits = link_segments(lowered[k]->programs, buffers_->bases(), streams.dma_addr + offsets[k],
                                                  streams.host + offsets[k], timeout_ms_);
        status = submits.status();
        if (status.is_ok()) linked[k] = std::move(submits).value();
    }
    if (status.is_ok()) status = buffers_->flush_detached(streams);
    if (!status.is_ok()) {
        buffers_->discard(&streams);
        return status;
    }
    buffers_->install(regcmd_buffer_, streams, stream_bytes);
    return linked;
}

Status Context::set_core_mask(uint32_t mask) {
    std::lock_guard<std::mutex> lock(mutex_);
    const hw::SocProfile& soc = *driver_->soc;
    if (mask == RKNN_NPU_CORE_ALL) mask = soc.all_cores_mask;
    if (mask != RKNN_NPU_CORE_AUTO && ((mask & ~soc.all_cores_mask) != 0 || !soc.core_mask_runs(mask)))
        return make_status(StatusCode::kInvalidArgument, "core mask 0x%x: %s runs core masks within 0x%x", mask,
                           soc.name, soc.all_cores_mask);
    // A driver that picks each job's core and writes its index itself
    // (mainline rocket): a stream cannot be pinned, nor split across cores.
    if (mask != RKNN_NPU_CORE_AUTO && !driver_->driver->pins_cores())
        return make_status(StatusCode::kInvalidArgument,
                           "core mask 0x%x: the %s driver chooses the core of each job; only RKNN_NPU_CORE_AUTO", mask,
                           driver_->driver->backend_name());
    if (batch_) return apply_batch_cores(mask, 0);  // a multi-batch model: one context per core of the mask
    if (mask == core_mask_) return Status::ok();
    return generate_programs(mask);
}

Status Context::run_npu_segment(int32_t segment, SegmentRun* run) {
    RKNN_RETURN_IF_ERROR(sync_before_submit());
    const auto index = static_cast<size_t>(segment);
    // rknpu_submit.priority: the PRIOR_* init flag as it is (0 high, 1
    // medium, 2 low). The vendor driver 0.9.8 does not use it; the mock
    // kernel's scheduler lets more urgent jobs go first.
    set_->submits[index].priority = static_cast<int32_t>(flags_ & (RKNN_FLAG_PRIOR_MEDIUM | RKNN_FLAG_PRIOR_LOW));
    RKNN_ASSIGN_OR_RETURN(*run, submit_segment(driver_->driver.get(), set_->lowered->programs[index], set_->submits[index]));
    return sync_after_submit(segment);
}

size_t Context::npu_task_op_count() const {
    return batch_ ? batch_->contexts()[0]->npu_task_op_count() : main_set_->plan->npu_task_op_count();
}

size_t Context::cube_requant_count() const {
    return batch_ ? batch_->contexts()[0]->cube_requant_count() : main_set_->lowered->cube_requant_count();
}

cpu::HostTensor Context::host_value(int32_t t, const graph::Tensor& declared) {
    // One plan runs at a time: tensor t's value in every plan of the context
    // lives in the same bytes, as many as the largest asks for.
    const auto index = static_cast<size_t>(t);
    if (host_storage_.size() <= index) host_storage_.resize(index + 1);
    std::shared_ptr<AlignedBytes>& storage = host_storage_[index];
    const size_t bytes = std::max<size_t>(
        1, static_cast<size_t>(graph::num_elements(declared.shape)) * graph::dtype_size(declared.dtype));
    if (storage == nullptr || storage->size() < bytes) storage = std::make_shared<AlignedBytes>(bytes);
    cpu::HostTensor value = cpu::HostTensor::in_storage(declared.dtype, declared.shape, storage);
    value.quant = declared.quant;
    return value;
}

void Context::prepare_cpu_calls(PlanState& s) {
    const graph::Graph& g = s.plan->graph;
    s.values.resize(g.tensors.size());
    s.cpu_calls.assign(g.ops.size(), std::nullopt);
    // Gives tensor `t` a host value of its declared dtype and shape.
    const auto allocate = [&](int32_t t) {
        const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
        cpu::HostTensor& value = s.values[static_cast<size_t>(t)];
        if (value.dtype() != declared.dtype || value.shape() != declared.shape) value = host_value(t, declared);
    };
    for (int32_t t : g.inputs) allocate(t);
    for (const CpuStep& step : s.lowered->schedule.cpu_steps) {
        if (s.lowered->cube_requants[static_cast<size_t>(step.op)]) continue;
        for (int32_t t : step.unpack_before) allocate(t);
        for (int32_t t : g.ops[static_cast<size_t>(step.op)].outputs)
            if (t >= 0) allocate(t);
        if (g.ops[static_cast<size_t>(step.op)].type == graph::OpType::kCustom) continue;  // CustomOps::run
        auto call = s.plan->executor->prepare_call(step.op, s.values);
        if (call.is_ok()) {
            s.cpu_calls[static_cast<size_t>(step.op)] = std::move(call).value();
            continue;
        }
        // Its outputs keep values of their declared form, so that the ops
        // reading them can still be prepared (run_op replaces them each run).
        RKNN_LOG_AT(4, "CPU op %d (%s) allocates on each run: %s", step.op,
                    graph::op_type_name(g.ops[static_cast<size_t>(step.op)].type), call.status().message().c_str());
    }
}

Status Context::run_cpu_step(const CpuStep& step) {
    const graph::Graph& g = set_->plan->graph;
    if (const std::optional<CubeRequant>& requant = set_->lowered->cube_requants[static_cast<size_t>(step.op)]) {
        const graph::Op& op = g.ops[static_cast<size_t>(step.op)];
        const DeviceHome& from = set_->plan->memory.homes[static_cast<size_t>(op.inputs[0])];
        const DeviceHome& to = set_->plan->memory.homes[static_cast<size_t>(op.outputs[0])];
        RKNN_RETURN_IF_ERROR(begin_cpu_write(to));
        requant->run(buffers_->host(from.buffer) + from.offset, buffers_->host(to.buffer) + to.offset);
        return Status::ok();
    }
    if (custom_ops_->is_custom(step.op)) return run_custom_step(step);
    for (int32_t t : step.unpack_before) {
        const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
        RKNN_RETURN_IF_ERROR(unpack_native_into(buffers_->host(home.buffer) + home.offset, home.bytes,
                                                g.tensors[static_cast<size_t>(t)], set_->plan->memory.form, home.packed_row_pixels,
                                                &set_->values[static_cast<size_t>(t)]));
    }
    const std::optional<cpu::GraphExecutor::PreparedCall>& call = set_->cpu_calls[static_cast<size_t>(step.op)];
    RKNN_RETURN_IF_ERROR(call.has_value() ? set_->plan->executor->run_prepared(*call)
                                          : set_->plan->executor->run_op(step.op, set_->values));
    for (int32_t t : step.pack_after) {
        const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
        RKNN_RETURN_IF_ERROR(begin_cpu_write(home));
        RKNN_RETURN_IF_ERROR(pack_native(set_->values[static_cast<size_t>(t)], buffers_->host(home.buffer) + home.offset,
                                         home.bytes, set_->plan->memory.form, home.packed_row_pixels));
    }
    return Status::ok();
}


bool Context::in_callbacks_of(const Context* context) {
    return std::find(t_callback_owners.begin(), t_callback_owners.end(), context) != t_callback_owners.end();
}

Status Context::register_custom_ops(const rknn_custom_op* ops, uint32_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) {
        // One registration for every batch copy: a copy that fails undoes
        // the copies before it, so the client can register again.
        // An exception from a callback undoes them too.
        const auto& copies = batch_->contexts();
        struct Undo {
            const std::vector<std::shared_ptr<Context>>& copies;
            const rknn_custom_op* ops;
            uint32_t count;
            size_t done = 0;
            ~Undo() {
                for (size_t j = 0; j < done; ++j) copies[j]->unregister_custom_ops(ops, count);
            }
        } undo{copies, ops, count};
        for (size_t i = 0; i < copies.size(); ++i) {
            const Status status = copies[i]->register_custom_ops(ops, count);
            if (!status.is_ok()) return status.with_context("batch copy " + std::to_string(i));
            undo.done = i + 1;
        }
        undo.done = 0;  // all registered: nothing to undo
        return Status::ok();
    }
    RKNN_RETURN_IF_ERROR(refuse_info_only());
    InCallbacks scope(this);
    return custom_ops_->register_ops(ops, count, set_->plan->graph);
}

void Context::unregister_custom_ops(const rknn_custom_op* ops, uint32_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    InCallbacks scope(this);  // their destroy runs
    custom_ops_->unregister_ops(ops, count, set_->plan->graph);
}

// A custom op's step: a cube that the op alone reads, or that only NPU ops
// read after it, is converted straight to or from the callbacks' float32, or
// moved to and from NCHW for a callback that takes the model's own dtype
// (cube_float.h); other tensors go through the CPU values as for any op.
Status Context::run_custom_step(const CpuStep& step) {
    const graph::Graph& g = set_->plan->graph;
    const graph::Op& op = g.ops[static_cast<size_t>(step.op)];
    const MemoryPlan& memory = set_->plan->memory;
    const auto cube_of = [&](int32_t t) {
        const DeviceHome& home = memory.homes[static_cast<size_t>(t)];
        return CustomOps::Cube{buffers_->host(home.buffer) + home.offset, home.bytes};
    };
    const bool callbacks = custom_ops_->runs_callbacks(step.op);
    set_->custom_timing[static_cast<size_t>(step.op)] = CustomOps::Timing();  // no row of an earlier run if this one fails
    const auto direct = [&](int32_t t, const DeviceHome& home) {
        // A tensor the op takes both ways goes through the CPU values.
        const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
        switch (custom_ops_->seen_as(step.op, t, g)) {
        case CustomOps::Seen::kFloat32: return cube_converts_to_float32(declared, memory.form, home.packed_row_pixels);
        case CustomOps::Seen::kOwnDtype: return cube_moves_as_nchw(declared, memory.form, home.packed_row_pixels);
        case CustomOps::Seen::kMixed: return false;
        }
        return false;
    };
    const Clock::time_point start = Clock::now();
    std::vector<CustomOps::Cube> in_cubes(op.inputs.size()), out_cubes(op.outputs.size());
    for (int32_t t : step.unpack_before) {
        const DeviceHome& home = memory.homes[static_cast<size_t>(t)];
        const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
        if (callbacks && custom_ops_->read_only_by(t, step.op) && direct(t, home)) {
            for (size_t i = 0; i < op.inputs.size(); ++i)
                if (op.inputs[i] == t) in_cubes[i] = cube_of(t);
            continue;
        }
        RKNN_RETURN_IF_ERROR(unpack_native_into(buffers_->host(home.buffer) + home.offset, home.bytes, declared,
                                                memory.form, home.packed_row_pixels, &set_->values[static_cast<size_t>(t)]));
    }
    std::vector<int32_t> pack_from_values;
    for (int32_t t : step.pack_after) {
        const DeviceHome& home = memory.homes[static_cast<size_t>(t)];
        if (!callbacks || !custom_ops_->read_only_on_npu(t, set_->plan->placements) || !direct(t, home)) {
            pack_from_values.push_back(t);
            continue;
        }
        RKNN_RETURN_IF_ERROR(begin_cpu_write(home));
        for (size_t i = 0; i < op.outputs.size(); ++i)
            if (op.outputs[i] == t) out_cubes[i] = cube_of(t);
    }
    const int64_t unpack_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
    CustomOps::Timing timing;
    {
        InCallbacks scope(this);
        RKNN_RETURN_IF_ERROR(custom_ops_->run(step.op, g, set_->values, memory.form, in_cubes, out_cubes,
                                              callbacks ? &timing : nullptr));
    }
    const Clock::time_point pack_start = Clock::now();
    for (int32_t t : pack_from_values) {
        const DeviceHome& home = memory.homes[static_cast<size_t>(t)];
        RKNN_RETURN_IF_ERROR(begin_cpu_write(home));
        RKNN_RETURN_IF_ERROR(pack_native(set_->values[static_cast<size_t>(t)], buffers_->host(home.buffer) + home.offset,
                                         home.bytes, memory.form, home.packed_row_pixels));
    }
    // Stored every run, zero when a built-in kernel ran it, so that no row
    // outlives a re-registration.
    if (callbacks) {
        timing.convert_in_ns += unpack_ns;
        timing.convert_out_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - pack_start).count();
    }
    set_->custom_timing[static_cast<size_t>(step.op)] = timing;
    return Status::ok();
}

int64_t Context::last_run_npu_ns() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) {  // each context's last item
        int64_t sum = 0;
        for (const std::shared_ptr<Context>& context : batch_->contexts()) sum += context->last_run_npu_ns();
        return sum;
    }
    return last_run_npu_ns_;
}

Status Context::run(OutputSnapshot* keep) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) return batch_->run(keep);
    const Clock::time_point start = Clock::now();
    int64_t run_npu_ns = 0;
    RKNN_RETURN_IF_ERROR(check_memory_ready());
    RKNN_RETURN_IF_ERROR(refuse_before_shapes("rknn_run"));
    RKNN_RETURN_IF_ERROR(custom_ops_->check_all_registered());
    for (size_t i = 0; i < staged_inputs_.size(); ++i) {
        if (staged_inputs_[i].empty() || (i < input_bindings_.size() && input_bindings_[i])) continue;
        const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(set_->plan->graph.inputs[i])];
        RKNN_RETURN_IF_ERROR(begin_cpu_write(home));
        std::memcpy(buffers_->host(home.buffer) + home.offset, staged_inputs_[i].data(), staged_inputs_[i].size());
    }
    RKNN_RETURN_IF_ERROR(read_bound_inputs());
    for (size_t i = 0; i < set_->lowered->schedule.steps.size(); ++i) {
        const Step& step = set_->lowered->schedule.steps[i];
        const Clock::time_point step_start = Clock::now();
        SegmentRun segment_run;
        const Status status = step.npu ? run_npu_segment(step.index, &segment_run)
                                       : run_cpu_step(set_->lowered->schedule.cpu_steps[static_cast<size_t>(step.index)]);
        if (!status.is_ok()) {
            (void)sync_before_submit();  // nothing the CPU wrote stays dirty in memory others may share
            return status.with_context("step " + std::to_string(i));
        }
        set_->step_us[i] = micros_since(step_start);
        set_->step_npu_ns[i] = step.npu ? segment_run.npu_ns : -1;
        set_->step_core_tasks[i] = segment_run.core_tasks;
        run_npu_ns += segment_run.npu_ns;
    }
    RKNN_RETURN_IF_ERROR(sync_before_submit());  // what CPU steps wrote after the last segment
    RKNN_RETURN_IF_ERROR(write_bound_outputs());
    if (io_staged_internally()) keep_outputs();
    if (keep != nullptr) RKNN_RETURN_IF_ERROR(keep_snapshot(keep));
    last_run_us_ = micros_since(start);
    last_run_npu_ns_ = run_npu_ns;
    ++runs_;
    ran_since_switch_ = true;
    if (log::level() >= 4) RKNN_LOG_AT(4, "%s", perf_table().c_str());
    if (log::level() >= 5) {
        RKNN_RETURN_IF_ERROR(sync_after_submit(-1, /*whole_buffers=*/true));  // every tensor is read
        dump_layers();
    }
    return Status::ok();
}

StatusOr<cpu::HostTensor> Context::current_value(int32_t tensor) const {
    if (const graph::Buffer* constant = set_->plan->graph.constant_buffer(tensor)) {
        const graph::Tensor& t = set_->plan->graph.tensors[static_cast<size_t>(tensor)];
        cpu::HostTensor view = cpu::HostTensor::borrow(t.dtype, t.shape, constant->data);
        view.quant = t.quant;
        return view;
    }
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(tensor)];
    const int32_t producer = set_->plan->producers[static_cast<size_t>(tensor)];
    const bool on_device = home.valid() && (producer < 0 || set_->plan->placements[static_cast<size_t>(producer)].target == npu::Target::kNpu ||
                                            set_->lowered->cube_requants[static_cast<size_t>(producer)].has_value());
    if (!on_device) return set_->values[static_cast<size_t>(tensor)];
    return unpack_native(cube_after_run(tensor), home.bytes, set_->plan->graph.tensors[static_cast<size_t>(tensor)], set_->plan->memory.form,
                         home.packed_row_pixels);
}

void Context::keep_outputs() {
    kept_outputs_.resize(set_->plan->graph.outputs.size());
    for (size_t k = 0; k < set_->plan->graph.outputs.size(); ++k) {
        const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(set_->plan->graph.outputs[k])];
        if (!home.valid() || (k < output_bindings_.size() && output_bindings_[k])) continue;
        const uint8_t* cube = buffers_->host(home.buffer) + home.offset;
        kept_outputs_[k].assign(cube, cube + home.bytes);
    }
}

const uint8_t* Context::cube_after_run(int32_t t) const {
    for (size_t k = 0; k < kept_outputs_.size(); ++k)
        if (set_->plan->graph.outputs[k] == t && !kept_outputs_[k].empty()) return kept_outputs_[k].data();
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
    return buffers_->host(home.buffer) + home.offset;
}

void Context::dump_layers() const {
    static const LayerDumper dumper;
    if (!dumper.active()) return;
    int position = 0;
    for (int32_t t : set_->plan->graph.inputs) {
        auto value = current_value(t);
        if (value.is_ok()) dumper.dump(runs_, position, "InputOperator", set_->plan->graph.tensors[static_cast<size_t>(t)].name, value.value());
    }
    for (int32_t op_index : set_->plan->order) {
        const graph::Op& op = set_->plan->graph.ops[static_cast<size_t>(op_index)];
        ++position;
        for (int32_t t : op.outputs) {
            auto value = current_value(t);
            if (value.is_ok() && value.value().dtype() != graph::DType::kUndefined)
                dumper.dump(runs_, position, graph::op_type_name(op.type), set_->plan->graph.tensors[static_cast<size_t>(t)].name,
                            value.value());
        }
    }
}

}  // namespace rknn::runtime
