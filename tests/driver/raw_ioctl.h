// Raw ioctls against the mock kernel, for checking errno values and struct
// handling below the back-ends.
#pragma once

#include <dirent.h>
#include <drm.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "driver/mock/mock_kernel.h"
#include "npu_programs.h"
#include "rknpu_ioctl.h"
#include "rocket_accel.h"

namespace rknn::driver::testing {

// Open file descriptors of this process (to catch leaked dma-buf/fence fds).
inline int count_open_fds() {
    int count = 0;
    if (DIR* dir = ::opendir("/proc/self/fd")) {
        while (::readdir(dir) != nullptr) ++count;
        ::closedir(dir);
    }
    return count;
}

// One open file of the mock, speaking the vendor ABI directly.
class RawRknpu {
public:
    RawRknpu(std::shared_ptr<mock::MockKernel> kernel, bool misc = false)
        : kernel_(std::move(kernel)), misc_(misc),
          fd_(kernel_->open(misc ? mock::MockKernel::kRknpuMiscNode : mock::MockKernel::kRknpuRenderNode)) {}
    ~RawRknpu() { kernel_->close(fd_); }

    int fd() const { return fd_; }
    mock::MockKernel& kernel() { return *kernel_; }

    unsigned long cmd(unsigned long drm, unsigned long misc) const { return misc_ ? misc : drm; }
    int ioctl(unsigned long request, void* arg) { return kernel_->ioctl(fd_, request, arg); }

    int create(rknpu_mem_create* args) {
        return ioctl(cmd(DRM_IOCTL_RKNPU_MEM_CREATE, IOCTL_RKNPU_MEM_CREATE), args);
    }
    rknpu_mem_create create(uint64_t size, uint32_t flags, int32_t domain = 0) {
        rknpu_mem_create args{};
        args.size = size;
        args.flags = flags;
        args.iommu_domain_id = domain;
        last_ret = create(&args);
        return args;
    }
    uint8_t* map(const rknpu_mem_create& bo) {
        void* p = nullptr;
        if (misc_) {
            last_ret = kernel_->mmap(static_cast<int>(bo.handle), 0, bo.size, &p);
        } else {
            rknpu_mem_map args{};
            args.handle = bo.handle;
            last_ret = ioctl(DRM_IOCTL_RKNPU_MEM_MAP, &args);
            if (last_ret == 0) last_ret = kernel_->mmap(fd_, args.offset, bo.size, &p);
        }
        return static_cast<uint8_t*>(p);
    }
    int sync(uint64_t obj_addr, uint32_t flags, uint64_t offset = 0, uint64_t size = 1 << 20) {
        rknpu_mem_sync args{};
        args.flags = flags;
        args.obj_addr = obj_addr;
        args.offset = offset;
        args.size = size;
        return ioctl(cmd(DRM_IOCTL_RKNPU_MEM_SYNC, IOCTL_RKNPU_MEM_SYNC), &args);
    }
    int destroy(const rknpu_mem_create& bo) {
        rknpu_mem_destroy args{};
        args.handle = bo.handle;
        args.obj_addr = bo.obj_addr;
        return ioctl(cmd(DRM_IOCTL_RKNPU_MEM_DESTROY, IOCTL_RKNPU_MEM_DESTROY), &args);
    }
    int submit(rknpu_submit* args) { return ioctl(cmd(DRM_IOCTL_RKNPU_SUBMIT, IOCTL_RKNPU_SUBMIT), args); }
    int action(uint32_t code, uint32_t* value) {
        rknpu_action args{code, *value};
        const int ret = ioctl(cmd(DRM_IOCTL_RKNPU_ACTION, IOCTL_RKNPU_ACTION), &args);
        *value = args.value;
        return ret;
    }

    int last_ret = 0;

private:
    std::shared_ptr<mock::MockKernel> kernel_;
    bool misc_;
    int fd_;
};

// A ready-to-submit DPU add job made with raw ioctls: task buffer with one
// record, regcmd, input and output (all non-cacheable unless asked).
struct RawAddJob {
    CubeShape shape{4, 4, 16};
    rknpu_mem_create tasks{}, regcmd{}, in{}, out{};
    uint8_t* task_bytes = nullptr;
    uint8_t* out_bytes = nullptr;
    std::vector<uint8_t> input;
    rknpu_submit submit{};

    bool prepare(RawRknpu& raw, uint32_t task_flags = RKNPU_MEM_KERNEL_MAPPING | RKNPU_MEM_CACHEABLE) {
        tasks = raw.create(4096, task_flags);
        regcmd = raw.create(4096, 0);
        in = raw.create(cube_bytes(shape), 0);
        out = raw.create(cube_bytes(shape), 0);
        task_bytes = raw.map(tasks);
        uint8_t* regcmd_bytes = raw.map(regcmd);
        uint8_t* in_bytes = raw.map(in);
        out_bytes = raw.map(out);
        if (!task_bytes || !regcmd_bytes || !in_bytes || !out_bytes) return false;
        input = pattern_bytes(cube_bytes(shape), 9);
        std::memcpy(in_bytes, input.data(), input.size());
        const hw::RegcmdBuilder program =
            dpu_add_task(static_cast<uint32_t>(in.dma_addr), static_cast<uint32_t>(out.dma_addr), shape, 5);
        const std::vector<uint8_t> stream = stream_bytes(program);
        std::memcpy(regcmd_bytes, stream.data(), stream.size());
        rknpu_task record{};
        record.enable_mask = kDpuEnable;
        record.int_mask = kDpuIntMask;
        record.int_clear = RKNPU_INT_CLEAR_ALL;
        record.regcfg_amount = static_cast<uint32_t>(program.body_words());
        record.regcmd_addr = regcmd.dma_addr;
        std::memcpy(task_bytes, &record, sizeof(record));
        submit.flags = RKNPU_JOB_PC;
        submit.timeout = 1000;
        submit.task_number = 1;
        submit.task_obj_addr = tasks.obj_addr;
        submit.core_mask = RKNPU_CORE0_MASK;
        submit.subcore_task[0] = rknpu_subcore_task{0, 1};
        submit.fence_fd = -1;
        return true;
    }
    std::vector<uint8_t> output() const { return std::vector<uint8_t>(out_bytes, out_bytes + input.size()); }
};

}  // namespace rknn::driver::testing
