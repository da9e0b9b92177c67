// Faults a test can ask the mock kernel for. Each one is used up by the
// operation it breaks, and the driver is usable again afterwards:
//   fail_allocations(n)          the next n buffer creations fail (-ENOMEM)
//   hang_next_submit()           the next job's first core never finishes
//                                (NpuDevice::inject_hang): the submit times out
//                                (-ETIMEDOUT) and the core is soft-reset
//   reset_during_next_submit()   all cores are reset while the next job runs:
//                                the job is lost and the submit fails (-EIO)
//   iommu_fault_during_next_submit(addr)
//                                during the next submit the buffer mapped at
//                                `addr` is not mapped for the NPU: its first
//                                access faults (-EFAULT)
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace rknn::driver::mock {

struct JobFaults {
    bool hang = false;
    bool reset = false;
    std::vector<uint64_t> unmapped;  // device addresses to fault on
};

class FaultInjector {
public:
    void fail_allocations(int count) {
        std::lock_guard<std::mutex> lock(mu_);
        alloc_failures_ += count;
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

    // Used by the mock: true when this allocation must fail.
    bool take_allocation_failure() {
        std::lock_guard<std::mutex> lock(mu_);
        if (alloc_failures_ <= 0) return false;
        --alloc_failures_;
        return true;
    }
    JobFaults take_job_faults() {
        std::lock_guard<std::mutex> lock(mu_);
        JobFaults faults = next_job_;
        next_job_ = JobFaults{};
        return faults;
    }

private:
    std::mutex mu_;
    int alloc_failures_ = 0;
    JobFaults next_job_;
};

}  // namespace rknn::driver::mock
