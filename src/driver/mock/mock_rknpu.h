// The vendor rknpu driver (0.9.8) as the mock kernel implements it, for one
// open file: either the DRM render node (GEM handles, fake mmap offsets,
// generic DRM ioctls) or the /dev/rknpu misc device (dma-buf fds as handles,
// objects tracked per session, dispatch on _IOC_NR alone).
//
// Errno choices (hw-facts 1.2-1.7; where the kernel trusts a pointer and
// would crash, the mock answers -EINVAL instead):
//   MEM_CREATE  size 0, domain id outside 0..15 -> -EINVAL; misc with
//               NON_CONTIGUOUS -> -EINVAL; allocation failure -> -ENOMEM;
//               DRM with an existing handle: reports that object (import)
//   MEM_MAP     unknown handle -> -EINVAL; on the misc device always -EINVAL
//   MEM_DESTROY unknown handle (DRM) / obj_addr (misc) -> -EINVAL
//   MEM_SYNC    unknown obj_addr or object without CACHEABLE -> -EINVAL
//   SUBMIT      task_number 0, core_mask above the SoC's, unknown task
//               obj_addr, task buffer without KERNEL_MAPPING or too small,
//               a core with no tasks, missing RKNPU_JOB_PC, FENCE flags with
//               fences off, domain id outside 0..15 -> -EINVAL; core masks the
//               driver does not commit (0x5, 0x6 on RK3588) never run ->
//               -ETIMEDOUT after the timeout; NPU faults -> -EFAULT (IOMMU) or
//               -EIO; no accepted interrupt in time -> -ETIMEDOUT
//   ACTION      SET_FREQ, SET_VOLT, POWER_ON/OFF, unknown codes, bandwidth
//               registers on SoCs without them -> -EINVAL; DMA byte counters
//               -> 0 (not modelled; RK3588 has none either)
// NONBLOCK jobs run to completion before SUBMIT returns (allowed: the job
// simply finished early). FENCE_OUT returns a signalled fence (mock_fence.h).
#pragma once

#include <map>
#include <memory>

#include "driver/mock/drm_generic.h"
#include "driver/mock/gem_handles.h"
#include "driver/mock/mock_device.h"
#include "driver/mock/mock_file.h"

namespace rknn::driver::mock {

class RknpuFile final : public MockFile {
public:
    RknpuFile(MockDevice& device, bool misc) : dev_(device), misc_(misc) {}
    ~RknpuFile() override;

    int ioctl(unsigned long cmd, void* arg) override;
    int mmap(uint64_t offset, size_t length, void** out) override;

    // DRM_IOCTL_VERSION's answer.
    static const DrmIdentity kIdentity;
    static constexpr uint32_t kDriverVersion = 908;  // 0.9.8: major * 10000 + minor * 100 + patch

private:
    int dispatch_driver(unsigned nr, unsigned long cmd, void* arg);
    int dispatch_generic(unsigned long cmd, void* arg);

    int action(rknpu_action* args);
    int mem_create(rknpu_mem_create* args);
    int mem_map(rknpu_mem_map* args);
    int mem_destroy(rknpu_mem_destroy* args);
    int mem_sync(rknpu_mem_sync* args);
    int submit(rknpu_submit* args);

    int allocate(rknpu_mem_create* args);
    int import_misc(rknpu_mem_create* args);
    bool map_in_domain(MockObject* object, int32_t domain);
    void report(const MockObject& object, rknpu_mem_create* args) const;
    std::shared_ptr<MockObject> lookup_cookie(uint64_t cookie) const;
    int build_job(const rknpu_submit& args, const MockObject& tasks, std::vector<CoreJob>* cores,
                  std::vector<std::pair<int, uint32_t>>* last_tasks) const;

    MockDevice& dev_;
    bool misc_;
    GemHandles handles_;                                       // DRM node
    std::map<uint64_t, std::shared_ptr<MockObject>> session_;  // misc device, by obj_addr
};

}  // namespace rknn::driver::mock
