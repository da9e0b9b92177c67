// The checks the real drivers make, provoked through raw ioctls on the mock
// kernel: the errno each returns, and that a refused call leaves nothing
// behind (objects, mappings, file descriptors).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>

#include <gtest/gtest.h>

#include "driver/mock/mock_fence.h"
#include "driver_test_util.h"
#include "raw_ioctl.h"

namespace rknn::driver::testing {
namespace {

using Clock = std::chrono::steady_clock;

long elapsed_ms(Clock::time_point since) {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count());
}

// ---- rknpu memory ioctls --------------------------------------------------------

TEST(RknpuValidation, MemCreateRefusals) {
    auto kernel = make_kernel();
    RawRknpu raw(kernel);
    raw.create(0, 0);
    EXPECT_EQ(raw.last_ret, -EINVAL);
    raw.create(4096, 0, RKNPU_MAX_IOMMU_DOMAIN_NUM);
    EXPECT_EQ(raw.last_ret, -EINVAL);
    raw.create(4096, 0, -1);
    EXPECT_EQ(raw.last_ret, -EINVAL);
    EXPECT_EQ(kernel->live_objects(), 0u);
    EXPECT_EQ(kernel->domain_mappings(0), 0u);
}

TEST(RknpuValidation, OldFortyByteMemCreateStillWorks) {
    // Drivers up to 0.9.6 had no core_mask; the DRM core copies the user's 40
    // bytes in, zero-fills the rest and copies only 40 bytes back.
    auto kernel = make_kernel();
    RawRknpu raw(kernel);
    rknpu_mem_create args{};
    args.size = 100;
    args.flags = RKNPU_MEM_CACHEABLE;
    args.iommu_domain_id = 7;         // beyond byte 40: must be ignored...
    args.core_mask = 0xdeadbeef;      // ...and left untouched
    ASSERT_EQ(raw.ioctl(DRM_IOCTL_RKNPU_MEM_CREATE_V1, &args), 0);
    EXPECT_NE(args.handle, 0u);
    EXPECT_EQ(args.size, 4096u);
    EXPECT_NE(args.dma_addr, 0u);
    EXPECT_EQ(args.iommu_domain_id, 7);
    EXPECT_EQ(args.core_mask, 0xdeadbeefu);
    EXPECT_EQ(kernel->domain_mappings(0), 1u);  // the zero-filled domain id
    EXPECT_EQ(raw.destroy(args), 0);
}

TEST(RknpuValidation, UnknownHandlesAndCookies) {
    auto kernel = make_kernel();
    RawRknpu raw(kernel);
    rknpu_mem_map map{};
    map.handle = 42;
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_RKNPU_MEM_MAP, &map), -EINVAL);
    rknpu_mem_create ghost{};
    ghost.handle = 42;
    EXPECT_EQ(raw.destroy(ghost), -EINVAL);
    EXPECT_EQ(raw.sync(0x1234, RKNPU_MEM_SYNC_TO_DEVICE), -EINVAL);
    drm_gem_close close_args{};
    close_args.handle = 42;
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_GEM_CLOSE, &close_args), -EINVAL);
    drm_prime_handle prime{};
    prime.handle = 42;
    prime.flags = DRM_CLOEXEC;
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime), -ENOENT);
    // A handle created on another file is unknown here.
    RawRknpu other(kernel);
    const rknpu_mem_create bo = other.create(4096, 0);
    map.handle = bo.handle;
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_RKNPU_MEM_MAP, &map), -EINVAL);
    EXPECT_EQ(other.destroy(bo), 0);
    EXPECT_EQ(raw.ioctl(0xC0086499, &map), -EINVAL);  // a driver ioctl number nobody defines
}

TEST(RknpuValidation, SyncNeedsACacheableBuffer) {
    auto kernel = make_kernel();
    RawRknpu raw(kernel);
    const rknpu_mem_create plain = raw.create(4096, 0);
    const rknpu_mem_create cached = raw.create(4096, RKNPU_MEM_CACHEABLE);
    EXPECT_EQ(raw.sync(plain.obj_addr, RKNPU_MEM_SYNC_TO_DEVICE), -EINVAL);
    EXPECT_EQ(raw.sync(cached.obj_addr, RKNPU_MEM_SYNC_TO_DEVICE | RKNPU_MEM_SYNC_FROM_DEVICE), 0);
    EXPECT_EQ(raw.destroy(plain), 0);
    EXPECT_EQ(raw.destroy(cached), 0);
    EXPECT_EQ(raw.sync(cached.obj_addr, RKNPU_MEM_SYNC_TO_DEVICE), -EINVAL);  // destroyed
}

