// Faults a test can ask the mock kernel for. Each one is used up by the
// operation it breaks, and the driver is usable again afterwards (except
// that what corrupt_streams wrote stays in the client's streams):
//   fail_allocations(n, after)   the next n buffer creations fail (-ENOMEM),
//                                once `after` more have succeeded (the last
//                                call's `after`; the counts add up)
//   hang_next_submit()           the next job's first core never finishes
//                                (NpuDevice::inject_hang): the submit times out
//                                (-ETIMEDOUT) and the core is soft-reset
//   reset_during_next_submit()   all cores are reset while the next job runs:
//                                the job is lost and the submit fails (-EIO)
//   iommu_fault_during_next_submit(addr)
//                                during the next submit the buffer mapped at
//                                `addr` is not mapped for the NPU: its first
//                                access faults (-EFAULT)
//   iommu_fault_everywhere_during_next_submit()
//                                the same for every buffer of the job's space
//                                (a client that does not know the addresses)
//   corrupt_streams(fn)          until cleared, every submit's register-command
//                                streams (from each chunk's first task to the
//                                end of its buffer) go through fn before the
//                                NPU reads them: malformed programs on the
//                                real submit path (the regcmd fuzzer). fn runs
//                                under the kernel's lock (it must not call the
//                                kernel) and on a copy taken at the submit, so
//                                what it captures must outlive the submits
//   delay_job_faults(k)          the job faults armed above go to the submit
//                                after the next k (a fault at submit k of a run)
// The injector also counts what it saw, so that a test can find how many
// submits a run makes and how many buffers an init allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace rknn::driver::mock {

struct JobFaults {
    bool hang = false;
    bool reset = false;
    bool unmap_everything = false;
    std::vector<uint64_t> unmapped;  // device addresses to fault on

    bool any() const { return hang || reset || unmap_everything || !unmapped.empty(); }
};

class FaultInjector {
public:
    void fail_allocations(int count, int after = 0) {
        std::lock_guard<std::mutex> lock(mu_);
        alloc_failures_ += count;
        allocs_before_failing_ = after;
    }
    void hang_next_submit() {
        std::lock_guard<std::mutex> lock(mu_);
        next_job_.hang = true;
    }
    void reset_during_next_submit() {
        std::lock_guard<std::mutex> lock(mu_);
        next_job_.reset = true;
    }
    void iommu_fault_during_next_submit(uint64_t dma_addr) {
        std::lock_guard<std::mutex> lock(mu_);
        next_job_.unmapped.push_back(dma_addr);
    }
    void iommu_fault_everywhere_during_next_submit() {
        std::lock_guard<std::mutex> lock(mu_);
        next_job_.unmap_everything = true;
    }
    using StreamCorrupter = std::function<void(uint8_t* stream, size_t bytes)>;
    void corrupt_streams(StreamCorrupter corrupter) {
        std::lock_guard<std::mutex> lock(mu_);
        corrupter_ = std::move(corrupter);
    }
    StreamCorrupter stream_corrupter() const {
        std::lock_guard<std::mutex> lock(mu_);
        return corrupter_;
    }
    void delay_job_faults(int submits) {
        std::lock_guard<std::mutex> lock(mu_);
        submits_before_faults_ = submits;
    }
    // Drops whatever is still armed (a test that armed more than it used).
    void clear() {
        std::lock_guard<std::mutex> lock(mu_);
        alloc_failures_ = 0;
        allocs_before_failing_ = 0;
        submits_before_faults_ = 0;
        next_job_ = JobFaults{};
        corrupter_ = nullptr;
    }

    bool job_faults_armed() const {
        std::lock_guard<std::mutex> lock(mu_);
        return next_job_.any();
    }
    uint64_t submits_seen() const {
        std::lock_guard<std::mutex> lock(mu_);
        return submits_seen_;
    }
    uint64_t allocations_seen() const {
        std::lock_guard<std::mutex> lock(mu_);
        return allocations_seen_;
    }

    // Used by the mock: true when this allocation must fail.
    bool take_allocation_failure() {
        std::lock_guard<std::mutex> lock(mu_);
        ++allocations_seen_;
        if (alloc_failures_ <= 0) return false;
        if (allocs_before_failing_ > 0) {
            --allocs_before_failing_;
            return false;
        }
        --alloc_failures_;
        return true;
    }
    JobFaults take_job_faults() {
        std::lock_guard<std::mutex> lock(mu_);
        ++submits_seen_;
        if (!next_job_.any()) return JobFaults{};
        if (submits_before_faults_ > 0) {
            --submits_before_faults_;
            return JobFaults{};
        }
        JobFaults faults = next_job_;
        next_job_ = JobFaults{};
        return faults;
    }

private:
    mutable std::mutex mu_;
    int alloc_failures_ = 0;
    int allocs_before_failing_ = 0;
    int submits_before_faults_ = 0;
    uint64_t submits_seen_ = 0;
    uint64_t allocations_seen_ = 0;
    JobFaults next_job_;
    StreamCorrupter corrupter_;
};

}  // namespace rknn::driver::mock
