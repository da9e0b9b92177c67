// The vendor rknpu back-end over the mock kernel: the whole path a runtime
// takes (create, map, write, sync, submit, read back, destroy) on the DRM
// render node and on /dev/rknpu, plus identity, actions and multi-core jobs.
#include <gtest/gtest.h>

#include <thread>

#include "driver_test_util.h"
#include "hw/registers.h"

namespace rknn::driver::testing {
namespace {

constexpr uint32_t kIoFlags = buffer_flag::kCacheable | buffer_flag::kNonContiguous;

TEST(RknpuDrm, IdentifiesAsTheVendorDriver) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    ASSERT_NE(driver, nullptr);
    EXPECT_STREQ(driver->backend_name(), "rknpu");
    const DriverIdentity id = take(driver->identify());
    EXPECT_EQ(id.name, "rknpu");
    EXPECT_EQ(id.version, "0.9.8");
    EXPECT_EQ(id.date, "20240828");
    EXPECT_EQ(id.description, "RKNPU driver");
    EXPECT_EQ(id.hw_version, 0x46495245u);  // RK3588, read from the emulated core 0
    EXPECT_EQ(id.soc, "rk3588");
    EXPECT_EQ(id.node, mock::MockKernel::kRknpuRenderNode);
}

TEST(RknpuDrm, ActionsReportTheSoc) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    const hw::SocProfile& soc = kernel->soc();
    EXPECT_EQ(take(driver->action(Action::kGetDrvVersion)), 908u);
    EXPECT_EQ(take(driver->action(Action::kGetHwVersion)), soc.hw_version);
    EXPECT_EQ(take(driver->action(Action::kGetFreq)), static_cast<uint32_t>(soc.clock_hz));
    EXPECT_EQ(take(driver->action(Action::kGetVolt)), soc.voltage_uv);
    EXPECT_EQ(take(driver->action(Action::kGetIommuEnabled)), 1u);
    EXPECT_EQ(take(driver->action(Action::kGetTotalSramSize)), soc.sram_bytes / 4096 * 4096);
    EXPECT_EQ(take(driver->action(Action::kGetFreeSramSize)), soc.sram_bytes / 4096 * 4096);
    EXPECT_EQ(take(driver->action(Action::kGetTotalRwAmount)), 0u);  // RK3588 has no DMA counters
    EXPECT_TRUE(driver->action(Action::kReset).is_ok());
    for (Action refused : {Action::kSetFreq, Action::kSetVolt, Action::kPowerOn, Action::kPowerOff,
                           Action::kGetBwPriority}) {
        auto r = driver->action(refused, 1);
        ASSERT_FALSE(r.is_ok());
        EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    }
    EXPECT_TRUE(driver->action(Action::kSetIommuDomainId, 3).is_ok());
    EXPECT_EQ(take(driver->action(Action::kGetIommuDomainId)), 3u);
    EXPECT_FALSE(driver->action(Action::kSetIommuDomainId, 16).is_ok());
}

TEST(RknpuDrm, BandwidthRegistersExistOnRk3568Only) {
    auto kernel = make_kernel("rk3568");
    auto driver = open_rknpu(kernel);
    EXPECT_TRUE(driver->action(Action::kSetBwExpect, 0x1234).is_ok());
    EXPECT_EQ(take(driver->action(Action::kGetBwExpect)), 0x1234u);
    EXPECT_EQ(take(driver->action(Action::kGetTotalSramSize)), 0u);
}

TEST(RknpuDrm, BufferLifecycle) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    BufferRequest request;
    request.size = 5000;
    request.flags = kIoFlags;
    BufferObject bo = take(driver->create_buffer(request));
    EXPECT_EQ(bo.size, 8192u);  // page-aligned by the kernel
    EXPECT_NE(bo.handle, 0u);
    EXPECT_NE(bo.obj_addr, 0u);
    EXPECT_NE(bo.dma_addr, 0u);
    EXPECT_LT(bo.dma_addr + bo.size, 1ull << 32);
    EXPECT_EQ(kernel->live_objects(), 1u);
    ASSERT_OK(driver->map_buffer(&bo));
    ASSERT_NE(bo.host, nullptr);
    EXPECT_GE(bo.mmap_offset, 1ull << 32);  // DRM fake offsets start above 4 GiB
    bo.host[0] = 0x5a;
    bo.host[bo.size - 1] = 0xa5;
    ASSERT_OK(driver->destroy_buffer(&bo));
    EXPECT_EQ(bo.size, 0u);
    EXPECT_EQ(kernel->live_objects(), 0u);
    EXPECT_EQ(kernel->domain_mappings(0), 0u);
}

