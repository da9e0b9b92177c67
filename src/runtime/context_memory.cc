// Memory a client provides to a context (spec 4.3, 5.5): the weights and
// internal regions of RKNN_FLAG_MEM_ALLOC_OUTSIDE / _INTERNAL_ALLOC_OUTSIDE,
// and I/O bindings the NPU uses in place. Each puts client memory in place of
// one device buffer id and links the streams again (their relocations name
// buffer ids, so nothing is lowered twice).
#include <algorithm>

#include "base/log.h"
#include "runtime/context.h"
#include "runtime/batch_fanout.h"

namespace rknn::runtime {
namespace {

// The memory plan starts every buffer's tensors on this boundary; client
// memory must keep it.
constexpr uint64_t kDeviceAlignment = 128;

const char* buffer_name(int32_t id) {
    return id == kWeightBuffer ? "weight" : id == kInternalBuffer ? "internal" : "I/O";
}

}  // namespace

bool Context::info_only() const { return (flags_ & RKNN_FLAG_COLLECT_MODEL_INFO_ONLY) != 0; }

bool Context::weights_outside() const { return (flags_ & RKNN_FLAG_MEM_ALLOC_OUTSIDE) != 0 || info_only(); }

bool Context::internal_outside() const {
    return (flags_ & RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE) != 0 || weights_outside();
}

bool Context::io_staged_internally() const { return weights_outside(); }

Status Context::refuse_info_only() const {
    if (!info_only()) return Status::ok();
    return Status(StatusCode::kFailedPrecondition,
                  "the context was initialised with RKNN_FLAG_COLLECT_MODEL_INFO_ONLY: only sizes can be queried");
}

Status Context::check_memory_ready() const {
    RKNN_RETURN_IF_ERROR(refuse_info_only());
    if (buffer_bytes_[kWeightBuffer] > 0 && !buffers_->present(kWeightBuffer))
        return Status(StatusCode::kFailedPrecondition,
                      "no weight memory: call rknn_set_weight_mem first (RKNN_FLAG_MEM_ALLOC_OUTSIDE)");
    if (buffer_bytes_[kInternalBuffer] > 0 && !buffers_->present(kInternalBuffer))
        return Status(StatusCode::kFailedPrecondition, "no internal memory: call rknn_set_internal_mem first");
    return Status::ok();
}

Status Context::relink() {
    std::vector<std::shared_ptr<const LoweredSchedule>> lowered, ranged_lowered;
    for (const PlanState& s : sets_) lowered.push_back(s.lowered);
    for (const RangedPlan& entry : ranged_) ranged_lowered.push_back(entry.state.lowered);
    RKNN_ASSIGN_OR_RETURN(std::vector<DetachedLink> ranged_links, link_ranged_plans(ranged_lowered));
    StatusOr<std::vector<Submits>> submits = link_and_install(lowered);
    if (!submits.is_ok()) {
        discard_links(&ranged_links);
        return submits.status();
    }
    for (size_t k = 0; k < sets_.size(); ++k) sets_[k].submits = std::move(submits.value()[k]);
    install_ranged_links(std::move(ranged_links), ranged_lowered);
    return Status::ok();
}

Status Context::attach_memory(int32_t id, std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes) {
    std::shared_ptr<const DeviceBuffers::Slot> previous = buffers_->slot(id);
    RKNN_RETURN_IF_ERROR(buffers_->attach_client(id, std::move(memory), offset, bytes));
    Status status = Status::ok();
    if (buffers_->device_address(id) % kDeviceAlignment != 0) {
        status = make_status(StatusCode::kInvalidArgument, "%s memory at NPU address 0x%llx: it must start on a %llu-byte boundary",
                             buffer_name(id), static_cast<unsigned long long>(buffers_->device_address(id)),
                             static_cast<unsigned long long>(kDeviceAlignment));
    } else {
        status = relink();
    }
    if (!status.is_ok()) buffers_->restore(id, std::move(previous));
    return status;
}

StatusOr<bool> Context::attach_outside_memory(int32_t id, bool left_to_client, std::shared_ptr<IoMemory> memory,
                                              uint64_t offset, uint64_t bytes) {
    RKNN_RETURN_IF_ERROR(refuse_info_only());
    if (!left_to_client)
        return make_status(StatusCode::kFailedPrecondition,
                           "the context holds its own %s memory: only the init flags RKNN_FLAG_MEM_ALLOC_OUTSIDE%s "
                           "leave it to the client", buffer_name(id),
                           id == kInternalBuffer ? " or RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE" : "");
    const uint64_t needed = buffer_bytes_[static_cast<size_t>(id)];
    if (bytes < needed)
        return make_status(StatusCode::kInvalidArgument, "%s memory of %llu bytes; total_%s_size is %llu", buffer_name(id),
                           static_cast<unsigned long long>(bytes), buffer_name(id), static_cast<unsigned long long>(needed));
    if (needed == 0) return false;  // nothing of the model lives there
    RKNN_RETURN_IF_ERROR(attach_memory(id, std::move(memory), offset, needed));
    RKNN_LOG_AT(3, "%s memory: %llu bytes of client memory at NPU address 0x%llx", buffer_name(id),
                static_cast<unsigned long long>(needed), static_cast<unsigned long long>(buffers_->device_address(id)));
    return true;
}

Status Context::set_weight_memory(std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) return Status(StatusCode::kUnimplemented, "rknn_set_weight_mem on a multi-batch model: not implemented");
    RKNN_ASSIGN_OR_RETURN(const bool attached, attach_outside_memory(kWeightBuffer, weights_outside(), std::move(memory), offset, bytes));
    return attached ? write_all_constants() : Status::ok();
}

