#include "driver/rknpu_driver.h"

#include <algorithm>
#include <bitset>
#include <cstring>
#include <utility>

#include "driver/drm_common.h"
#include "driver/errno_status.h"

namespace rknn::driver {

namespace {

// What librknnrt uses for its task array (hw-facts 1.4, flags 0xb): the
// driver reads the records through its own kernel mapping.
constexpr uint32_t kTaskBufferFlags = buffer_flag::kCacheable | buffer_flag::kKernelMapping;
constexpr uint64_t kPage = 4096;

const char* command_name(unsigned nr) {
    switch (nr) {
    case RKNPU_NR_ACTION: return "RKNPU_ACTION";
    case RKNPU_NR_SUBMIT: return "RKNPU_SUBMIT";
    case RKNPU_NR_MEM_CREATE: return "RKNPU_MEM_CREATE";
    case RKNPU_NR_MEM_MAP: return "RKNPU_MEM_MAP";
    case RKNPU_NR_MEM_DESTROY: return "RKNPU_MEM_DESTROY";
    case RKNPU_NR_MEM_SYNC: return "RKNPU_MEM_SYNC";
    default: return "RKNPU_?";
    }
}

std::string version_string(uint32_t code) {
    // major * 10000 + minor * 100 + patch (hw-facts 1.1)
    return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

}  // namespace

StatusOr<std::unique_ptr<RknpuDriver>> RknpuDriver::open(std::shared_ptr<IoctlTransport> transport,
                                                         const std::string& node, Variant variant,
                                                         const std::string& soc) {
    const int fd = transport->open(node);
    if (fd < 0) return errno_status(fd, ("open " + node).c_str());
    return std::unique_ptr<RknpuDriver>(new RknpuDriver(std::move(transport), fd, variant, node, soc));
}

RknpuDriver::RknpuDriver(std::shared_ptr<IoctlTransport> transport, int fd, Variant variant, std::string node,
                         std::string soc)
    : transport_(std::move(transport)), fd_(fd), variant_(variant), node_(std::move(node)), soc_(std::move(soc)) {}

RknpuDriver::~RknpuDriver() {
    for (BufferObject& b : free_task_buffers_) (void)destroy_buffer(&b);
    transport_->close(fd_);
}

unsigned long RknpuDriver::command(unsigned nr) const {
    const bool drm = variant_ == Variant::kDrm;
    switch (nr) {
    case RKNPU_NR_ACTION: return drm ? DRM_IOCTL_RKNPU_ACTION : IOCTL_RKNPU_ACTION;
    case RKNPU_NR_SUBMIT: return drm ? DRM_IOCTL_RKNPU_SUBMIT : IOCTL_RKNPU_SUBMIT;
    case RKNPU_NR_MEM_CREATE: return drm ? DRM_IOCTL_RKNPU_MEM_CREATE : IOCTL_RKNPU_MEM_CREATE;
    case RKNPU_NR_MEM_MAP: return drm ? DRM_IOCTL_RKNPU_MEM_MAP : IOCTL_RKNPU_MEM_MAP;
    case RKNPU_NR_MEM_DESTROY: return drm ? DRM_IOCTL_RKNPU_MEM_DESTROY : IOCTL_RKNPU_MEM_DESTROY;
    case RKNPU_NR_MEM_SYNC: return drm ? DRM_IOCTL_RKNPU_MEM_SYNC : IOCTL_RKNPU_MEM_SYNC;
    default: return 0;
    }
}

Status RknpuDriver::call(unsigned nr, void* arg, const char* what) {
    const int ret = transport_->ioctl(fd_, command(nr), arg);
    if (ret >= 0) return Status::ok();
    return errno_status(ret, what != nullptr ? what : command_name(nr));
}

StatusOr<DriverIdentity> RknpuDriver::identify() {
    DriverIdentity id;
    if (variant_ == Variant::kDrm) {
        RKNN_ASSIGN_OR_RETURN(id, drm_query_version(*transport_, fd_));
    } else {
        // The misc device answers no DRM ioctls; its version is an action.
        RKNN_ASSIGN_OR_RETURN(const uint32_t code, action(Action::kGetDrvVersion));
        id.name = "rknpu";
        id.version = version_string(code);
    }
    auto hw_version = action(Action::kGetHwVersion);
    if (hw_version.is_ok()) id.hw_version = hw_version.value();
    id.soc = soc_;
    id.node = node_;
    return id;
}

StatusOr<BufferObject> RknpuDriver::mem_create(uint32_t handle, const BufferRequest& request) {
    rknpu_mem_create args{};
    args.handle = handle;
    args.flags = request.flags;
    args.size = request.size;
    args.sram_size = request.sram_limit;
    args.iommu_domain_id = request.iommu_domain;
    RKNN_RETURN_IF_ERROR(call(RKNPU_NR_MEM_CREATE, &args, nullptr));
    BufferObject bo;
    bo.handle = args.handle;
    bo.size = args.size;
    bo.dma_addr = args.dma_addr;
    bo.obj_addr = args.obj_addr;
    bo.flags = request.flags;
    bo.sram_size = args.sram_size;
    bo.iommu_domain = args.iommu_domain_id;
    return bo;
}

StatusOr<BufferObject> RknpuDriver::create_buffer(const BufferRequest& request) {
    return mem_create(0, request);
}

Status RknpuDriver::map_buffer(BufferObject* buffer) {
    if (buffer->host != nullptr) return Status::ok();
    int map_fd = static_cast<int>(buffer->handle);  // misc: the dma-buf fd
    uint64_t offset = 0;
    if (variant_ == Variant::kDrm) {
        rknpu_mem_map args{};
        args.handle = buffer->handle;
        RKNN_RETURN_IF_ERROR(call(RKNPU_NR_MEM_MAP, &args, nullptr));
        map_fd = fd_;
        offset = args.offset;
    }
    buffer->mmap_offset = offset;
    void* host = nullptr;
    const int ret = transport_->mmap(map_fd, offset, buffer->size, &host);
    if (ret < 0) return errno_status(ret, "mmap");
    buffer->host = static_cast<uint8_t*>(host);
    return Status::ok();
}

Status RknpuDriver::unmap_buffer(BufferObject* buffer) {
    if (buffer->host == nullptr) return Status::ok();
    const int ret = transport_->munmap(buffer->host, buffer->size);
    buffer->host = nullptr;
    return ret < 0 ? errno_status(ret, "munmap") : Status::ok();
}

Status RknpuDriver::destroy_buffer(BufferObject* buffer) {
    Status unmapped = unmap_buffer(buffer);
    rknpu_mem_destroy args{};
    args.handle = buffer->handle;
    args.obj_addr = buffer->obj_addr;
    Status destroyed = call(RKNPU_NR_MEM_DESTROY, &args, nullptr);
    if (variant_ == Variant::kMisc) transport_->close(static_cast<int>(buffer->handle));  // our dma-buf fd
    *buffer = BufferObject{};
    return destroyed.is_ok() ? unmapped : destroyed;
}

Status RknpuDriver::sync_buffer(const BufferObject& buffer, SyncDirection direction, uint64_t offset, uint64_t size) {
    rknpu_mem_sync args{};
    args.flags = direction == SyncDirection::kToDevice ? RKNPU_MEM_SYNC_TO_DEVICE : RKNPU_MEM_SYNC_FROM_DEVICE;
    args.obj_addr = buffer.obj_addr;
    args.offset = offset;
    args.size = size;
    return call(RKNPU_NR_MEM_SYNC, &args, nullptr);
}

StatusOr<BufferObject> RknpuDriver::import_dmabuf(int fd) {
    BufferRequest query;  // size and flags are not used for an import
    if (variant_ == Variant::kMisc) {
        // MEM_CREATE with handle = the fd imports it; keep a copy of the fd so
        // the buffer owns its handle like an allocated one.
        const int copy = transport_->dup(fd);
        if (copy < 0) return errno_status(copy, "dup");
        auto bo = mem_create(static_cast<uint32_t>(copy), query);
        if (!bo.is_ok()) {
            transport_->close(copy);
            return bo.status();
        }
        bo->imported = true;
        return bo;
    }
    // DRM: PRIME gives a handle; MEM_CREATE with an existing handle allocates
    // nothing and reports the object (hw-facts 1.5).
    RKNN_ASSIGN_OR_RETURN(const uint32_t handle, drm_prime_import(*transport_, fd_, fd));
    auto bo = mem_create(handle, query);
    if (!bo.is_ok()) {
        (void)drm_close_handle(*transport_, fd_, handle);
        return bo.status();
    }
    bo->imported = true;  // flags unknown: MEM_CREATE does not report them
    return bo;
}

StatusOr<int> RknpuDriver::export_dmabuf(const BufferObject& buffer) {
    if (variant_ == Variant::kMisc) {
        const int copy = transport_->dup(static_cast<int>(buffer.handle));
        if (copy < 0) return errno_status(copy, "dup");
        return copy;
    }
    return drm_prime_export(*transport_, fd_, buffer.handle);
}

StatusOr<BufferObject> RknpuDriver::take_task_buffer(size_t tasks) {
    const uint64_t needed = std::max<uint64_t>(tasks, 1) * sizeof(rknpu_task);
    {
        std::lock_guard<std::mutex> lock(task_buffers_mu_);
        for (size_t i = 0; i < free_task_buffers_.size(); ++i) {
            if (free_task_buffers_[i].size < needed) continue;
            const BufferObject found = free_task_buffers_[i];
            free_task_buffers_.erase(free_task_buffers_.begin() + static_cast<std::ptrdiff_t>(i));
            return found;
        }
    }
    BufferRequest request;
    request.size = (needed + kPage - 1) / kPage * kPage;
    request.flags = kTaskBufferFlags | (variant_ == Variant::kDrm ? buffer_flag::kNonContiguous : 0u);
    RKNN_ASSIGN_OR_RETURN(BufferObject buffer, create_buffer(request));
    Status mapped = map_buffer(&buffer);
    if (!mapped.is_ok()) {
        (void)destroy_buffer(&buffer);
        return mapped.with_context("task buffer");
    }
    return buffer;
}

void RknpuDriver::return_task_buffer(const BufferObject& buffer) {
    std::lock_guard<std::mutex> lock(task_buffers_mu_);
    free_task_buffers_.push_back(buffer);
}

Status RknpuDriver::fill_submit(const SubmitRequest& request, const BufferObject& task_buffer, rknpu_submit* s) const {
    const auto total = static_cast<uint32_t>(request.tasks.size());
    s->flags = RKNPU_JOB_PC;
    if (request.flags & submit_flag::kPingPong) s->flags |= RKNPU_JOB_PINGPONG;
    if (request.flags & submit_flag::kFenceIn) s->flags |= RKNPU_JOB_FENCE_IN;
    if (request.flags & submit_flag::kFenceOut) s->flags |= RKNPU_JOB_FENCE_OUT;
    s->timeout = request.timeout_ms;
    s->priority = request.priority;
    s->task_obj_addr = task_buffer.obj_addr;
    s->iommu_domain_id = static_cast<uint32_t>(request.iommu_domain);
    s->task_base_addr = request.task_base_addr;
    s->core_mask = request.core_mask;
    s->fence_fd = (request.flags & submit_flag::kFenceIn) ? request.fence_in : -1;

    bool ranges_given = false;
    for (const TaskRange& r : request.core_tasks) ranges_given = ranges_given || r.count > 0;
    if (request.core_mask == 0) {
        if (ranges_given) return RKNN_INVALID_ARGUMENT("per-core task ranges need an explicit core mask");
        // The kernel picks a core and reads that core's entry: fill all three.
        s->task_start = 0;
        s->task_number = total;
        for (int i = 0; i < kMaxCores; ++i) s->subcore_task[i] = rknpu_subcore_task{0, total};
        return Status::ok();
    }
    const size_t cores = std::bitset<kMaxCores>(request.core_mask).count();
    if (!ranges_given && cores > 1) return RKNN_INVALID_ARGUMENT("core mask 0x%x needs per-core task ranges", request.core_mask);
    uint32_t sum = 0;
    for (int core = 0; core < kMaxCores; ++core) {
        if (!(request.core_mask & (1u << core))) continue;
        const TaskRange r = ranges_given ? request.core_tasks[static_cast<size_t>(core)] : TaskRange{0, total};
        if (r.count == 0 || uint64_t{r.start} + r.count > total) {
            return RKNN_INVALID_ARGUMENT("core %d: task range %u+%u is empty or outside the %u tasks", core, r.start,
                                         r.count, total);
        }
        // hw-facts 1.7: one or two cores read entry [core], three read [core + 2].
        s->subcore_task[cores == 3 ? core + 2 : core] = rknpu_subcore_task{r.start, r.count};
        if (cores == 1) s->task_start = r.start;  // single-core SoCs read these
        sum += r.count;
    }
    s->task_number = sum;
    return Status::ok();
}

StatusOr<SubmitResult> RknpuDriver::submit(const SubmitRequest& request) {
    for (const Task& t : request.tasks) {
        if (t.regcmd_words < RKNPU_PC_DATA_EXTRA_AMOUNT) {
            return RKNN_INVALID_ARGUMENT("a task of %u regcmd words has no room for the 4-word tail", t.regcmd_words);
        }
    }
    RKNN_ASSIGN_OR_RETURN(const BufferObject task_buffer, take_task_buffer(request.tasks.size()));
    // Back to the free list however this submit ends.
    struct Return {
        RknpuDriver* driver;
        const BufferObject& buffer;
        ~Return() { driver->return_task_buffer(buffer); }
    } give_back{this, task_buffer};
    for (size_t i = 0; i < request.tasks.size(); ++i) {
        const Task& t = request.tasks[i];
        rknpu_task record{};
        record.op_idx = t.op_idx;
        record.enable_mask = t.enable_mask;
        record.int_mask = t.int_mask;
        record.int_clear = RKNPU_INT_CLEAR_ALL;
        record.regcfg_amount = t.regcmd_words - RKNPU_PC_DATA_EXTRA_AMOUNT;  // the kernel adds the tail back
        record.regcmd_addr = t.regcmd_addr;
        std::memcpy(task_buffer.host + i * sizeof(rknpu_task), &record, sizeof(record));
    }
    rknpu_submit args{};
    RKNN_RETURN_IF_ERROR(fill_submit(request, task_buffer, &args));
    const int ret = transport_->ioctl(fd_, command(RKNPU_NR_SUBMIT), &args);
    if (ret < 0) {
        return errno_status(ret, "RKNPU_SUBMIT")
            .with_context("submit of " + std::to_string(args.task_number) + " tasks (" +
                          std::to_string(args.task_counter) + " done)");
    }
    SubmitResult result;
    result.task_counter = args.task_counter;
    result.hw_elapse_ns = args.hw_elapse_time;
    result.core_mask = args.core_mask;
    if (request.flags & submit_flag::kFenceOut) result.fence_out = args.fence_fd;
    return result;
}

StatusOr<uint32_t> RknpuDriver::action(Action action, uint32_t value) {
    rknpu_action args{};
    args.flags = static_cast<uint32_t>(action);
    args.value = value;
    RKNN_RETURN_IF_ERROR(call(RKNPU_NR_ACTION, &args, nullptr));
    return args.value;
}

}  // namespace rknn::driver
