#include "driver/mock/job_runner.h"

#include <cerrno>

#include "base/log.h"
#include "hw/registers.h"

namespace rknn::driver::mock {

namespace r = hw::reg;
using emulator::FaultKind;
using std::chrono::steady_clock;

namespace {

constexpr uint32_t kDpuDone = hw::irq::kDpu0 | hw::irq::kDpu1;
constexpr uint32_t kDmaErrors = hw::irq::kDmaReadError | hw::irq::kDmaWriteError;
// TASK_CON bits above TASK_NUMBER: TASK_PP_EN, TASK_COUNT_CLEAR and the bit
// both drivers always set (hw-facts 1.6, 1.9).
constexpr uint32_t kTaskConCountClear = 0x6;
constexpr uint32_t kTaskConPingPong = 0x1;
// How long to wait for the stop of a program that a reset let finish.
constexpr std::chrono::seconds kSettleWait{10};

}  // namespace

JobRunner::JobRunner(emulator::NpuDevice& npu, const hw::SocProfile& soc) : npu_(npu), soc_(soc) {
    npu_.set_stop_handler([this](int core, const emulator::ProgramResult& result) { on_stop(core, result); });
}

void JobRunner::on_stop(int core, const emulator::ProgramResult& result) {
    // The interrupt line: called from the core's worker thread, from the
    // submitter running a core it claimed, or from inside the kick write in
    // synchronous mode.
    std::lock_guard<std::mutex> lock(mu_);
    stops_.push_back(Stop{core, result});
    cv_.notify_all();
}

void JobRunner::kick(Protocol protocol, CoreState* state, const KickParams& params) {
    const int core = state->job->core;
    const PcChunk& chunk = state->job->chunks[state->next++];
    const uint32_t core_bits = static_cast<uint32_t>(core) << hw::s_pointer::kCoreIndexShift;
    state->outstanding = true;
    npu_.write(core, r::PC_BASE_ADDRESS, 1);  // "switch to slave mode" before reprogramming
    if (protocol == Protocol::kRocket || soc_.multi_core_irqs) {
        // The core index in bits 28-29: without it a task never completes on
        // multi-core parts (hw-facts 3.4).
        npu_.write(core, r::CNA_S_POINTER, hw::s_pointer::kPingPong | core_bits);
        npu_.write(core, r::CORE_S_POINTER, hw::s_pointer::kPingPong | core_bits);
    }
    npu_.write(core, r::PC_BASE_ADDRESS, chunk.regcmd_addr);
    npu_.write(core, r::PC_REGISTER_AMOUNTS, chunk.amount);
    if (protocol == Protocol::kVendor) {
        npu_.write(core, r::PC_INTERRUPT_MASK, chunk.last_int_mask);
        npu_.write(core, r::PC_INTERRUPT_CLEAR, chunk.first_int_mask);
        const uint32_t high = kTaskConCountClear | (params.pingpong ? kTaskConPingPong : 0);
        npu_.write(core, r::PC_TASK_CON, (high << soc_.task_number_bits) | chunk.tasks);
        npu_.write(core, r::PC_TASK_DMA_BASE_ADDR, params.task_base_addr);
        npu_.write(core, r::PC_OPERATION_ENABLE, 1);
        npu_.write(core, r::PC_OPERATION_ENABLE, 0);
        return;
    }
    npu_.write(core, r::PC_INTERRUPT_MASK, kDpuDone);
    npu_.write(core, r::PC_INTERRUPT_CLEAR, kDpuDone);
    // 0x7001 on RK3588: ping-pong, count clear, bit 14, one task.
    const uint32_t high = kTaskConCountClear | kTaskConPingPong;
    npu_.write(core, r::PC_TASK_CON, (high << soc_.task_number_bits) | 1u);
    npu_.write(core, r::PC_TASK_DMA_BASE_ADDR, 0);
    npu_.write(core, r::PC_OPERATION_ENABLE, 1);
}

bool JobRunner::service(Protocol protocol, CoreState* state, JobOutcome* outcome) {
    const int core = state->job->core;
    const PcChunk& chunk = state->job->chunks[state->next - 1];
    if (protocol == Protocol::kVendor) {
        const uint32_t status = hw::irq::fuzz_pairs(npu_.read(core, r::PC_INTERRUPT_STATUS));
        npu_.write(core, r::PC_INTERRUPT_CLEAR, hw::irq::kClearAll);
        if (status != chunk.last_int_mask) {
            RKNN_LOGE("rknpu (mock): core %d interrupt status 0x%x does not match the job's int_mask 0x%x; ignored",
                      core, status, chunk.last_int_mask);
            return false;
        }
        // Workaround: the emulator drops an OP_EN write that reaches a busy
        // core, so the 0 written right after the kick may have been lost and
        // the next 1 would not start a program. A no-op once it is honoured.
        if (npu_.read(core, r::PC_OPERATION_ENABLE) & 1u) npu_.write(core, r::PC_OPERATION_ENABLE, 0);
        outcome->int_status[static_cast<size_t>(core)] = status;
    } else {
        const uint32_t raw = npu_.read(core, r::PC_INTERRUPT_RAW_STATUS);
        if (raw & kDmaErrors) RKNN_LOGW("rocket (mock): core %d raised DMA error bits 0x%x", core, raw & kDmaErrors);
        if (!(raw & kDpuDone)) return false;  // IRQ_NONE: rocket only knows DPU completions
        npu_.write(core, r::PC_INTERRUPT_MASK, 0);
        npu_.write(core, r::PC_OPERATION_ENABLE, 0);
        npu_.write(core, r::PC_INTERRUPT_CLEAR, hw::irq::kClearAll);
    }
    state->tasks_done += chunk.tasks;
    return true;
}

JobRunner::Wait JobRunner::next_stop(const std::vector<CoreState>& states, steady_clock::time_point deadline,
                                     uint64_t since, Stop* out) {
    std::unique_lock<std::mutex> lock(mu_);
    auto pending = [&]() {
        for (auto it = stops_.begin(); it != stops_.end(); ++it) {
            for (const CoreState& s : states) {
                if (s.job->core == it->core && s.outstanding) return it;
            }
        }
        return stops_.end();
    };
    if (!cv_.wait_until(lock, deadline, [&] { return resets_ != since || pending() != stops_.end(); }))
        return Wait::kTimeout;
    if (resets_ != since) return Wait::kDeviceReset;
    auto it = pending();
    *out = *it;
    stops_.erase(it);
    return Wait::kStop;
}

void JobRunner::settle(std::vector<CoreState>* states) {
    // Every core of the failed job is soft-reset. A program still running is
    // allowed to finish first (the model cannot abort mid-task) and its stop
    // is collected, so it cannot be mistaken for the next job's interrupt; a
    // hung one is dropped by the reset and never reports. A kick the waiter
    // claimed and did not run goes to the core's worker first.
    for (CoreState& s : *states) npu_.release(s.job->core);
    for (CoreState& s : *states) npu_.reset(s.job->core);
    const auto limit = steady_clock::now() + kSettleWait;
    for (CoreState& s : *states) {
        if (!s.outstanding || s.hang) continue;
        std::unique_lock<std::mutex> lock(mu_);
        const int core = s.job->core;
        auto has_stop = [&] {
            for (const Stop& stop : stops_) {
                if (stop.core == core) return true;
            }
            return false;
        };
        if (!cv_.wait_until(lock, limit, has_stop)) {
            RKNN_LOGE("rknpu (mock): core %d did not stop after a reset", core);
        }
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (const CoreState& s : *states) {
        for (auto it = stops_.begin(); it != stops_.end();) {
            it = it->core == s.job->core ? stops_.erase(it) : std::next(it);
        }
    }
}

void JobRunner::log_timeout(const std::vector<CoreState>& states, uint32_t timeout_ms) {
    for (const CoreState& s : states) {
        if (s.done) continue;
        const int core = s.job->core;
        RKNN_LOGE("NPU job timed out after %u ms: core %d INT_STATUS=0x%x RAW_STATUS=0x%x TASK_STATUS=%u", timeout_ms,
                  core, npu_.read(core, r::PC_INTERRUPT_STATUS), npu_.read(core, r::PC_INTERRUPT_RAW_STATUS),
                  npu_.read(core, soc_.task_status_offset) & soc_.task_number_mask());
    }
}

JobOutcome JobRunner::run(Protocol protocol, const std::vector<CoreJob>& cores, const KickParams& params,
                          uint32_t timeout_ms, const JobFaults& faults) {
    JobOutcome outcome;
    std::vector<CoreState> states;
    for (const CoreJob& job : cores) {
        if (!job.chunks.empty()) states.push_back(CoreState{&job});
    }
    uint64_t resets_at_start = 0;
    {
        // Stops left over on this job's cores (jobs on other cores run on).
        std::lock_guard<std::mutex> lock(mu_);
        resets_at_start = resets_;
        for (auto it = stops_.begin(); it != stops_.end();) {
            bool mine = false;
            for (const CoreState& s : states) mine = mine || s.job->core == it->core;
            it = mine ? stops_.erase(it) : std::next(it);
        }
    }
    const auto start = steady_clock::now();
    const auto deadline = start + std::chrono::milliseconds(timeout_ms);
    if (faults.hang && !states.empty()) {
        npu_.inject_hang(states.front().job->core);
        states.front().hang = true;
    }
    // This thread would only wait: it runs the first core's programs itself
    // (the other cores' workers run theirs meanwhile). Not when several cores
    // each have more than one chunk: their next kicks would wait for it.
    bool claimable = !states.empty();
    if (states.size() > 1)
        for (const CoreState& s : states) claimable = claimable && s.job->chunks.size() == 1;
    struct Claim {
        emulator::NpuDevice& npu;
        int core;
        ~Claim() {
            if (core >= 0) npu.release(core);
        }
    } claim{npu_, claimable ? states.front().job->core : -1};
    if (claim.core >= 0) npu_.claim(claim.core);
    for (CoreState& s : states) kick(protocol, &s, params);
    if (faults.reset) {
        RKNN_LOGE("NPU (mock): cores reset while a job was running; the job is lost");
        settle(&states);
        outcome.err = -EIO;
        return outcome;
    }
    size_t remaining = states.size();
    while (remaining > 0) {
        // The claimed core's kicked program runs here; one that outlasts the
        // deadline times out as it would on a worker.
        const bool ran_here = claim.core >= 0 && states.front().outstanding && npu_.run_claimed(claim.core);
        Stop stop;
        const Wait waited = ran_here && steady_clock::now() > deadline ? Wait::kTimeout
                                                                       : next_stop(states, deadline, resets_at_start, &stop);
        if (waited == Wait::kDeviceReset) {
            RKNN_LOGE("NPU (mock): the device was reset (RKNPU_ACT_RESET) while this job ran; the job failed");
            for (const CoreState& s : states) outcome.tasks_done += s.tasks_done;
            settle(&states);
            outcome.err = -EINVAL;
            return outcome;
        }
        if (waited == Wait::kTimeout) {
            log_timeout(states, timeout_ms);
            for (const CoreState& s : states) {
                outcome.tasks_done += s.tasks_done;
                if (!s.done) outcome.tasks_done += npu_.read(s.job->core, soc_.task_status_offset) & soc_.task_number_mask();
            }
            settle(&states);
            outcome.err = -ETIMEDOUT;
            return outcome;
        }
        CoreState* state = nullptr;
        for (CoreState& s : states) {
            if (s.job->core == stop.core) state = &s;
        }
        state->outstanding = false;
        if (stop.result.fault != FaultKind::kNone) {
            const bool iommu = stop.result.fault == FaultKind::kIommuRead || stop.result.fault == FaultKind::kIommuWrite;
            RKNN_LOGE("NPU core %d stopped with a fault (%s): %s", stop.core, emulator::fault_kind_name(stop.result.fault),
                      stop.result.message.c_str());
            for (const CoreState& s : states) outcome.tasks_done += s.tasks_done;
            outcome.tasks_done += stop.result.tasks_done;
            settle(&states);
            outcome.err = iommu ? -EFAULT : -EIO;
            return outcome;
        }
        if (!service(protocol, state, &outcome)) continue;  // ignored: wait on (and time out)
        if (state->next < state->job->chunks.size()) {
            kick(protocol, state, params);
        } else {
            state->done = true;
            --remaining;
        }
    }
    for (const CoreState& s : states) outcome.tasks_done += s.tasks_done;
    outcome.elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(steady_clock::now() - start).count();
    if (states.empty()) {
        // Nothing was committed (a core mask the driver does not run): the
        // waiter sleeps until its timeout.
        std::unique_lock<std::mutex> lock(mu_);
        const bool reset = cv_.wait_until(lock, deadline, [&] { return resets_ != resets_at_start; });
        outcome.err = reset ? -EINVAL : -ETIMEDOUT;
        outcome.elapsed_ns = 0;
    }
    return outcome;
}

void JobRunner::reset_all() {
    for (int core = 0; core < npu_.num_cores(); ++core) npu_.reset(core);
    // Counted after the cores are reset: a job that began while they were
    // being reset may have lost its kick, so it fails too (-EINVAL) rather
    // than wait out its timeout.
    std::lock_guard<std::mutex> lock(mu_);
    ++resets_;
    cv_.notify_all();
}

}  // namespace rknn::driver::mock
