#include "driver/mock/mock_rocket.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "base/log.h"
#include "driver/mock/ioctl_args.h"

namespace rknn::driver::mock {

namespace {

constexpr int64_t kNsPerJiffy = 4000000;  // HZ = 250

int64_t monotonic_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

// Mainline's drm_driver sets no version numbers and (since 6.14) no date.
const DrmIdentity RocketFile::kIdentity{0, 0, 0, "rocket", "", "rocket DRM"};

int RocketFile::ioctl(unsigned long cmd, void* arg) {
    switch (_IOC_NR(cmd)) {
    case _IOC_NR(DRM_IOCTL_ROCKET_CREATE_BO):
        return drm_call<drm_rocket_create_bo>(cmd, DRM_IOCTL_ROCKET_CREATE_BO, arg,
                                              [this](drm_rocket_create_bo* a) { return create_bo(a); });
    case _IOC_NR(DRM_IOCTL_ROCKET_SUBMIT):
        return drm_call<drm_rocket_submit>(cmd, DRM_IOCTL_ROCKET_SUBMIT, arg,
                                           [this](drm_rocket_submit* a) { return submit(a); });
    case _IOC_NR(DRM_IOCTL_ROCKET_PREP_BO):
        return drm_call<drm_rocket_prep_bo>(cmd, DRM_IOCTL_ROCKET_PREP_BO, arg,
                                            [this](drm_rocket_prep_bo* a) { return prep_bo(a); });
    case _IOC_NR(DRM_IOCTL_ROCKET_FINI_BO):
        return drm_call<drm_rocket_fini_bo>(cmd, DRM_IOCTL_ROCKET_FINI_BO, arg,
                                            [this](drm_rocket_fini_bo* a) { return fini_bo(a); });
    default:
        return dispatch_generic(cmd, arg);
    }
}

int RocketFile::dispatch_generic(unsigned long cmd, void* arg) {
    // A foreign dma-buf becomes a rocket object mapped in this file's space.
    auto adopt = [this](const std::shared_ptr<MockObject>& exporter, int* err) -> std::shared_ptr<MockObject> {
        auto object = std::make_shared<MockObject>();
        object->kind = NodeKind::kRocket;
        object->size = exporter->size;
        object->flags = RKNPU_MEM_CACHEABLE;
        object->memory = exporter->memory;
        dev_.objects.add(object);
        if (!object->map_into(space_)) {
            *err = -ENOMEM;
            return nullptr;
        }
        return object;
    };
    return dispatch_generic_drm({kIdentity, handles_, dev_.objects, NodeKind::kRocket, adopt}, cmd, arg);
}

int RocketFile::create_bo(drm_rocket_create_bo* args) {
    if (args->size == 0) return -EINVAL;
    int err = 0;
    // shmem objects are cached: the NPU gets its own view (mock_memory.h).
    auto object = dev_.allocate(NodeKind::kRocket, args->size, RKNPU_MEM_CACHEABLE, &err);
    if (!object) return err;
    if (!object->map_into(space_)) return -ENOMEM;
    args->handle = handles_.insert(object);
    args->dma_address = object->dma_addr;
    args->offset = object->mmap_offset;
    return 0;
}

int RocketFile::prep_bo(drm_rocket_prep_bo* args) {
    if (args->reserved != 0) return -EINVAL;
    auto object = handles_.find(args->handle);
    if (!object) return -ENOENT;
    // Mock jobs finish inside SUBMIT, so there is never a writer to wait for.
    object->memory->sync_from_device(0, object->size);
    const int64_t left = (args->timeout_ns - monotonic_ns()) / kNsPerJiffy;
    return left > 1 ? static_cast<int>(std::min<int64_t>(left, 1 << 30)) : 1;
}

int RocketFile::fini_bo(drm_rocket_fini_bo* args) {
    if (args->reserved != 0) return -EINVAL;
    auto object = handles_.find(args->handle);
    if (!object) return -ENOENT;
    object->memory->sync_to_device(0, object->size);
    return 0;
}

int RocketFile::check_handles(uint64_t pointer, uint32_t count) const {
    if (count == 0) return 0;
    if (pointer == 0) return -EFAULT;
    const auto* handles = reinterpret_cast<const uint32_t*>(static_cast<uintptr_t>(pointer));
    for (uint32_t i = 0; i < count; ++i) {
        if (!handles_.find(handles[i])) return -ENOENT;
    }
    return 0;
}

int RocketFile::submit_job(const drm_rocket_job& job) {
    if (job.task_struct_size < sizeof(drm_rocket_task) || job.task_count == 0) return -EINVAL;
    if (job.tasks == 0) return -EFAULT;
    int err = check_handles(job.in_bo_handles, job.in_bo_handle_count);
    if (err == 0) err = check_handles(job.out_bo_handles, job.out_bo_handle_count);
    if (err != 0) return err;
    // Arrays are read with the caller's stride, so newer userspace with
    // larger structs keeps working.
    const auto* bytes = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(job.tasks));
    CoreJob core_job;
    core_job.core = next_core_;
    for (uint32_t i = 0; i < job.task_count; ++i) {
        drm_rocket_task task;
        std::memcpy(&task, bytes + static_cast<size_t>(i) * job.task_struct_size, sizeof(task));
        if (task.regcmd_count == 0) return -EINVAL;
        PcChunk chunk;
        chunk.regcmd_addr = task.regcmd;
        chunk.amount = (task.regcmd_count + 1) / 2 - 1;  // rocket's formula: the count includes the tail
        chunk.tasks = 1;
        core_job.chunks.push_back(chunk);
    }
    // The scheduler spreads jobs over the cores.
    next_core_ = (next_core_ + 1) % dev_.soc.num_cores;
    std::vector<CoreJob> cores{std::move(core_job)};
    const JobOutcome outcome = dev_.run_job(*space_, JobRunner::Protocol::kRocket, cores, KickParams{},
                                            dev_.options.rocket_job_timeout_ms);
    if (outcome.err != 0) {
        RKNN_LOGE("rocket (mock): job failed (errno %d) after %u of %u tasks", -outcome.err, outcome.tasks_done,
                  job.task_count);
        if (dev_.options.rocket_report_job_errors) return outcome.err;
    }
    return 0;
}

int RocketFile::submit(drm_rocket_submit* args) {
    if (args->reserved != 0 || args->job_struct_size < sizeof(drm_rocket_job)) return -EINVAL;
    if (args->job_count > 0 && args->jobs == 0) return -EFAULT;
    const auto* bytes = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(args->jobs));
    for (uint32_t i = 0; i < args->job_count; ++i) {
        drm_rocket_job job;
        std::memcpy(&job, bytes + static_cast<size_t>(i) * args->job_struct_size, sizeof(job));
        const int err = submit_job(job);
        if (err != 0) return err;
    }
    return 0;
}

int RocketFile::mmap(uint64_t offset, size_t length, void** out) {
    auto object = handles_.find_offset(offset);
    if (!object || length == 0 || length > object->size) return -EINVAL;
    void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, object->memory->memfd(), 0);
    if (p == MAP_FAILED) return -errno;
    *out = p;
    return 0;
}

}  // namespace rknn::driver::mock
