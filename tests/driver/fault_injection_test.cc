// Every fault the mock kernel can inject makes the operation it hits fail
// with the kernel's error, and the next normal operation on the same driver
// succeeds.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "driver_test_util.h"

namespace rknn::driver::testing {
namespace {

constexpr uint32_t kIoFlags = buffer_flag::kCacheable;

bool has_errno(const Status& s, int err) {
    return s.message().find("(errno " + std::to_string(err) + ")") != std::string::npos;
}

class FaultInjection : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        mock::MockOptions options;
        options.rocket_job_timeout_ms = 150;
        kernel_ = make_kernel("rk3588", options);
        rocket_ = std::string(GetParam()) == "rocket";
        driver_ = rocket_ ? open_rocket(kernel_) : open_rknpu(kernel_);
        ASSERT_NE(driver_, nullptr);
        bench_ = std::make_unique<Bench>(*driver_);
        job_.prepare(*bench_, kIoFlags);
        job_.request.timeout_ms = 150;
    }
    void TearDown() override {
        bench_.reset();
        driver_.reset();
        EXPECT_EQ(kernel_->live_objects(), 0u);
    }
    // The normal job works (again).
    void expect_job_runs() {
        bench_->write(*job_.out, std::vector<uint8_t>(job_.input.size(), 0));
        auto result = driver_->submit(job_.request);
        ASSERT_TRUE(result.is_ok()) << result.status().message();
        EXPECT_EQ(bench_->read(*job_.out, job_.input.size()), job_.expected());
    }

    std::shared_ptr<mock::MockKernel> kernel_;
    bool rocket_ = false;
    std::unique_ptr<KernelDriver> driver_;
    std::unique_ptr<Bench> bench_;
    AddJob job_;
};

TEST_P(FaultInjection, AllocationFailure) {
    const size_t before = kernel_->live_objects();
    kernel_->faults().fail_allocations(2);
    BufferRequest request;
    request.size = 4096;
    for (int i = 0; i < 2; ++i) {
        auto failed = driver_->create_buffer(request);
        ASSERT_FALSE(failed.is_ok());
        EXPECT_EQ(failed.status().code(), StatusCode::kResourceExhausted);
        EXPECT_TRUE(has_errno(failed.status(), ENOMEM)) << failed.status().message();
    }
    EXPECT_EQ(kernel_->live_objects(), before);
    BufferObject bo = take(driver_->create_buffer(request));
    ASSERT_OK(driver_->destroy_buffer(&bo));
    expect_job_runs();
}

TEST_P(FaultInjection, SubmitTimeout) {
    kernel_->faults().hang_next_submit();
    const auto start = std::chrono::steady_clock::now();
    auto hung = driver_->submit(job_.request);
    const auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(hung.is_ok());
    EXPECT_EQ(hung.status().code(), StatusCode::kDeadlineExceeded) << hung.status().message();
    EXPECT_GE(waited, std::chrono::milliseconds(150));
    EXPECT_FALSE(kernel_->npu().busy(0));  // the core was reset
    expect_job_runs();
}

TEST_P(FaultInjection, IommuFault) {
    kernel_->faults().iommu_fault_during_next_submit(job_.out->dma_addr);
    auto faulted = driver_->submit(job_.request);
    ASSERT_FALSE(faulted.is_ok());
    EXPECT_TRUE(has_errno(faulted.status(), EFAULT)) << faulted.status().message();
    expect_job_runs();
}

TEST_P(FaultInjection, DeviceResetDuringAJob) {
    kernel_->faults().reset_during_next_submit();
    auto lost = driver_->submit(job_.request);
    ASSERT_FALSE(lost.is_ok());
    EXPECT_TRUE(has_errno(lost.status(), EIO)) << lost.status().message();
    expect_job_runs();
}

