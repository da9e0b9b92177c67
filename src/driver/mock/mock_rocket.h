// The mainline rocket accel driver as the mock kernel implements it, for one
// open file (hw-facts 2). Every file has its own address space: buffer
// addresses are valid only for jobs submitted on the same fd. Buffers are
// always cached shmem: PREP_BO makes NPU writes visible to the CPU, FINI_BO
// CPU writes to the NPU.
//
// Errno choices:
//   CREATE_BO  size 0 -> -EINVAL; allocation failure -> -ENOMEM
//   PREP_BO    reserved != 0 -> -EINVAL; unknown handle -> -ENOENT; on
//              success the remaining wait in jiffies (> 0), as mainline does
//   FINI_BO    reserved != 0 -> -EINVAL; unknown handle -> -ENOENT
//   SUBMIT     reserved != 0, job/task struct size smaller than ours, a job
//              without tasks, a task with regcmd_count 0 -> -EINVAL; a null
//              array pointer -> -EFAULT; unknown BO handle -> -ENOENT. Jobs
//              run in order, each on the next core (round robin); a job
//              that does not end with a DPU interrupt within the job timeout
//              fails with -ETIMEDOUT, NPU faults with -EFAULT / -EIO. Those
//              job errors are returned only with rocket_report_job_errors
//              (mainline drops them).
#pragma once

#include <memory>

#include "driver/mock/drm_generic.h"
#include "driver/mock/gem_handles.h"
#include "driver/mock/mock_device.h"
#include "driver/mock/mock_file.h"
#include "rocket_accel.h"

namespace rknn::driver::mock {

class RocketFile final : public MockFile {
public:
    explicit RocketFile(MockDevice& device) : dev_(device), space_(std::make_shared<AddressSpace>()) {}

    int ioctl(unsigned long cmd, void* arg) override;
    int mmap(uint64_t offset, size_t length, void** out) override;

    static const DrmIdentity kIdentity;

private:
    int dispatch_generic(unsigned long cmd, void* arg);  // VERSION, GEM_CLOSE, PRIME
    int create_bo(drm_rocket_create_bo* args);
    int prep_bo(drm_rocket_prep_bo* args);
    int fini_bo(drm_rocket_fini_bo* args);
    int submit(drm_rocket_submit* args);
    int submit_job(const drm_rocket_job& job);
    int check_handles(uint64_t pointer, uint32_t count) const;

    MockDevice& dev_;
    std::shared_ptr<AddressSpace> space_;
    GemHandles handles_;
    int next_core_ = 0;
};

}  // namespace rknn::driver::mock