TEST(RknpuValidation, GemCloseReleasesLikeDestroy) {
    auto kernel = make_kernel();
    RawRknpu raw(kernel);
    const rknpu_mem_create bo = raw.create(8192, 0);
    ASSERT_EQ(raw.last_ret, 0);
    drm_gem_close args{};
    args.handle = bo.handle;
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_GEM_CLOSE, &args), 0);
    EXPECT_EQ(kernel->live_objects(), 0u);
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_GEM_CLOSE, &args), -EINVAL);
}

TEST(RknpuValidation, ClosingTheFileReleasesItsBuffers) {
    auto kernel = make_kernel();
    {
        RawRknpu raw(kernel);
        raw.create(4096, 0);
        raw.create(4096, RKNPU_MEM_CACHEABLE | RKNPU_MEM_TRY_ALLOC_SRAM);
        EXPECT_EQ(kernel->live_objects(), 2u);
        EXPECT_LT(kernel->free_sram(), kernel->soc().sram_bytes / 4096 * 4096);
    }
    EXPECT_EQ(kernel->live_objects(), 0u);
    EXPECT_EQ(kernel->free_sram(), kernel->soc().sram_bytes / 4096 * 4096);
    EXPECT_EQ(kernel->open_files(), 0u);
}

TEST(RknpuValidation, MiscDeviceRefusals) {
    auto kernel = make_kernel();
    RawRknpu raw(kernel, /*misc=*/true);
    const int fds_before = count_open_fds();
    raw.create(4096, RKNPU_MEM_NON_CONTIGUOUS);
    EXPECT_EQ(raw.last_ret, -EINVAL);
    rknpu_mem_create bo = raw.create(4096, RKNPU_MEM_CACHEABLE);
    ASSERT_EQ(raw.last_ret, 0);
    EXPECT_GT(static_cast<int>(bo.handle), 0);  // a dma-buf fd for the caller
    rknpu_mem_map map{};
    map.handle = bo.handle;
    EXPECT_EQ(raw.ioctl(IOCTL_RKNPU_MEM_MAP, &map), -EINVAL);  // MEM_MAP is not offered
    void* p = nullptr;
    EXPECT_EQ(kernel->mmap(raw.fd(), 0, 4096, &p), -ENODEV);
    rknpu_mem_create ghost = bo;
    ghost.obj_addr += 8;
    EXPECT_EQ(raw.destroy(ghost), -EINVAL);
    // Import: an fd that is no dma-buf of ours, and no fd at all.
    int pipe_ends[2];
    ASSERT_EQ(::pipe(pipe_ends), 0);
    rknpu_mem_create import{};
    import.handle = static_cast<uint32_t>(pipe_ends[0]);
    EXPECT_EQ(raw.create(&import), -EINVAL);
    import.handle = 0x7ffffff0;
    EXPECT_EQ(raw.create(&import), -EBADF);
    ::close(pipe_ends[0]);
    ::close(pipe_ends[1]);
    EXPECT_EQ(raw.destroy(bo), 0);
    ::close(static_cast<int>(bo.handle));
    EXPECT_EQ(count_open_fds(), fds_before);
    EXPECT_EQ(kernel->live_objects(), 0u);
}

TEST(RknpuValidation, MiscDeviceDispatchesOnTheNumberAlone) {
    // /dev/rknpu looks at _IOC_NR only: any command with number 0 is ACTION,
    // and the DRM numbers (0x40 + nr) are unknown there.
    auto kernel = make_kernel();
    RawRknpu raw(kernel, /*misc=*/true);
    rknpu_action args{RKNPU_GET_DRV_VERSION, 0};
    EXPECT_EQ(raw.ioctl(_IOWR('x', 0, uint64_t), &args), 0);
    EXPECT_EQ(args.value, 908u);
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_RKNPU_ACTION, &args), -EINVAL);
}

