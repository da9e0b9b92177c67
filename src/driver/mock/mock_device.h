// State shared by every open file of one mock kernel: the SoC, the buffer
// registry, the vendor driver's IOMMU domains and SRAM pool, the injected
// faults and the emulated NPU with its job runner.
//
// Everything here is touched under the mock kernel's lock, except
// `active_space`: the NPU's worker threads read it (through the DmaPort)
// while the thread that holds the lock waits for the job.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "driver/mock/address_space.h"
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

    // A new registered object of `size` bytes (page-aligned here) that is not
    // mapped for the NPU yet. nullptr and *err = -ENOMEM (or the memfd's
    // error) on failure, including an injected one.
    std::shared_ptr<MockObject> allocate(NodeKind kind, uint64_t size, uint32_t flags, int* err);

    // Runs a job in `space` with the next submit's injected faults applied.
    JobOutcome run_job(AddressSpace& space, JobRunner::Protocol protocol, const std::vector<CoreJob>& cores,
                       const KickParams& params, uint32_t timeout_ms);
};

constexpr uint64_t kPageSize = 4096;
inline uint64_t page_align(uint64_t size) { return (size + kPageSize - 1) / kPageSize * kPageSize; }

}  // namespace rknn::driver::mock
