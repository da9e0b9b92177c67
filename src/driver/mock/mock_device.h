// State shared by every open file of one mock kernel: the SoC, the buffer
// registry, the vendor driver's IOMMU domains and SRAM pool, the injected
// faults and the emulated NPU with its job runner.
//
// Everything here is touched under the mock kernel's lock, except
// `active_space` and `scheduler`: a SUBMIT lets go of the lock while its job
// waits for its cores and runs (KernelLockReleased), so that jobs on other
// cores and other clients' ioctls go on meanwhile; the NPU's threads read
// `active_space` through the DmaPort.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "driver/mock/address_space.h"
#include "driver/mock/core_scheduler.h"
#include "driver/mock/fault_injector.h"
#include "driver/mock/job_runner.h"
#include "driver/mock/mock_object.h"
#include "driver/mock/sram_pool.h"
#include "emulator/npu_device.h"
#include "hw/soc_profile.h"
#include "rknpu_ioctl.h"

namespace rknn::driver::mock {

struct MockOptions {
    bool threaded = true;                  // one NpuDevice worker thread per core
    bool strict = true;                    // the emulator rejects malformed streams
    bool fences = true;                    // CONFIG_ROCKCHIP_RKNPU_FENCE: FENCE_IN/OUT accepted
    bool iommu = true;                     // what RKNPU_GET_IOMMU_EN reports (SRAM needs it)
    uint32_t rocket_job_timeout_ms = 500;  // rocket's drm_sched job timeout
    // Mainline rocket's SUBMIT returns 0 even when a job fails (the per-job
    // result is dropped, hw-facts 2.3). The mock reports the error by default
    // so tests see it; false gives the mainline behaviour (logged only).
    bool rocket_report_job_errors = true;
};

struct MockDevice {
    MockDevice(const hw::SocProfile& soc_profile, const MockOptions& mock_options);

    const hw::SocProfile& soc;
    MockOptions options;
    ObjectTable objects;
    std::array<std::shared_ptr<AddressSpace>, RKNPU_MAX_IOMMU_DOMAIN_NUM> domains;
    int32_t current_domain = 0;
    SramPool sram;
    FaultInjector faults;
    std::array<uint32_t, 3> bw_registers{};  // RK356x bandwidth priority block (+0, +8, +0xc)
    emulator::NpuDevice* npu = nullptr;
    JobRunner* runner = nullptr;
    std::atomic<AddressSpace*> active_space{nullptr};
    CoreScheduler scheduler;

    // A new registered object of `size` bytes (page-aligned here) that is not
    // mapped for the NPU yet. nullptr and *err = -ENOMEM (or the memfd's
    // error) on failure, including an injected one.
    std::shared_ptr<MockObject> allocate(NodeKind kind, uint64_t size, uint32_t flags, int* err);

    // Runs a job in `space` with the next submit's injected faults applied,
    // once the scheduler gives it its cores; `any_core`: the one CoreJob
    // runs on whichever core is idle (its `core` is set to that one).
    JobOutcome run_job(AddressSpace& space, JobRunner::Protocol protocol, std::vector<CoreJob>& cores,
                       const KickParams& params, uint32_t timeout_ms, bool any_core = false, int32_t priority = 0);
};

// The mock kernel's lock as the thread serving an ioctl holds it (nullptr:
// none), so that run_job can let go of it.
void set_held_kernel_lock(std::unique_lock<std::mutex>* lock);
// Unlocks the held kernel lock for its scope, if this thread holds one.
class KernelLockReleased {
public:
    KernelLockReleased();
    ~KernelLockReleased();
    KernelLockReleased(const KernelLockReleased&) = delete;
    KernelLockReleased& operator=(const KernelLockReleased&) = delete;

private:
    std::unique_lock<std::mutex>* lock_;
};

constexpr uint64_t kPageSize = 4096;
inline uint64_t page_align(uint64_t size) { return (size + kPageSize - 1) / kPageSize * kPageSize; }

}  // namespace rknn::driver::mock