TEST(RknpuValidation, Actions) {
    auto kernel = make_kernel();
    RawRknpu raw(kernel);
    uint32_t value = 0;
    EXPECT_EQ(raw.action(26, &value), -EINVAL);
    EXPECT_EQ(raw.action(RKNPU_SET_FREQ, &value), -EINVAL);
    EXPECT_EQ(raw.action(RKNPU_SET_VOLT, &value), -EINVAL);
    EXPECT_EQ(raw.action(RKNPU_POWER_ON, &value), -EINVAL);
    EXPECT_EQ(raw.action(RKNPU_POWER_OFF, &value), -EINVAL);
    value = 77;
    EXPECT_EQ(raw.action(RKNPU_GET_DT_WR_AMOUNT, &value), 0);
    EXPECT_EQ(value, 0u);
    EXPECT_EQ(raw.action(RKNPU_SET_PROC_NICE, &value), 0);
}

// ---- rknpu SUBMIT ----------------------------------------------------------------

class RknpuSubmitValidation : public ::testing::Test {
protected:
    void SetUp() override {
        kernel_ = make_kernel();
        raw_ = std::make_unique<RawRknpu>(kernel_);
        ASSERT_TRUE(job_.prepare(*raw_));
    }
    // Submits a copy of the valid job changed by `edit`.
    template <typename Edit>
    int submit_with(Edit edit) {
        rknpu_submit args = job_.submit;
        edit(args);
        return raw_->submit(&args);
    }

    std::shared_ptr<mock::MockKernel> kernel_;
    std::unique_ptr<RawRknpu> raw_;
    RawAddJob job_;
};

TEST_F(RknpuSubmitValidation, TheValidJobRuns) {
    rknpu_submit args = job_.submit;
    ASSERT_EQ(raw_->submit(&args), 0);
    EXPECT_EQ(args.task_counter, 1u);
    EXPECT_GT(args.hw_elapse_time, 0);
    EXPECT_EQ(job_.output(), expected_add(job_.input, 5));
    rknpu_task record;
    std::memcpy(&record, job_.task_bytes, sizeof(record));
    EXPECT_EQ(record.int_status, kDpuIntMask);  // the driver stores the interrupt status in the last task
}

TEST_F(RknpuSubmitValidation, EinvalRefusals) {
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.task_number = 0; }), -EINVAL);
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.core_mask = 0x8; }), -EINVAL);
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.flags &= ~RKNPU_JOB_PC; }), -EINVAL);
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.task_obj_addr = 0xffffff80deadbe00ull; }), -EINVAL);
    EXPECT_EQ(submit_with([this](rknpu_submit& s) { s.task_obj_addr = job_.regcmd.obj_addr; }), -EINVAL);  // no KERNEL_MAPPING
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.subcore_task[0] = rknpu_subcore_task{1000, 1}; }), -EINVAL);
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.subcore_task[0].task_number = 0; }), -EINVAL);
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.iommu_domain_id = RKNPU_MAX_IOMMU_DOMAIN_NUM; }), -EINVAL);
    EXPECT_EQ(kernel_->npu().stats(0).programs, 0u);  // nothing reached the NPU
    rknpu_submit args = job_.submit;
    ASSERT_EQ(raw_->submit(&args), 0);  // and the file still works
}

TEST_F(RknpuSubmitValidation, FenceFlagsNeedFenceSupport) {
    mock::MockOptions options;
    options.fences = false;
    kernel_ = make_kernel("rk3588", options);
    raw_ = std::make_unique<RawRknpu>(kernel_);
    ASSERT_TRUE(job_.prepare(*raw_));
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.flags |= RKNPU_JOB_FENCE_OUT; }), -EINVAL);
    EXPECT_EQ(submit_with([](rknpu_submit& s) { s.flags |= RKNPU_JOB_FENCE_IN; }), -EINVAL);
    EXPECT_EQ(submit_with([](rknpu_submit&) {}), 0);
}

TEST_F(RknpuSubmitValidation, CoreMasksTheDriverDoesNotRunTimeOut) {
    for (uint32_t mask : {0x5u, 0x6u}) {
        const auto start = Clock::now();
        rknpu_submit args = job_.submit;
        args.core_mask = mask;
        args.timeout = 100;
        args.subcore_task[1] = args.subcore_task[2] = rknpu_subcore_task{0, 1};
        EXPECT_EQ(raw_->submit(&args), -ETIMEDOUT) << "mask " << mask;
        EXPECT_GE(elapsed_ms(start), 100);
        EXPECT_EQ(args.task_counter, 0u);
    }
    for (int core = 0; core < 3; ++core) EXPECT_EQ(kernel_->npu().stats(core).programs, 0u);
}