// RKNPU_ACT_RESET from another client while a job runs: the vendor driver
// wakes the job's waiter, which fails with -EINVAL at once instead of
// sleeping out its timeout.
TEST_P(FaultInjection, DeviceResetFailsTheRunningJobAtOnce) {
    if (rocket_) GTEST_SKIP() << "rocket has no reset ioctl";
    kernel_->faults().hang_next_submit();  // the job would never end by itself
    SubmitRequest request = job_.request;
    request.timeout_ms = 20000;
    Status result;
    const auto start = std::chrono::steady_clock::now();
    std::thread submitter([&] { result = driver_->submit(request).status(); });
    auto any_core_busy = [&] {
        for (int core = 0; core < 3; ++core)
            if (kernel_->npu().busy(core)) return true;
        return false;
    };
    while (!any_core_busy() && std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    kernel_->reset_device();
    submitter.join();
    const auto waited = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(result.is_ok());
    EXPECT_TRUE(has_errno(result, EINVAL)) << result.message();
    EXPECT_LT(waited, std::chrono::seconds(10)) << "the job slept out its timeout";
    expect_job_runs();
}

TEST_P(FaultInjection, DeviceResetBetweenJobs) {
    expect_job_runs();
    kernel_->reset_device();
    expect_job_runs();
}

TEST_P(FaultInjection, MalformedProgram) {
    // A stream word that is neither a write, a marker nor a no-op.
    SubmitRequest bad = job_.request;
    BufferObject& garbage = bench_->buffer(4096, kIoFlags);
    std::vector<uint8_t> words(64, 0);
    words[7] = 0x12;  // op 0x12xx: not a one-hot block select
    words[15] = 0x12;
    bench_->write(garbage, words);
    bad.tasks[0].regcmd_addr = garbage.dma_addr;
    bad.tasks[0].regcmd_words = 8;
    auto failed = driver_->submit(bad);
    ASSERT_FALSE(failed.is_ok());
    EXPECT_TRUE(has_errno(failed.status(), EIO)) << failed.status().message();
    expect_job_runs();
}

TEST_P(FaultInjection, DestroyedBuffersFault) {
    expect_job_runs();  // so the back-end's own buffers exist before the address is freed
    BufferObject& scratch = bench_->buffer(job_.input.size(), kIoFlags);
    const uint64_t gone = scratch.dma_addr;
    ASSERT_OK(driver_->destroy_buffer(&scratch));
    SubmitRequest stale = job_.request;
    stale.tasks = {bench_->task(*job_.regcmd, 2048,
                                dpu_add_task(static_cast<uint32_t>(job_.in->dma_addr), static_cast<uint32_t>(gone),
                                             job_.shape, 1),
                                kDpuEnable, kDpuIntMask)};
    auto faulted = driver_->submit(stale);
    ASSERT_FALSE(faulted.is_ok());
    EXPECT_TRUE(has_errno(faulted.status(), EFAULT)) << faulted.status().message();
    expect_job_runs();
}

INSTANTIATE_TEST_SUITE_P(Backends, FaultInjection, ::testing::Values("rknpu", "rocket"));

TEST(FaultInjectionRocket, MainlineDropsJobErrors) {
    // With the mainline behaviour the failed job is only logged.
    mock::MockOptions options;
    options.rocket_job_timeout_ms = 50;
    options.rocket_report_job_errors = false;
    auto kernel = make_kernel("rk3588", options);
    auto driver = open_rocket(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, 0);
    kernel->faults().hang_next_submit();
    EXPECT_TRUE(driver->submit(job.request).is_ok());
    EXPECT_NE(bench.read(*job.out, job.input.size()), job.expected());
    EXPECT_TRUE(driver->submit(job.request).is_ok());
    EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
}

TEST(FaultInjectionRknpu, HangOnOneCoreOfAThreeCoreJob) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob jobs[3];
    SubmitRequest request;
    for (uint32_t i = 0; i < 3; ++i) {
        jobs[i].prepare(bench, kIoFlags, static_cast<int>(i));
        request.tasks.push_back(jobs[i].request.tasks[0]);
        request.core_tasks[i] = TaskRange{i, 1};
    }
    request.core_mask = 0x7;
    request.timeout_ms = 100;
    kernel->faults().hang_next_submit();
    auto hung = driver->submit(request);
    ASSERT_FALSE(hung.is_ok());
    EXPECT_EQ(hung.status().code(), StatusCode::kDeadlineExceeded);
    // Cores 1 and 2 finished: the task counter says so.
    EXPECT_NE(hung.status().message().find("(2 done)"), std::string::npos) << hung.status().message();
    request.timeout_ms = 2000;
    EXPECT_EQ(take(driver->submit(request)).task_counter, 3u);
    for (AddJob& job : jobs) EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
}

}  // namespace
}  // namespace rknn::driver::testing
