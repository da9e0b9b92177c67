#include "driver/rocket_driver.h"

#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include "driver/drm_common.h"
#include "driver/errno_status.h"
#include "rocket_accel.h"

namespace rknn::driver {

namespace {

int64_t monotonic_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

StatusOr<std::unique_ptr<RocketDriver>> RocketDriver::open(std::shared_ptr<IoctlTransport> transport,
                                                           const std::string& node, const std::string& soc) {
    const int fd = transport->open(node);
    if (fd < 0) return errno_status(fd, ("open " + node).c_str());
    return std::unique_ptr<RocketDriver>(new RocketDriver(std::move(transport), fd, node, soc));
}

RocketDriver::RocketDriver(std::shared_ptr<IoctlTransport> transport, int fd, std::string node, std::string soc)
    : transport_(std::move(transport)), fd_(fd), node_(std::move(node)), soc_(std::move(soc)) {}

RocketDriver::~RocketDriver() { transport_->close(fd_); }

StatusOr<DriverIdentity> RocketDriver::identify() {
    RKNN_ASSIGN_OR_RETURN(DriverIdentity id, drm_query_version(*transport_, fd_));
    id.soc = soc_;
    id.node = node_;
    return id;  // rocket does not report the NPU's version to user space
}

StatusOr<BufferObject> RocketDriver::create_buffer(const BufferRequest& request) {
    if (request.size > std::numeric_limits<uint32_t>::max()) {
        return RKNN_INVALID_ARGUMENT("rocket buffers are limited to 4 GiB (CREATE_BO.size is 32-bit)");
    }
    if (request.iommu_domain != 0) {
        return RKNN_INVALID_ARGUMENT("rocket has no IOMMU domains (every fd has its own address space)");
    }
    drm_rocket_create_bo args{};
    args.size = static_cast<uint32_t>(request.size);
    const int ret = transport_->ioctl(fd_, DRM_IOCTL_ROCKET_CREATE_BO, &args);
    if (ret < 0) return errno_status(ret, "DRM_IOCTL_ROCKET_CREATE_BO");
    BufferObject bo;
    bo.handle = args.handle;
    bo.size = (request.size + 4095) / 4096 * 4096;  // shmem objects are whole pages
    bo.dma_addr = args.dma_address;
    bo.mmap_offset = args.offset;
    bo.flags = buffer_flag::kCacheable;
    return bo;
}

Status RocketDriver::map_buffer(BufferObject* buffer) {
    if (buffer->host != nullptr) return Status::ok();
    void* host = nullptr;
    const int ret = transport_->mmap(fd_, buffer->mmap_offset, buffer->size, &host);
    if (ret < 0) return errno_status(ret, "mmap");
    buffer->host = static_cast<uint8_t*>(host);
    return Status::ok();
}

Status RocketDriver::unmap_buffer(BufferObject* buffer) {
    if (buffer->host == nullptr) return Status::ok();
    const int ret = transport_->munmap(buffer->host, buffer->size);
    buffer->host = nullptr;
    return ret < 0 ? errno_status(ret, "munmap") : Status::ok();
}

Status RocketDriver::destroy_buffer(BufferObject* buffer) {
    Status unmapped = unmap_buffer(buffer);
    Status closed = drm_close_handle(*transport_, fd_, buffer->handle);
    *buffer = BufferObject{};
    return closed.is_ok() ? unmapped : closed;
}

Status RocketDriver::sync_buffer(const BufferObject& buffer, SyncDirection direction, uint64_t /*offset*/,
                                 uint64_t /*size*/) {
    if (direction == SyncDirection::kToDevice) {
        drm_rocket_fini_bo args{};
        args.handle = buffer.handle;
        const int ret = transport_->ioctl(fd_, DRM_IOCTL_ROCKET_FINI_BO, &args);
        return ret < 0 ? errno_status(ret, "DRM_IOCTL_ROCKET_FINI_BO") : Status::ok();
    }
    drm_rocket_prep_bo args{};
    args.handle = buffer.handle;
    args.timeout_ns = monotonic_ns() + kPrepTimeoutNs;  // absolute CLOCK_MONOTONIC
    // Success is any value >= 0 (mainline returns the jiffies left).
    const int ret = transport_->ioctl(fd_, DRM_IOCTL_ROCKET_PREP_BO, &args);
    return ret < 0 ? errno_status(ret, "DRM_IOCTL_ROCKET_PREP_BO") : Status::ok();
}

StatusOr<BufferObject> RocketDriver::import_dmabuf(int /*fd*/) {
    return Status(StatusCode::kUnimplemented,
                  "rocket cannot import a dma-buf for the NPU: no ioctl reports an imported buffer's NPU address");
}

StatusOr<int> RocketDriver::export_dmabuf(const BufferObject& buffer) {
    return drm_prime_export(*transport_, fd_, buffer.handle);
}

StatusOr<SubmitResult> RocketDriver::submit(const SubmitRequest& request) {
    if (request.flags & (submit_flag::kFenceIn | submit_flag::kFenceOut)) {
        return Status(StatusCode::kUnimplemented, "rocket has no explicit fences; synchronisation is implicit per buffer");
    }
    if (request.iommu_domain != 0) return RKNN_INVALID_ARGUMENT("rocket has no IOMMU domains");
    // kPingPong needs nothing: rocket always runs with TASK_PP_EN.
    std::vector<drm_rocket_task> tasks;
    for (const Task& t : request.tasks) {
        if (t.regcmd_addr > std::numeric_limits<uint32_t>::max()) {
            return RKNN_INVALID_ARGUMENT("rocket takes 32-bit regcmd addresses; 0x%llx is above 4 GiB",
                                         static_cast<unsigned long long>(t.regcmd_addr));
        }
        tasks.push_back(drm_rocket_task{static_cast<uint32_t>(t.regcmd_addr), t.regcmd_words});
    }
    std::vector<TaskRange> ranges;
    for (int core = 0; core < kMaxCores; ++core) {
        const TaskRange& r = request.core_tasks[static_cast<size_t>(core)];
        if (!(request.core_mask & (1u << core)) || r.count == 0) continue;
        if (uint64_t{r.start} + r.count > tasks.size()) {
            return RKNN_INVALID_ARGUMENT("core %d: task range %u+%u is outside the %zu tasks", core, r.start, r.count,
                                         tasks.size());
        }
        ranges.push_back(r);
    }
    if (ranges.empty()) ranges.push_back(TaskRange{0, static_cast<uint32_t>(tasks.size())});
    std::vector<drm_rocket_job> jobs;
    for (const TaskRange& r : ranges) {
        drm_rocket_job job{};
        job.tasks = reinterpret_cast<uintptr_t>(tasks.data() + r.start);
        job.task_count = r.count;
        job.task_struct_size = sizeof(drm_rocket_task);
        job.in_bo_handles = reinterpret_cast<uintptr_t>(request.in_handles.data());
        job.in_bo_handle_count = static_cast<uint32_t>(request.in_handles.size());
        job.out_bo_handles = reinterpret_cast<uintptr_t>(request.out_handles.data());
        job.out_bo_handle_count = static_cast<uint32_t>(request.out_handles.size());
        jobs.push_back(job);
    }
    drm_rocket_submit args{};
    args.jobs = reinterpret_cast<uintptr_t>(jobs.data());
    args.job_count = static_cast<uint32_t>(jobs.size());
    args.job_struct_size = sizeof(drm_rocket_job);
    const int ret = transport_->ioctl(fd_, DRM_IOCTL_ROCKET_SUBMIT, &args);
    if (ret < 0) return errno_status(ret, "DRM_IOCTL_ROCKET_SUBMIT");
    SubmitResult result;
    for (const TaskRange& r : ranges) result.task_counter += r.count;
    return result;
}

StatusOr<uint32_t> RocketDriver::action(Action /*action*/, uint32_t /*value*/) {
    return Status(StatusCode::kUnimplemented, "the rocket driver has no actions");
}

}  // namespace rknn::driver