TEST_F(RknpuSubmitValidation, UnexpectedInterruptBitsAreIgnoredUntilTheTimeout) {
    // The task says it ends in the PPU, but the DPU reports: the vendor IRQ
    // handler ignores the mismatch, the waiter times out and reads the task
    // counter from TASK_STATUS.
    rknpu_task record;
    std::memcpy(&record, job_.task_bytes, sizeof(record));
    record.int_mask = kPpuIntMask;
    std::memcpy(job_.task_bytes, &record, sizeof(record));
    rknpu_submit args = job_.submit;
    args.timeout = 100;
    EXPECT_EQ(raw_->submit(&args), -ETIMEDOUT);
    EXPECT_EQ(args.task_counter, 1u);
    EXPECT_EQ(job_.output(), expected_add(job_.input, 5));  // the work itself was done
}

TEST_F(RknpuSubmitValidation, NonBlockingJobsComplete) {
    rknpu_submit args = job_.submit;
    args.flags |= RKNPU_JOB_NONBLOCK;
    ASSERT_EQ(raw_->submit(&args), 0);
    EXPECT_EQ(job_.output(), expected_add(job_.input, 5));
}

TEST_F(RknpuSubmitValidation, FencesChainJobs) {
    const int fds_before = count_open_fds();
    rknpu_submit args = job_.submit;
    args.flags |= RKNPU_JOB_FENCE_OUT;
    ASSERT_EQ(raw_->submit(&args), 0);
    const int fence = args.fence_fd;
    ASSERT_GE(fence, 0);
    EXPECT_EQ(mock::wait_fence(fence, 0), 0);  // already signalled
    rknpu_submit next = job_.submit;
    next.flags |= RKNPU_JOB_FENCE_IN;
    next.fence_fd = fence;
    EXPECT_EQ(raw_->submit(&next), 0);
    ::close(fence);
    // An in-fence that never signals times out; something that is no fence is refused.
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    next.fence_fd = ends[0];
    next.timeout = 50;
    EXPECT_EQ(raw_->submit(&next), -ETIMEDOUT);
    next.fence_fd = ::memfd_create("not-a-fence", MFD_CLOEXEC);
    EXPECT_EQ(raw_->submit(&next), -EINVAL);
    ::close(next.fence_fd);
    ::close(ends[0]);
    ::close(ends[1]);
    EXPECT_EQ(count_open_fds(), fds_before);
}

// ---- rocket ----------------------------------------------------------------------------

class RocketValidation : public ::testing::Test {
protected:
    void SetUp() override {
        kernel_ = make_kernel();
        fd_ = kernel_->open(mock::MockKernel::kRocketNode);
        ASSERT_GE(fd_, 0);
        drm_rocket_create_bo bo{};
        bo.size = 4096;
        ASSERT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_CREATE_BO, &bo), 0);
        handle_ = bo.handle;
        task_ = drm_rocket_task{static_cast<uint32_t>(bo.dma_address), 8};
        job_ = drm_rocket_job{};
        job_.tasks = reinterpret_cast<uintptr_t>(&task_);
        job_.task_count = 1;
        job_.task_struct_size = sizeof(drm_rocket_task);
        submit_ = drm_rocket_submit{};
        submit_.jobs = reinterpret_cast<uintptr_t>(&job_);
        submit_.job_count = 1;
        submit_.job_struct_size = sizeof(drm_rocket_job);
    }
    void TearDown() override { kernel_->close(fd_); }
    int submit() { return kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_SUBMIT, &submit_); }

    std::shared_ptr<mock::MockKernel> kernel_;
    int fd_ = -1;
    uint32_t handle_ = 0;
    drm_rocket_task task_{};
    drm_rocket_job job_{};
    drm_rocket_submit submit_{};
};

TEST_F(RocketValidation, CreatePrepFini) {
    drm_rocket_create_bo empty{};
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_CREATE_BO, &empty), -EINVAL);
    drm_rocket_prep_bo prep{};
    prep.handle = handle_;
    prep.reserved = 1;
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_PREP_BO, &prep), -EINVAL);
    prep.reserved = 0;
    prep.handle = 99;
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_PREP_BO, &prep), -ENOENT);
    prep.handle = handle_;
    EXPECT_GT(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_PREP_BO, &prep), 0);  // jiffies left, not 0
    drm_rocket_fini_bo fini{};
    fini.handle = handle_;
    fini.reserved = 2;
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_FINI_BO, &fini), -EINVAL);
    fini.reserved = 0;
    fini.handle = 99;
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_FINI_BO, &fini), -ENOENT);
    fini.handle = handle_;
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_ROCKET_FINI_BO, &fini), 0);
    EXPECT_EQ(kernel_->live_objects(), 1u);
}

