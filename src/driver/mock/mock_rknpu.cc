#include "driver/mock/mock_rknpu.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <bitset>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "base/log.h"
#include "driver/mock/ioctl_args.h"
#include "driver/mock/mock_fence.h"
#include "hw/regcmd.h"

namespace rknn::driver::mock {

namespace {

constexpr unsigned kDrmCommandEnd = 0xa0;  // DRM_COMMAND_END: driver ioctls are 0x40..0x9f

// The bandwidth-priority registers exist on RK356x only (hw-facts 1.4).
bool has_bw_priority(const hw::SocProfile& soc) { return std::string(soc.name).rfind("rk356", 0) == 0; }

}  // namespace

const DrmIdentity RknpuFile::kIdentity{0, 9, 8, "rknpu", "20240828", "RKNPU driver"};

RknpuFile::~RknpuFile() = default;

int RknpuFile::ioctl(unsigned long cmd, void* arg) {
    // The misc device switches on _IOC_NR alone (hw-facts 1.1), so even a DRM
    // command number lands on one of its six handlers.
    if (misc_) return dispatch_driver(_IOC_NR(cmd), cmd, arg);
    const unsigned nr = _IOC_NR(cmd);
    if (nr >= RKNPU_DRM_COMMAND_BASE && nr < kDrmCommandEnd) {
        return dispatch_driver(nr - RKNPU_DRM_COMMAND_BASE, cmd, arg);
    }
    return dispatch_generic(cmd, arg);
}

int RknpuFile::dispatch_driver(unsigned nr, unsigned long cmd, void* arg) {
    auto call = [&](auto kernel_cmd, auto* tag, auto&& handler) {
        using T = std::remove_pointer_t<decltype(tag)>;
        return misc_ ? misc_call<T>(arg, handler) : drm_call<T>(cmd, kernel_cmd, arg, handler);
    };
    switch (nr) {
    case RKNPU_NR_ACTION:
        return call(DRM_IOCTL_RKNPU_ACTION, static_cast<rknpu_action*>(nullptr),
                    [this](rknpu_action* a) { return action(a); });
    case RKNPU_NR_SUBMIT:
        return call(DRM_IOCTL_RKNPU_SUBMIT, static_cast<rknpu_submit*>(nullptr),
                    [this](rknpu_submit* a) { return submit(a); });
    case RKNPU_NR_MEM_CREATE:
        return call(DRM_IOCTL_RKNPU_MEM_CREATE, static_cast<rknpu_mem_create*>(nullptr),
                    [this](rknpu_mem_create* a) { return mem_create(a); });
    case RKNPU_NR_MEM_MAP:
        return call(DRM_IOCTL_RKNPU_MEM_MAP, static_cast<rknpu_mem_map*>(nullptr),
                    [this](rknpu_mem_map* a) { return mem_map(a); });
    case RKNPU_NR_MEM_DESTROY:
        return call(DRM_IOCTL_RKNPU_MEM_DESTROY, static_cast<rknpu_mem_destroy*>(nullptr),
                    [this](rknpu_mem_destroy* a) { return mem_destroy(a); });
    case RKNPU_NR_MEM_SYNC:
        return call(DRM_IOCTL_RKNPU_MEM_SYNC, static_cast<rknpu_mem_sync*>(nullptr),
                    [this](rknpu_mem_sync* a) { return mem_sync(a); });
    default: return -EINVAL;
    }
}

int RknpuFile::dispatch_generic(unsigned long cmd, void* arg) {
    // A dma-buf from another node becomes a new GEM object of this device,
    // mapped in the current domain; it is not CACHEABLE (hw-facts 1.5).
    auto adopt = [this](const std::shared_ptr<MockObject>& exporter, int* err) -> std::shared_ptr<MockObject> {
        auto object = std::make_shared<MockObject>();
        object->kind = NodeKind::kRknpuDrm;
        object->size = exporter->size;
        object->memory = exporter->memory;
        dev_.objects.add(object);
        if (!map_in_domain(object.get(), dev_.current_domain)) {
            *err = -ENOMEM;
            return nullptr;
        }
        return object;
    };
    return dispatch_generic_drm({kIdentity, handles_, dev_.objects, NodeKind::kRknpuDrm, adopt}, cmd, arg);
}

int RknpuFile::action(rknpu_action* args) {
    const hw::SocProfile& soc = dev_.soc;
    switch (args->flags) {
    case RKNPU_GET_HW_VERSION:
        // VERSION + (VERSION_NUM & 0xffff) of core 0, read from the device.
        args->value = dev_.npu->read(0, hw::reg::PC_VERSION) + (dev_.npu->read(0, hw::reg::PC_VERSION_NUM) & 0xffff);
        return 0;
    case RKNPU_GET_DRV_VERSION: args->value = kDriverVersion; return 0;
    case RKNPU_GET_FREQ: args->value = static_cast<uint32_t>(soc.clock_hz); return 0;
    case RKNPU_GET_VOLT: args->value = soc.voltage_uv; return 0;
    case RKNPU_SET_FREQ:
    case RKNPU_SET_VOLT:
    case RKNPU_POWER_ON:
    case RKNPU_POWER_OFF: return -EINVAL;  // no-ops in 0.9.8 that still fail
    case RKNPU_ACT_RESET: dev_.runner->reset_all(); return 0;
    case RKNPU_GET_BW_PRIORITY:
    case RKNPU_GET_BW_EXPECT:
    case RKNPU_GET_BW_TW:
        if (!has_bw_priority(soc)) return -EINVAL;
        args->value = dev_.bw_registers[(args->flags - RKNPU_GET_BW_PRIORITY) / 2];
        return 0;
    case RKNPU_SET_BW_PRIORITY:
    case RKNPU_SET_BW_EXPECT:
    case RKNPU_SET_BW_TW:
        if (!has_bw_priority(soc)) return -EINVAL;
        dev_.bw_registers[(args->flags - RKNPU_SET_BW_PRIORITY) / 2] = args->value;
        return 0;
    case RKNPU_ACT_CLR_TOTAL_RW_AMOUNT: return 0;
    case RKNPU_GET_DT_WR_AMOUNT:
    case RKNPU_GET_DT_RD_AMOUNT:
    case RKNPU_GET_WT_RD_AMOUNT:
    case RKNPU_GET_TOTAL_RW_AMOUNT:
        // RK3588 has no counters (the driver returns 0); the emulator counts
        // no DMA bytes on any SoC.
        args->value = 0;
        return 0;
    case RKNPU_GET_IOMMU_EN: args->value = dev_.options.iommu ? 1 : 0; return 0;
    case RKNPU_SET_PROC_NICE: return 0;
    case RKNPU_GET_TOTAL_SRAM_SIZE: args->value = static_cast<uint32_t>(dev_.sram.total_bytes()); return 0;
    case RKNPU_GET_FREE_SRAM_SIZE: args->value = static_cast<uint32_t>(dev_.sram.free_bytes()); return 0;
    case RKNPU_GET_IOMMU_DOMAIN_ID: args->value = static_cast<uint32_t>(dev_.current_domain); return 0;
    case RKNPU_SET_IOMMU_DOMAIN_ID:
        if (args->value >= RKNPU_MAX_IOMMU_DOMAIN_NUM) return -EINVAL;
        dev_.current_domain = static_cast<int32_t>(args->value);
        return 0;
    default: return -EINVAL;
    }
}

bool RknpuFile::map_in_domain(MockObject* object, int32_t domain) {
    object->domain = domain;
    dev_.current_domain = domain;  // every memory ioctl switches to its domain
    return object->map_into(dev_.domains[static_cast<size_t>(domain)]);
}

void RknpuFile::report(const MockObject& object, rknpu_mem_create* args) const {
    args->size = object.size;
    args->obj_addr = object.cookie;
    args->dma_addr = object.dma_addr;
    args->sram_size = object.sram_size;
    args->iommu_domain_id = object.domain;
}

int RknpuFile::mem_create(rknpu_mem_create* args) {
    if (misc_) {
        if (args->flags & RKNPU_MEM_NON_CONTIGUOUS) return -EINVAL;  // the DMA heap is contiguous only
        if (static_cast<int32_t>(args->handle) > 0) return import_misc(args);
        return allocate(args);
    }
    if (args->handle != 0) {
        // An existing handle (e.g. from PRIME_FD_TO_HANDLE): report, allocate nothing.
        if (auto existing = handles_.find(args->handle)) {
            report(*existing, args);
            return 0;
        }
    }
    return allocate(args);
}

int RknpuFile::allocate(rknpu_mem_create* args) {
    if (args->size == 0) return -EINVAL;
    if (args->iommu_domain_id < 0 || args->iommu_domain_id >= RKNPU_MAX_IOMMU_DOMAIN_NUM) return -EINVAL;
    uint32_t flags = args->flags & RKNPU_MEM_MASK;
    if (!dev_.options.iommu) flags = (flags & ~RKNPU_MEM_NON_CONTIGUOUS) | RKNPU_MEM_DMA32;
    int err = 0;
    auto object = dev_.allocate(misc_ ? NodeKind::kRknpuMisc : NodeKind::kRknpuDrm, args->size, flags, &err);
    if (!object) return err;
    if (!map_in_domain(object.get(), args->iommu_domain_id)) return -ENOMEM;
    if ((flags & RKNPU_MEM_TRY_ALLOC_SRAM) && dev_.options.iommu && dev_.sram.total_bytes() > 0) {
        // All of the asked-for SRAM part in one run, or none: the rest of the
        // buffer is DDR either way, so the bytes behave the same.
        const uint64_t want = args->sram_size ? std::min(page_align(args->sram_size), object->size) : object->size;
        if (auto offset = dev_.sram.allocate(want)) {
            object->sram = &dev_.sram;
            object->sram_offset = *offset;
            object->sram_size = want;
        }
    }
    if (misc_) {
        // The misc device hands out a dma-buf fd that the caller owns.
        const int fd = ::fcntl(object->memory->memfd(), F_DUPFD_CLOEXEC, 0);
        if (fd < 0) return -errno;
        session_[object->cookie] = object;
        args->handle = static_cast<uint32_t>(fd);
    } else {
        args->handle = handles_.insert(object);
    }
    report(*object, args);
    return 0;
}

int RknpuFile::import_misc(rknpu_mem_create* args) {
    if (args->iommu_domain_id < 0 || args->iommu_domain_id >= RKNPU_MAX_IOMMU_DOMAIN_NUM) return -EINVAL;
    std::shared_ptr<MockObject> exporter;
    const int err = find_dmabuf(dev_.objects, static_cast<int>(args->handle), NodeKind::kRknpuMisc, &exporter);
    if (err != 0) return err;
    auto object = std::make_shared<MockObject>();
    object->kind = NodeKind::kRknpuMisc;
    object->size = exporter->size;
    object->flags = args->flags & RKNPU_MEM_MASK;
    object->memory = exporter->memory;
    dev_.objects.add(object);
    if (!map_in_domain(object.get(), args->iommu_domain_id)) return -ENOMEM;
    session_[object->cookie] = object;
    report(*object, args);  // handle stays the caller's fd
    return 0;
}

int RknpuFile::mem_map(rknpu_mem_map* args) {
    if (misc_) return -EINVAL;  // the misc handler has an empty MEM_MAP case
    auto object = handles_.find(args->handle);
    if (!object) return -EINVAL;
    args->offset = object->mmap_offset;
    return 0;
}

int RknpuFile::mem_destroy(rknpu_mem_destroy* args) {
    if (misc_) return session_.erase(args->obj_addr) > 0 ? 0 : -EINVAL;
    return handles_.erase(args->handle) ? 0 : -EINVAL;
}

std::shared_ptr<MockObject> RknpuFile::lookup_cookie(uint64_t cookie) const {
    if (misc_) {
        auto it = session_.find(cookie);
        return it == session_.end() ? nullptr : it->second;
    }
    auto object = dev_.objects.find_cookie(cookie);
    return object && object->kind == NodeKind::kRknpuDrm ? object : nullptr;
}

int RknpuFile::mem_sync(rknpu_mem_sync* args) {
    auto object = lookup_cookie(args->obj_addr);
    if (!object || !(object->flags & RKNPU_MEM_CACHEABLE)) return -EINVAL;
    if (args->flags & RKNPU_MEM_SYNC_TO_DEVICE) object->memory->sync_to_device(args->offset, args->size);
    if (args->flags & RKNPU_MEM_SYNC_FROM_DEVICE) object->memory->sync_from_device(args->offset, args->size);
    return 0;
}

int RknpuFile::build_job(const rknpu_submit& args, const MockObject& tasks, std::vector<CoreJob>* cores,
                         std::vector<std::pair<int, uint32_t>>* last_tasks) const {
    const hw::SocProfile& soc = dev_.soc;
    std::vector<std::pair<int, rknpu_subcore_task>> ranges;
    if (!soc.multi_core_irqs) {
        ranges.push_back({0, rknpu_subcore_task{args.task_start, args.task_number}});
    } else if (args.core_mask == 0) {
        // Auto: an idle core, which the scheduler picks (run_job); the job
        // reads subcore entry 0 (hw-facts 1.7).
        ranges.push_back({0, args.subcore_task[0]});
    } else {
        const size_t n = std::bitset<32>(args.core_mask).count();
        for (int core = 0; core < soc.num_cores; ++core) {
            if (args.core_mask & (1u << core)) ranges.push_back({core, args.subcore_task[n == 3 ? core + 2 : core]});
        }
    }
    const uint64_t records = tasks.size / sizeof(rknpu_task);
    for (const auto& [core, range] : ranges) {
        if (range.task_number == 0 || uint64_t{range.task_start} + range.task_number > records) {
            RKNN_LOGE("rknpu (mock): core %d task range %u+%u does not fit the task buffer (%llu tasks)", core,
                      range.task_start, range.task_number, static_cast<unsigned long long>(records));
            return -EINVAL;
        }
    }
    if (args.core_mask != 0 && !soc.core_mask_runs(args.core_mask)) {
        RKNN_LOGE("rknpu (mock): unknown core mask 0x%x: the job is never committed", args.core_mask);
        return 0;
    }
    // The driver reads the records through its kernel mapping: the CPU view.
    const uint8_t* base = tasks.memory->cpu();
    for (const auto& [core, range] : ranges) {
        CoreJob job;
        job.core = core;
        for (uint32_t first = 0; first < range.task_number; first += soc.max_tasks_per_kick) {
            const uint32_t count = std::min(range.task_number - first, soc.max_tasks_per_kick);
            rknpu_task head, tail;
            std::memcpy(&head, base + sizeof(rknpu_task) * (range.task_start + first), sizeof(head));
            std::memcpy(&tail, base + sizeof(rknpu_task) * (range.task_start + first + count - 1), sizeof(tail));
            PcChunk chunk;
            chunk.regcmd_addr = static_cast<uint32_t>(head.regcmd_addr);
            chunk.amount = hw::pc_data_amount(head.regcfg_amount, soc.pc_amount_scale);
            chunk.first_int_mask = head.int_mask;
            chunk.last_int_mask = tail.int_mask;
            chunk.tasks = count;
            job.chunks.push_back(chunk);
        }
        cores->push_back(std::move(job));
        last_tasks->push_back({core, range.task_start + range.task_number - 1});
    }
    return 0;
}

int RknpuFile::submit(rknpu_submit* args) {
    const hw::SocProfile& soc = dev_.soc;
    if (args->task_number == 0) return -EINVAL;
    if (args->core_mask > soc.all_cores_mask) return -EINVAL;
    if ((args->flags & (RKNPU_JOB_FENCE_IN | RKNPU_JOB_FENCE_OUT)) && !dev_.options.fences) return -EINVAL;
    if (args->iommu_domain_id >= RKNPU_MAX_IOMMU_DOMAIN_NUM) return -EINVAL;
    auto tasks = lookup_cookie(args->task_obj_addr);
    if (!tasks) {
        RKNN_LOGE("rknpu (mock): submit names no task buffer (obj_addr 0x%llx)",
                  static_cast<unsigned long long>(args->task_obj_addr));
        return -EINVAL;
    }
    if (!(tasks->flags & RKNPU_MEM_KERNEL_MAPPING)) {
        RKNN_LOGE("rknpu (mock): the task buffer has no kernel mapping (RKNPU_MEM_KERNEL_MAPPING)");
        return -EINVAL;
    }
    if (!(args->flags & RKNPU_JOB_PC)) {
        RKNN_LOGE("rknpu (mock): only PC mode jobs are supported (RKNPU_JOB_PC missing)");
        return -EINVAL;
    }
    if (args->flags & RKNPU_JOB_FENCE_IN) {
        const int err = wait_fence(args->fence_fd, args->timeout);
        if (err != 0) return err;
    }
    std::vector<CoreJob> cores;
    std::vector<std::pair<int, uint32_t>> last_tasks;
    const int err = build_job(*args, *tasks, &cores, &last_tasks);
    if (err != 0) return err;
    dev_.current_domain = static_cast<int32_t>(args->iommu_domain_id);
    KickParams params;
    params.pingpong = (args->flags & RKNPU_JOB_PINGPONG) != 0;
    params.task_base_addr = static_cast<uint32_t>(args->task_base_addr);
    const bool any_core = dev_.soc.multi_core_irqs && args->core_mask == 0;
    const JobOutcome outcome = dev_.run_job(*dev_.domains[args->iommu_domain_id], JobRunner::Protocol::kVendor, cores,
                                            params, args->timeout, any_core, args->priority);
    if (any_core && !cores.empty()) {
        last_tasks.front().first = cores.front().core;
        args->core_mask = 1u << cores.front().core;  // the vendor driver writes its choice back
    }
    args->task_counter = outcome.err == 0 ? args->task_number : outcome.tasks_done;
    args->hw_elapse_time = outcome.elapsed_ns;
    if (outcome.err != 0) return outcome.err;
    // The driver stores each core's interrupt status into its last task.
    for (const auto& [core, index] : last_tasks) {
        const uint32_t status = outcome.int_status[static_cast<size_t>(core)];
        std::memcpy(tasks->memory->cpu() + sizeof(rknpu_task) * index + offsetof(rknpu_task, int_status), &status,
                    sizeof(status));
    }
    if (args->flags & RKNPU_JOB_FENCE_OUT) {
        const int fence = make_signalled_fence();
        if (fence < 0) return fence;
        args->fence_fd = fence;
    }
    return 0;
}

int RknpuFile::mmap(uint64_t offset, size_t length, void** out) {
    if (misc_) return -ENODEV;  // buffers are mapped through their dma-buf fds
    auto object = handles_.find_offset(offset);
    if (!object || length == 0 || length > object->size) return -EINVAL;
    void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, object->memory->memfd(), 0);
    if (p == MAP_FAILED) return -errno;
    *out = p;
    return 0;
}

}  // namespace rknn::driver::mock