TEST(RknpuDrm, FreedAddressesAreReused) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    BufferRequest request;
    request.size = 4096;
    BufferObject a = take(driver->create_buffer(request));
    const uint64_t first = a.dma_addr;
    ASSERT_OK(driver->destroy_buffer(&a));
    BufferObject b = take(driver->create_buffer(request));
    EXPECT_EQ(b.dma_addr, first);
    ASSERT_OK(driver->destroy_buffer(&b));
}

TEST(RknpuDrm, DpuAddRunsAndWritesTheOutput) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, kIoFlags);
    const SubmitResult result = take(driver->submit(job.request));
    EXPECT_EQ(result.task_counter, 1u);
    EXPECT_GT(result.hw_elapse_ns, 0);
    EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
}

// Two threads submitting on one driver (duplicated contexts share theirs):
// each submit fills a task buffer of its own, and every job's output is its own.
TEST(RknpuDrm, ConcurrentSubmitsOnOneDriver) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob jobs[2];
    jobs[0].prepare(bench, kIoFlags, 1);
    jobs[1].addend = -9;
    jobs[1].prepare(bench, kIoFlags, 2);
    std::vector<std::thread> threads;
    for (AddJob& job : jobs) {
        threads.emplace_back([&driver, &job] {
            for (int i = 0; i < 20; ++i) {
                auto result = driver->submit(job.request);
                EXPECT_TRUE(result.is_ok());
                if (result.is_ok()) {
                    EXPECT_EQ(result.value().task_counter, 1u);
                }
            }
        });
    }
    for (std::thread& t : threads) t.join();
    for (AddJob& job : jobs) EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
}

TEST(RknpuDrm, PpuMaxPoolRunsAndWritesTheOutput) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    const CubeShape shape{4, 4, 32};
    const std::vector<uint8_t> input = pattern_bytes(cube_bytes(shape), 7);
    const std::vector<uint8_t> expected = expected_max_pool(input, shape, 2);
    BufferObject& in = bench.buffer(input.size(), kIoFlags);
    BufferObject& out = bench.buffer(expected.size(), kIoFlags);
    BufferObject& regcmd = bench.buffer(4096, buffer_flag::kWriteCombine);
    bench.write(in, input);
    SubmitRequest request;
    request.tasks = {bench.task(regcmd, 0,
                                ppu_max_pool_task(static_cast<uint32_t>(in.dma_addr), static_cast<uint32_t>(out.dma_addr),
                                                  shape, 2),
                                kPpuEnable, kPpuIntMask)};
    request.core_mask = RKNPU_CORE1_MASK;
    const SubmitResult result = take(driver->submit(request));
    EXPECT_EQ(result.task_counter, 1u);
    EXPECT_EQ(bench.read(out, expected.size()), expected);
    EXPECT_EQ(kernel->npu().stats(1).programs, 1u);  // it ran on core 1
    EXPECT_EQ(kernel->npu().stats(0).programs, 0u);
}

TEST(RknpuDrm, ChainedTasksRunInOneKick) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    const CubeShape shape{2, 2, 16};
    const uint64_t bytes = cube_bytes(shape);
    BufferObject& a = bench.buffer(bytes, kIoFlags);
    BufferObject& b = bench.buffer(bytes, kIoFlags);
    BufferObject& c = bench.buffer(bytes, kIoFlags);
    BufferObject& regcmd = bench.buffer(4096, kIoFlags);
    const std::vector<uint8_t> input = pattern_bytes(bytes, 3);
    bench.write(a, input);
    // Task 1: b = a + 3, linked to task 2: c = b - 10.
    const auto a32 = static_cast<uint32_t>(a.dma_addr), b32 = static_cast<uint32_t>(b.dma_addr),
               c32 = static_cast<uint32_t>(c.dma_addr);
    const hw::RegcmdBuilder second = dpu_add_task(b32, c32, shape, -10);
    const uint64_t second_offset = 1024;
    const hw::RegcmdBuilder first =
        dpu_add_task(a32, b32, shape, 3, static_cast<uint32_t>(regcmd.dma_addr + second_offset),
                     hw::pc_data_amount(static_cast<uint32_t>(second.body_words()), kernel->soc().pc_amount_scale));
    SubmitRequest request;
    request.tasks = {bench.task(regcmd, 0, first, kDpuEnable, kDpuIntMask),
                     bench.task(regcmd, second_offset, second, kDpuEnable, kDpuIntMask)};
    const SubmitResult result = take(driver->submit(request));
    EXPECT_EQ(result.task_counter, 2u);
    EXPECT_EQ(kernel->npu().stats(0).programs, 1u);
    EXPECT_EQ(bench.read(c, bytes), expected_add(expected_add(input, 3), -10));
}

