// The mock kernel's job runner: programs the emulated NPU (NpuDevice) with
// the MMIO sequences the real drivers use and services its "interrupts" the
// way they do.
//
// Vendor rknpu (hw-facts 1.6), per core and per chunk of at most
// max_tasks_per_kick tasks:
//   BASE_ADDRESS <- 1; on multi-core SoCs CNA and CORE S_POINTER <- 0xE with
//   the core index at bit 28; BASE_ADDRESS <- first task's regcmd;
//   REGISTER_AMOUNTS <- (regcfg_amount + 4 + scale - 1) / scale - 1;
//   INT_MASK <- last task's int_mask; INT_CLEAR <- first task's int_mask;
//   TASK_CON <- ((0x6 | pingpong) << task_number_bits) | count;
//   TASK_DMA_BASE_ADDR <- task_base_addr; OPERATION_ENABLE <- 1, then 0.
// The interrupt is accepted when fuzz_pairs(INT_STATUS) equals the last
// task's int_mask; otherwise it is logged, cleared and ignored (the job then
// runs into its timeout). Accepted: INT_CLEAR <- 0x1ffff, next chunk.
//
// Rocket (hw-facts 2.3), one task per kick: BASE_ADDRESS <- 1; CNA/CORE
// S_POINTER <- 0xE | core << 28; BASE_ADDRESS <- regcmd; REGISTER_AMOUNTS <-
// (regcmd_count + 1) / 2 - 1; INT_MASK and INT_CLEAR <- DPU_0 | DPU_1;
// TASK_CON <- 0x7001; TASK_DMA_BASE_ADDR <- 0; OPERATION_ENABLE <- 1. The
// interrupt counts only with DPU_0 or DPU_1 in RAW_STATUS; then INT_MASK <- 0,
// OPERATION_ENABLE <- 0, INT_CLEAR <- 0x1ffff and the next task is kicked.
//
// Failures: an emulator fault ends the job at once with -EFAULT (IOMMU) or
// -EIO (anything else) and logs the emulator's message; no accepted
// interrupt within the timeout gives -ETIMEDOUT with the task count read from
// TASK_STATUS. In both cases the job's cores are soft-reset (NpuDevice::reset)
// so the next job starts clean. A device reset (RKNPU_ACT_RESET) while a job
// runs ends it at once with -EINVAL, as the vendor driver wakes its waiters
// and fails every job that was not done.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "driver/mock/fault_injector.h"
#include "emulator/npu_device.h"
#include "hw/soc_profile.h"

namespace rknn::driver::mock {

// One PC programming: a run of tasks chained in memory.
struct PcChunk {
    uint32_t regcmd_addr = 0;     // the first task's stream
    uint32_t amount = 0;          // REGISTER_AMOUNTS value
    uint32_t first_int_mask = 0;
    uint32_t last_int_mask = 0;
    uint32_t tasks = 0;
};

struct CoreJob {
    int core = 0;
    std::vector<PcChunk> chunks;
};

struct KickParams {
    bool pingpong = false;
    uint32_t task_base_addr = 0;
};

constexpr int kMaxMockCores = 3;

struct JobOutcome {
    int err = 0;                  // 0 or a negative errno
    uint32_t tasks_done = 0;
    int64_t elapsed_ns = 0;
    std::array<uint32_t, kMaxMockCores> int_status{};  // accepted (fuzzed) status per core
};

class JobRunner {
public:
    enum class Protocol { kVendor, kRocket };

    // Installs itself as the device's stop handler. The device calls it from
    // its worker threads, so the device must be destroyed (its threads
    // joined) before the runner.
    JobRunner(emulator::NpuDevice& npu, const hw::SocProfile& soc);
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    // Runs the job on its cores and waits for it. An empty `cores` models a
    // job the driver queues but never commits: it simply times out.
    JobOutcome run(Protocol protocol, const std::vector<CoreJob>& cores, const KickParams& params,
                   uint32_t timeout_ms, const JobFaults& faults);

    // Soft reset of every core (RKNPU_ACT_RESET); running jobs fail.
    void reset_all();

private:
    struct CoreState {
        const CoreJob* job = nullptr;
        size_t next = 0;          // next chunk to kick
        bool outstanding = false; // kicked, stop not yet seen
        bool done = false;
        bool hang = false;        // an injected hang: no stop will come
        uint32_t tasks_done = 0;
    };
    struct Stop {
        int core;
        emulator::ProgramResult result;
    };

    void on_stop(int core, const emulator::ProgramResult& result);
    void kick(Protocol protocol, CoreState* state, const KickParams& params);
    bool service(Protocol protocol, CoreState* state, JobOutcome* outcome);
    enum class Wait { kStop, kTimeout, kDeviceReset };
    // The next stop of one of `states`' cores; kDeviceReset once reset_all()
    // has run since the job began (reset generation `since`).
    Wait next_stop(const std::vector<CoreState>& states, std::chrono::steady_clock::time_point deadline,
                   uint64_t since, Stop* out);
    void settle(std::vector<CoreState>* states);
    void log_timeout(const std::vector<CoreState>& states, uint32_t timeout_ms);

    emulator::NpuDevice& npu_;
    const hw::SocProfile& soc_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Stop> stops_;
    uint64_t resets_ = 0;  // reset_all() calls so far
};

}  // namespace rknn::driver::mock