TEST_F(RocketValidation, SubmitRefusals) {
    submit_.reserved = 1;
    EXPECT_EQ(submit(), -EINVAL);
    submit_.reserved = 0;
    submit_.job_struct_size = 8;
    EXPECT_EQ(submit(), -EINVAL);
    submit_.job_struct_size = sizeof(drm_rocket_job);
    job_.task_struct_size = 4;
    EXPECT_EQ(submit(), -EINVAL);
    job_.task_struct_size = sizeof(drm_rocket_task);
    job_.task_count = 0;
    EXPECT_EQ(submit(), -EINVAL);
    job_.task_count = 1;
    task_.regcmd_count = 0;
    EXPECT_EQ(submit(), -EINVAL);
    task_.regcmd_count = 8;
    const uint32_t ghost = 77;
    job_.in_bo_handles = reinterpret_cast<uintptr_t>(&ghost);
    job_.in_bo_handle_count = 1;
    EXPECT_EQ(submit(), -ENOENT);
    job_.in_bo_handles = 0;
    EXPECT_EQ(submit(), -EFAULT);
    job_.in_bo_handle_count = 0;
    submit_.jobs = 0;
    EXPECT_EQ(submit(), -EFAULT);
    submit_.job_count = 0;
    EXPECT_EQ(submit(), 0);  // no jobs: nothing to do
    EXPECT_EQ(kernel_->npu().stats(0).programs, 0u);
}

TEST_F(RocketValidation, LargerStructsAreReadWithTheirStride) {
    // Newer userspace may append fields: the kernel walks arrays with the
    // sizes it is given. Two jobs of a larger struct, two tasks of a larger one.
    auto driver = open_rocket(kernel_);
    Bench bench(*driver);
    AddJob a, b;
    a.prepare(bench, 0, 1);
    b.prepare(bench, 0, 2);
    // The buffers belong to the driver's own fd, so submit on that one.
    const int fd = static_cast<RocketDriver&>(*driver).fd();
    struct WideTask {
        drm_rocket_task task;
        uint64_t extra;
    } tasks[2] = {{{static_cast<uint32_t>(a.request.tasks[0].regcmd_addr), a.request.tasks[0].regcmd_words}, 0},
                  {{static_cast<uint32_t>(b.request.tasks[0].regcmd_addr), b.request.tasks[0].regcmd_words}, 0}};
    struct WideJob {
        drm_rocket_job job;
        uint64_t extra[3];
    } jobs[2] = {};
    for (int i = 0; i < 2; ++i) {
        jobs[i].job.tasks = reinterpret_cast<uintptr_t>(&tasks[i]);
        jobs[i].job.task_count = 1;
        jobs[i].job.task_struct_size = sizeof(WideTask);
    }
    drm_rocket_submit args{};
    args.jobs = reinterpret_cast<uintptr_t>(jobs);
    args.job_count = 2;
    args.job_struct_size = sizeof(WideJob);
    ASSERT_EQ(kernel_->ioctl(fd, DRM_IOCTL_ROCKET_SUBMIT, &args), 0);
    EXPECT_EQ(bench.read(*a.out, a.input.size()), a.expected());
    EXPECT_EQ(bench.read(*b.out, b.input.size()), b.expected());
}

TEST_F(RocketValidation, GenericDrmIoctls) {
    char name[16] = {};
    drm_version version{};
    version.name = name;
    version.name_len = 3;  // too short: truncated, full length reported
    ASSERT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_VERSION, &version), 0);
    EXPECT_EQ(std::string(name), "roc");
    EXPECT_EQ(version.name_len, 6u);
    drm_gem_close close_args{};
    close_args.handle = 99;
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_GEM_CLOSE, &close_args), -EINVAL);
    close_args.handle = handle_;
    EXPECT_EQ(kernel_->ioctl(fd_, DRM_IOCTL_GEM_CLOSE, &close_args), 0);
    EXPECT_EQ(kernel_->live_objects(), 0u);
    EXPECT_EQ(kernel_->ioctl(fd_ + 1000, DRM_IOCTL_VERSION, &version), -EBADF);
}

}  // namespace
}  // namespace rknn::driver::testing