TEST(RknpuDrm, LongJobsAreCommittedInChunks) {
    // A profile that commits at most two tasks per kick: five chained tasks
    // need three kicks, each started from the chunk's first task.
    hw::SocProfile soc = *hw::find_soc("rk3588");
    soc.max_tasks_per_kick = 2;
    auto kernel = std::make_shared<mock::MockKernel>(soc);
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    const CubeShape shape{2, 1, 16};
    const uint64_t bytes = cube_bytes(shape);
    constexpr int kTasks = 5;
    std::vector<BufferObject*> cubes;
    for (int i = 0; i <= kTasks; ++i) cubes.push_back(&bench.buffer(bytes, kIoFlags));
    BufferObject& regcmd = bench.buffer(kTasks * 512, kIoFlags);
    const std::vector<uint8_t> input = pattern_bytes(bytes, 5);
    bench.write(*cubes[0], input);
    SubmitRequest request;
    for (int i = 0; i < kTasks; ++i) {
        const bool last = i + 1 == kTasks;
        const hw::RegcmdBuilder probe = dpu_add_task(0, 0, shape, 1);
        const auto next = last ? 0u : static_cast<uint32_t>(regcmd.dma_addr + 512u * (i + 1));
        const uint32_t amount = last ? 0u : hw::pc_data_amount(static_cast<uint32_t>(probe.body_words()), soc.pc_amount_scale);
        request.tasks.push_back(bench.task(regcmd, 512u * i,
                                           dpu_add_task(static_cast<uint32_t>(cubes[i]->dma_addr),
                                                        static_cast<uint32_t>(cubes[i + 1]->dma_addr), shape, 1, next, amount),
                                           kDpuEnable, kDpuIntMask));
    }
    const SubmitResult result = take(driver->submit(request));
    EXPECT_EQ(result.task_counter, static_cast<uint32_t>(kTasks));
    EXPECT_EQ(kernel->npu().stats(0).programs, 3u);
    EXPECT_EQ(bench.read(*cubes[kTasks], bytes), expected_add(input, kTasks));
}

TEST(RknpuDrm, ThreeCoresRunTheirOwnTaskRanges) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    const CubeShape shape{4, 2, 16};
    const uint64_t bytes = cube_bytes(shape);
    BufferObject& regcmd = bench.buffer(3 * 1024, kIoFlags);
    SubmitRequest request;
    std::vector<BufferObject*> outs;
    std::vector<std::vector<uint8_t>> inputs;
    for (int core = 0; core < 3; ++core) {
        BufferObject& in = bench.buffer(bytes, kIoFlags);
        outs.push_back(&bench.buffer(bytes, kIoFlags));
        inputs.push_back(pattern_bytes(bytes, 10 + core));
        bench.write(in, inputs.back());
        request.tasks.push_back(bench.task(regcmd, 1024u * core,
                                           dpu_add_task(static_cast<uint32_t>(in.dma_addr),
                                                        static_cast<uint32_t>(outs.back()->dma_addr), shape, 20 * (core + 1)),
                                           kDpuEnable, kDpuIntMask));
        request.core_tasks[static_cast<size_t>(core)] = TaskRange{static_cast<uint32_t>(core), 1};
    }
    request.core_mask = RKNPU_CORE0_MASK | RKNPU_CORE1_MASK | RKNPU_CORE2_MASK;
    const SubmitResult result = take(driver->submit(request));
    EXPECT_EQ(result.task_counter, 3u);
    for (int core = 0; core < 3; ++core) {
        EXPECT_EQ(kernel->npu().stats(core).programs, 1u) << "core " << core;
        EXPECT_EQ(bench.read(*outs[static_cast<size_t>(core)], bytes), expected_add(inputs[static_cast<size_t>(core)], 20 * (core + 1)))
            << "core " << core;
    }
}

TEST(RknpuDrm, TwoCoreMaskNeedsRangesAndRunsBoth) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob first, second;
    first.prepare(bench, kIoFlags, 1);
    second.prepare(bench, kIoFlags, 2);
    SubmitRequest request;
    request.tasks = {first.request.tasks[0], second.request.tasks[0]};
    request.core_mask = RKNPU_CORE0_MASK | RKNPU_CORE1_MASK;
    auto refused = driver->submit(request);  // no ranges for a two-core mask
    ASSERT_FALSE(refused.is_ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    request.core_tasks[0] = TaskRange{0, 1};
    request.core_tasks[1] = TaskRange{1, 1};
    EXPECT_EQ(take(driver->submit(request)).task_counter, 2u);
    EXPECT_EQ(bench.read(*first.out, first.input.size()), first.expected());
    EXPECT_EQ(bench.read(*second.out, second.input.size()), second.expected());
}

