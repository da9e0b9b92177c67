// The mainline rocket back-end over the mock kernel.
#include <gtest/gtest.h>

#include "driver_test_util.h"

namespace rknn::driver::testing {
namespace {

TEST(Rocket, IdentifiesAsRocket) {
    auto kernel = make_kernel();
    auto driver = open_rocket(kernel);
    ASSERT_NE(driver, nullptr);
    const DriverIdentity id = take(driver->identify());
    EXPECT_EQ(id.name, "rocket");
    EXPECT_EQ(id.description, "rocket DRM");
    EXPECT_EQ(id.hw_version, 0u);
    EXPECT_EQ(id.soc, "rk3588");
    auto act = driver->action(Action::kGetDrvVersion);
    ASSERT_FALSE(act.is_ok());
    EXPECT_EQ(act.status().code(), StatusCode::kUnimplemented);
}

TEST(Rocket, BuffersAreCachedAndBelowFourGiB) {
    auto kernel = make_kernel();
    auto driver = open_rocket(kernel);
    BufferRequest request;
    request.size = 10000;
    BufferObject bo = take(driver->create_buffer(request));
    EXPECT_TRUE(bo.cacheable());
    EXPECT_EQ(bo.size, 12288u);
    EXPECT_EQ(bo.obj_addr, 0u);
    EXPECT_LT(bo.dma_addr + bo.size, 1ull << 32);
    ASSERT_OK(driver->map_buffer(&bo));
    bo.host[100] = 1;
    ASSERT_OK(driver->destroy_buffer(&bo));
    EXPECT_EQ(kernel->live_objects(), 0u);
    request.iommu_domain = 1;
    EXPECT_EQ(driver->create_buffer(request).status().code(), StatusCode::kInvalidArgument);
}

TEST(Rocket, DpuAddRunsAndWritesTheOutput) {
    auto kernel = make_kernel();
    auto driver = open_rocket(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, 0);
    job.request.in_handles = {job.in->handle, job.regcmd->handle};
    job.request.out_handles = {job.out->handle};
    const SubmitResult result = take(driver->submit(job.request));
    EXPECT_EQ(result.task_counter, 1u);
    EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
}

TEST(Rocket, PerCoreRangesBecomeJobsSpreadOverTheCores) {
    auto kernel = make_kernel();
    auto driver = open_rocket(kernel);
    Bench bench(*driver);
    AddJob a, b, c;
    a.prepare(bench, 0, 1);
    b.prepare(bench, 0, 2);
    c.prepare(bench, 0, 3);
    SubmitRequest request;
    request.tasks = {a.request.tasks[0], b.request.tasks[0], c.request.tasks[0]};
    request.core_mask = 0x7;
    for (uint32_t i = 0; i < 3; ++i) request.core_tasks[i] = TaskRange{i, 1};
    EXPECT_EQ(take(driver->submit(request)).task_counter, 3u);
    for (AddJob* job : {&a, &b, &c}) EXPECT_EQ(bench.read(*job->out, job->input.size()), job->expected());
    for (int core = 0; core < 3; ++core) EXPECT_EQ(kernel->npu().stats(core).programs, 1u) << "core " << core;
}

TEST(Rocket, SeveralTasksInOneJobAreKickedOneByOne) {
    auto kernel = make_kernel();
    auto driver = open_rocket(kernel);
    Bench bench(*driver);
    AddJob a, b;
    a.prepare(bench, 0, 1);
    b.prepare(bench, 0, 2);
    SubmitRequest request;
    request.tasks = {a.request.tasks[0], b.request.tasks[0]};
    EXPECT_EQ(take(driver->submit(request)).task_counter, 2u);
    EXPECT_EQ(kernel->npu().stats(0).programs, 2u);
    EXPECT_EQ(bench.read(*a.out, a.input.size()), a.expected());
    EXPECT_EQ(bench.read(*b.out, b.input.size()), b.expected());
}

TEST(Rocket, PpuTasksNeverCompleteOnRocket) {
    // Rocket only accepts DPU completions (hw-facts 2.3): a task that ends in
    // the PPU runs, but its interrupt is not recognised and the job times out.
    mock::MockOptions options;
    options.rocket_job_timeout_ms = 100;
    auto kernel = make_kernel("rk3588", options);
    auto driver = open_rocket(kernel);
    Bench bench(*driver);
    const CubeShape shape{4, 4, 16};
    BufferObject& in = bench.buffer(cube_bytes(shape), 0);
    BufferObject& out = bench.buffer(cube_bytes(shape), 0);
    BufferObject& regcmd = bench.buffer(4096, 0);
    SubmitRequest request;
    request.tasks = {bench.task(regcmd, 0,
                                ppu_max_pool_task(static_cast<uint32_t>(in.dma_addr), static_cast<uint32_t>(out.dma_addr),
                                                  shape, 2),
                                kPpuEnable, kPpuIntMask)};
    auto result = driver->submit(request);
    ASSERT_FALSE(result.is_ok());
    EXPECT_EQ(result.status().code(), StatusCode::kDeadlineExceeded);
}

TEST(Rocket, UnsupportedRequestsAreRefused) {
    auto kernel = make_kernel();
    auto driver = open_rocket(kernel);
    SubmitRequest request;
    request.tasks = {Task{0x1000, 8, kDpuEnable, kDpuIntMask, 0}};
    request.flags = submit_flag::kFenceOut;
    EXPECT_EQ(driver->submit(request).status().code(), StatusCode::kUnimplemented);
    request.flags = 0;
    request.tasks[0].regcmd_addr = 1ull << 32;
    EXPECT_EQ(driver->submit(request).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(driver->import_dmabuf(0).status().code(), StatusCode::kUnimplemented);
}

TEST(Rocket, EachFileHasItsOwnAddressSpace) {
    auto kernel = make_kernel();
    auto first = open_rocket(kernel);
    auto second = open_rocket(kernel);
    Bench bench_first(*first);
    Bench bench_second(*second);
    AddJob job;
    job.prepare(bench_first, 0);
    // The same addresses in the second file's space: its own first buffers.
    BufferObject& other = bench_second.buffer(4096, 0);
    EXPECT_EQ(other.dma_addr, job.in->dma_addr);
    // The job's buffers exist only in the first file's space.
    auto result = second->submit(job.request);
    ASSERT_FALSE(result.is_ok());
    EXPECT_EQ(take(first->submit(job.request)).task_counter, 1u);
    EXPECT_EQ(bench_first.read(*job.out, job.input.size()), job.expected());
}

}  // namespace
}  // namespace rknn::driver::testing
