#include "driver/mock/mock_device.h"

#include <cerrno>
#include <chrono>

#include "base/log.h"

namespace rknn::driver::mock {

namespace {
thread_local std::unique_lock<std::mutex>* t_held_kernel_lock = nullptr;
}  // namespace

void set_held_kernel_lock(std::unique_lock<std::mutex>* lock) { t_held_kernel_lock = lock; }

KernelLockReleased::KernelLockReleased() : lock_(t_held_kernel_lock) {
    if (lock_ != nullptr) lock_->unlock();
}

KernelLockReleased::~KernelLockReleased() {
    if (lock_ != nullptr) lock_->lock();
}

MockDevice::MockDevice(const hw::SocProfile& soc_profile, const MockOptions& mock_options)
    : soc(soc_profile), options(mock_options), sram(soc_profile.sram_bytes), scheduler(soc_profile.num_cores, &active_space) {
    for (auto& domain : domains) domain = std::make_shared<AddressSpace>();
}

std::shared_ptr<MockObject> MockDevice::allocate(NodeKind kind, uint64_t size, uint32_t flags, int* err) {
    if (faults.take_allocation_failure()) {
        *err = -ENOMEM;
        return nullptr;
    }
    const uint64_t aligned = page_align(size);
    if (aligned == 0 || aligned >= AddressSpace::kLimit) {
        *err = -ENOMEM;
        return nullptr;
    }
    auto memory = MockMemory::create(aligned, (flags & RKNPU_MEM_CACHEABLE) != 0, err);
    if (!memory) return nullptr;
    auto object = std::make_shared<MockObject>();
    object->kind = kind;
    object->size = aligned;
    object->flags = flags;
    object->memory = std::move(memory);
    objects.add(object);
    return object;
}

JobOutcome MockDevice::run_job(AddressSpace& space, JobRunner::Protocol protocol, std::vector<CoreJob>& cores,
                               const KickParams& params, uint32_t timeout_ms, bool any_core, int32_t priority) {
    const JobFaults faults_now = faults.take_job_faults();
    if (FaultInjector::StreamCorrupter corrupt = faults.stream_corrupter()) {
        for (const CoreJob& job : cores)
            for (const PcChunk& chunk : job.chunks) {
                uint64_t len = 0;
                if (uint8_t* stream = space.resolve_to_end(chunk.regcmd_addr, &len)) corrupt(stream, len);
            }
    }
    const KernelLockReleased unlocked;  // other clients' ioctls and jobs go on meanwhile
    if (cores.empty()) return runner->run(protocol, cores, params, timeout_ms, faults_now);  // never committed
    uint32_t mask = 0;
    for (const CoreJob& job : cores) mask |= 1u << job.core;
    // Injected faults reset cores and block mappings: such a job runs alone.
    const bool alone = faults_now.any();
    const uint32_t held = scheduler.acquire(any_core ? 0 : mask, &space, alone, priority);
    if (any_core) {
        int core = 0;
        while (!(held & (1u << core))) ++core;
        cores.front().core = core;
    }
    for (uint64_t addr : faults_now.unmapped) {
        if (!space.block(addr)) RKNN_LOGW("mock: no buffer is mapped at 0x%llx to fault on", static_cast<unsigned long long>(addr));
    }
    if (faults_now.unmap_everything) space.block_all();
    const bool blocked = faults_now.unmap_everything || !faults_now.unmapped.empty();
    // The cores go back however the job ends.
    struct Held {
        MockDevice& device;
        AddressSpace& space;
        uint32_t cores;
        bool blocked;
        uint64_t job = 0;  // the space's number for this job
        std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
        ~Held() {
            space.end_job(job);
            if (blocked) space.unblock_all();
            device.scheduler.release(cores, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now() - start)
                                                .count());
        }
    } hold{*this, space, held, blocked};
    // Buffers another client frees from here on keep their memory and address
    // until this job ends: the emulator reads through pointers it resolved.
    hold.job = space.begin_job();
    return runner->run(protocol, cores, params, timeout_ms, faults_now);
}

}  // namespace rknn::driver::mock