TEST(RknpuDrm, SynchronousEmulatorWorksToo) {
    // Without worker threads the kick write runs the program and raises the
    // "interrupt" before it returns; the job runner must cope with both.
    mock::MockOptions options;
    options.threaded = false;
    auto kernel = make_kernel("rk3588", options);
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, kIoFlags);
    for (int round = 0; round < 3; ++round) {
        EXPECT_EQ(take(driver->submit(job.request)).task_counter, 1u);
        EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
    }
    kernel->faults().hang_next_submit();
    job.request.timeout_ms = 50;
    EXPECT_EQ(driver->submit(job.request).status().code(), StatusCode::kDeadlineExceeded);
    EXPECT_EQ(take(driver->submit(job.request)).task_counter, 1u);
}

// RK3562: one core with the RK3588 register map in the emulator (the RK356x
// one does not run this DPU-only job; tests/npu/rk356x_conv_test.cc submits
// RK3568 programs through this driver).
TEST(RknpuDrm, SingleCoreSocRunsOnCoreZero) {
    auto kernel = make_kernel("rk3562");
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, kIoFlags);
    EXPECT_EQ(take(driver->submit(job.request)).task_counter, 1u);
    EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
}

TEST(RknpuDrm, SramBuffersComeFromThePool) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    const uint64_t total = take(driver->action(Action::kGetTotalSramSize));
    BufferRequest request;
    request.size = 64 * 1024;
    request.flags = buffer_flag::kTrySram;
    request.sram_limit = 16 * 1024;
    BufferObject bo = take(driver->create_buffer(request));
    EXPECT_EQ(bo.sram_size, 16u * 1024);
    EXPECT_EQ(take(driver->action(Action::kGetFreeSramSize)), total - 16 * 1024);
    ASSERT_OK(driver->destroy_buffer(&bo));
    EXPECT_EQ(take(driver->action(Action::kGetFreeSramSize)), total);
}

TEST(RknpuDrm, BuffersInAnotherDomainAreInvisibleToJobsOfDomainZero) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, kIoFlags);
    // Domain 5 is a separate address space: after a 1 MiB buffer there, the
    // next one sits at an address that nothing in domain 0 covers.
    BufferRequest request;
    request.size = 1 << 20;
    request.iommu_domain = 5;
    BufferObject pad = take(driver->create_buffer(request));
    request.size = 4096;
    BufferObject other = take(driver->create_buffer(request));
    EXPECT_EQ(pad.iommu_domain, 5);
    EXPECT_EQ(kernel->domain_mappings(5), 2u);
    SubmitRequest wrong = job.request;
    wrong.tasks = {bench.task(*job.regcmd, 2048,
                              dpu_add_task(static_cast<uint32_t>(job.in->dma_addr), static_cast<uint32_t>(other.dma_addr),
                                           job.shape, 1),
                              kDpuEnable, kDpuIntMask)};
    auto faulted = driver->submit(wrong);  // runs in domain 0
    ASSERT_FALSE(faulted.is_ok());
    EXPECT_NE(faulted.status().message().find("errno 14"), std::string::npos) << faulted.status().message();
    wrong.iommu_domain = 5;  // in domain 5 the input and the stream are missing instead
    EXPECT_FALSE(driver->submit(wrong).is_ok());
    ASSERT_OK(driver->destroy_buffer(&other));
    ASSERT_OK(driver->destroy_buffer(&pad));
    EXPECT_EQ(take(driver->submit(job.request)).task_counter, 1u);
}

TEST(RknpuMisc, BasicPath) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel, /*misc=*/true);
    ASSERT_NE(driver, nullptr);
    EXPECT_STREQ(driver->backend_name(), "rknpu-misc");
    const DriverIdentity id = take(driver->identify());
    EXPECT_EQ(id.name, "rknpu");
    EXPECT_EQ(id.version, "0.9.8");
    EXPECT_EQ(id.hw_version, kernel->soc().hw_version);
    {
        Bench bench(*driver);
        AddJob job;
        job.prepare(bench, buffer_flag::kCacheable);  // NON_CONTIGUOUS is refused by the DMA heap
        EXPECT_GT(static_cast<int>(job.in->handle), 0);  // a dma-buf fd
        EXPECT_EQ(take(driver->submit(job.request)).task_counter, 1u);
        EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
        BufferRequest contiguous_only;
        contiguous_only.size = 4096;
        contiguous_only.flags = buffer_flag::kNonContiguous;
        auto refused = driver->create_buffer(contiguous_only);
        ASSERT_FALSE(refused.is_ok());
        EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    }
    driver.reset();  // the task buffer goes with the driver
    EXPECT_EQ(kernel->live_objects(), 0u);
    EXPECT_EQ(kernel->open_files(), 0u);
}

}  // namespace
}  // namespace rknn::driver::testing