Status Context::set_internal_memory(std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_)
        return Status(StatusCode::kUnimplemented, "rknn_set_internal_mem on a multi-batch model: not implemented");
    return attach_outside_memory(kInternalBuffer, internal_outside(), std::move(memory), offset, bytes).status();
}

size_t Context::in_place_bindings() {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    if (batch_)
        for (const std::shared_ptr<Context>& context : batch_->contexts()) n += context->in_place_bindings();
    for (const auto* bindings : {&input_bindings_, &output_bindings_})
        for (const auto& b : *bindings)
            if (b && b->in_place) ++n;
    return n;
}

bool Context::tensor_owns_buffer(int32_t tensor) const {
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(tensor)];
    if (!home.valid() || home.buffer < kFirstIoBuffer || home.offset != 0) return false;
    // Aliases of the tensor (the same bytes) may share it; slices of a
    // Concat in place, the Concat a slice belongs to, or another input or
    // output (bound on its own) may not.
    const auto is_io = [this](int32_t t) {
        return std::find(set_->plan->graph.inputs.begin(), set_->plan->graph.inputs.end(), t) != set_->plan->graph.inputs.end() ||
               std::find(set_->plan->graph.outputs.begin(), set_->plan->graph.outputs.end(), t) != set_->plan->graph.outputs.end();
    };
    for (size_t t = 0; t < set_->plan->memory.homes.size(); ++t) {
        const DeviceHome& other = set_->plan->memory.homes[t];
        if (other.buffer != home.buffer || static_cast<int32_t>(t) == tensor) continue;
        if (other.offset != 0 || other.bytes > home.bytes || is_io(static_cast<int32_t>(t))) return false;
    }
    return true;
}

Status Context::restore_io_buffer(int32_t buffer) {
    const auto slot_index = static_cast<size_t>(buffer - kFirstIoBuffer);
    std::shared_ptr<const DeviceBuffers::Slot> previous = buffers_->slot(buffer);
    if (previous == io_slots_[slot_index]) return Status::ok();
    buffers_->restore(buffer, io_slots_[slot_index]);
    const Status relinked = relink();
    if (!relinked.is_ok()) buffers_->restore(buffer, std::move(previous));
    return relinked;
}

StatusOr<bool> Context::try_bind_in_place(const IoBinding& binding, int32_t tensor, bool native) {
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(tensor)];
    if (!home.valid() || home.buffer < kFirstIoBuffer) return false;
    // A previous binding in place ends here (and stays when that fails).
    RKNN_RETURN_IF_ERROR(restore_io_buffer(home.buffer));
    if (!native || !tensor_owns_buffer(tensor) || binding.bytes < home.bytes) return false;
    const uint64_t offset = static_cast<uint64_t>(binding.data - binding.memory->host());
    const Status attached = attach_memory(home.buffer, binding.memory, offset, home.bytes);
    if (!attached.is_ok()) {
        RKNN_LOG_AT(3, "%s: bound by copying (%s)", set_->plan->graph.tensors[static_cast<size_t>(tensor)].name.c_str(),
                    attached.message().c_str());
        return false;
    }
    return true;
}

}  // namespace rknn::runtime
