// Cached buffers behave as on a board: without a sync the NPU reads what was
// in memory before the CPU wrote (stale input) and the CPU reads what was in
// its cache before the NPU wrote (stale output); with the syncs both see
// fresh data. Non-cached buffers need no sync and refuse one.
#include <gtest/gtest.h>

#include "driver/mock/address_space.h"
#include "driver/mock/mock_memory.h"
#include "driver_test_util.h"

namespace rknn::driver::testing {
namespace {

constexpr uint8_t kOldOutput = 0x77;

class CacheSync : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        kernel_ = make_kernel();
        driver_ = std::string(GetParam()) == "rocket" ? open_rocket(kernel_) : open_rknpu(kernel_);
        ASSERT_NE(driver_, nullptr);
        bench_ = std::make_unique<Bench>(*driver_);
        job_.prepare(*bench_, buffer_flag::kCacheable);
        // The output starts as a known old value everywhere.
        bench_->write(*job_.out, std::vector<uint8_t>(job_.input.size(), kOldOutput));
    }
    void TearDown() override {
        bench_.reset();
        driver_.reset();
    }

    std::shared_ptr<mock::MockKernel> kernel_;
    std::unique_ptr<KernelDriver> driver_;
    std::unique_ptr<Bench> bench_;
    AddJob job_;
};

TEST_P(CacheSync, SyncedPathSeesFreshData) {
    ASSERT_TRUE(driver_->submit(job_.request).is_ok());
    EXPECT_EQ(bench_->read(*job_.out, job_.input.size()), job_.expected());
}

TEST_P(CacheSync, MissingSyncFromDeviceShowsTheOldOutput) {
    ASSERT_TRUE(driver_->submit(job_.request).is_ok());
    EXPECT_EQ(bench_->read(*job_.out, job_.input.size(), /*sync=*/false),
              std::vector<uint8_t>(job_.input.size(), kOldOutput));
    EXPECT_EQ(bench_->read(*job_.out, job_.input.size(), /*sync=*/true), job_.expected());
}

TEST_P(CacheSync, MissingSyncToDeviceFeedsTheNpuOldInput) {
    const std::vector<uint8_t> old_input = job_.input;
    const std::vector<uint8_t> new_input = pattern_bytes(old_input.size(), 99);
    bench_->write(*job_.in, new_input, /*sync=*/false);
    ASSERT_TRUE(driver_->submit(job_.request).is_ok());
    EXPECT_EQ(bench_->read(*job_.out, old_input.size()), expected_add(old_input, job_.addend));
    bench_->write(*job_.in, new_input, /*sync=*/true);
    ASSERT_TRUE(driver_->submit(job_.request).is_ok());
    EXPECT_EQ(bench_->read(*job_.out, old_input.size()), expected_add(new_input, job_.addend));
}

INSTANTIATE_TEST_SUITE_P(Backends, CacheSync, ::testing::Values("rknpu", "rocket"));

TEST(CacheSyncRknpu, RangeSyncMovesOnlyThatRange) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, buffer_flag::kCacheable);
    const size_t n = job.input.size();
    const std::vector<uint8_t> new_input = pattern_bytes(n, 42);
    bench.write(*job.in, new_input, /*sync=*/false);
    ASSERT_OK(driver->sync_buffer(*job.in, SyncDirection::kToDevice, 0, n / 2));
    ASSERT_TRUE(driver->submit(job.request).is_ok());
    std::vector<uint8_t> seen(new_input.begin(), new_input.begin() + static_cast<long>(n / 2));
    seen.insert(seen.end(), job.input.begin() + static_cast<long>(n / 2), job.input.end());
    EXPECT_EQ(bench.read(*job.out, n), expected_add(seen, job.addend));
}

TEST(CacheSyncRknpu, UncachedBuffersNeedNoSyncAndRefuseOne) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    AddJob job;
    job.prepare(bench, buffer_flag::kWriteCombine);
    ASSERT_TRUE(driver->submit(job.request).is_ok());
    EXPECT_EQ(bench.read(*job.out, job.input.size(), /*sync=*/false), job.expected());
    const Status refused = driver->sync_buffer(*job.out, SyncDirection::kFromDevice, 0, job.out->size);
    EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument) << refused.message();
}

// The device view's version (what the emulator's weight caches trust): it
// moves on a sync to the device and on a device write, not on reads or CPU
// writes, differs between buffers, and is 0 (unknown) for one shared view.
TEST(CacheSyncMock, DeviceVersionsFollowWhatTheDeviceCanSee) {
    int err = 0;
    auto cached = mock::MockMemory::create(8192, true, &err);
    auto other = mock::MockMemory::create(8192, true, &err);
    auto shared = mock::MockMemory::create(8192, false, &err);
    ASSERT_TRUE(cached && other && shared);
    mock::AddressSpace space;
    const uint64_t a = space.map(cached->device(), cached->size(), cached);
    const uint64_t b = space.map(other->device(), other->size(), other);
    const uint64_t c = space.map(shared->device(), shared->size(), shared);
    const uint64_t first = space.version(a);
    EXPECT_NE(first, 0u);
    EXPECT_NE(space.version(b), first);
    EXPECT_EQ(space.version(c), 0u);
    EXPECT_EQ(space.version(a + 100), first);       // any address inside
    ASSERT_NE(space.resolve(a, 64, false), nullptr);  // a device read
    cached->cpu()[0] = 1;                             // a CPU write, not synced
    EXPECT_EQ(space.version(a), first);
    cached->sync_from_device(0, 64);
    EXPECT_EQ(space.version(a), first);
    cached->sync_to_device(0, 64);
    const uint64_t synced = space.version(a);
    EXPECT_NE(synced, first);
    ASSERT_NE(space.resolve(a + 64, 64, true), nullptr);  // a device write
    EXPECT_NE(space.version(a), synced);
    EXPECT_EQ(space.version(0x10), 0u);  // unmapped
}

}  // namespace
}  // namespace rknn::driver::testing
