// The mock kernel's core scheduler: jobs on different cores run together,
// a core's jobs start in the order they asked, "any core" takes an idle one,
// one address space at a time, and a job with injected faults runs alone.
#include "driver/mock/core_scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace rknn::driver::mock {
namespace {

AddressSpace* space(uintptr_t n) { return reinterpret_cast<AddressSpace*>(n * 64); }

// Acquires on a thread of its own; `cores` is 0 until it got them.
struct Acquirer {
    Acquirer(CoreScheduler& s, uint32_t mask, AddressSpace* where, bool alone = false)
        : thread([this, &s, mask, where, alone] { cores = s.acquire(mask, where, alone); }) {}
    // A job that never starts would hang the join: the test fails loudly instead.
    ~Acquirer() {
        if (!started_within(std::chrono::milliseconds(5000))) {
            std::fprintf(stderr, "a job never got its cores\n");
            std::abort();
        }
        thread.join();
    }
    bool started_within(std::chrono::milliseconds limit) const {
        const auto end = std::chrono::steady_clock::now() + limit;
        while (cores.load() == 0 && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return cores.load() != 0;
    }
    std::atomic<uint32_t> cores{0};
    std::thread thread;
};

// Until `count` jobs wait, so that the next one queues behind them.
void wait_for_waiters(const CoreScheduler& s, int count) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (s.waiting() < count && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(s.waiting(), count);
}

constexpr std::chrono::milliseconds kShort{50};
constexpr std::chrono::milliseconds kLong{5000};

TEST(CoreScheduler, JobsOnDifferentCoresRunTogether) {
    std::atomic<AddressSpace*> active{nullptr};
    CoreScheduler s(3, &active);
    EXPECT_EQ(s.acquire(0x1, space(1), false), 0x1u);
    EXPECT_EQ(active.load(), space(1));
    EXPECT_EQ(s.acquire(0x6, space(1), false), 0x6u);
    EXPECT_EQ(s.running(), 2);
    s.release(0x1, 1000);
    s.release(0x6, 500);
    EXPECT_EQ(s.running(), 0);
    EXPECT_EQ(active.load(), nullptr);
    EXPECT_EQ(s.busy_ns(0), 1000);
    EXPECT_EQ(s.busy_ns(1), 500);
    EXPECT_EQ(s.busy_ns(2), 500);
}

TEST(CoreScheduler, AJobWaitsForItsCoreAndAnotherSpace) {
    std::atomic<AddressSpace*> active{nullptr};
    CoreScheduler s(3, &active);
    ASSERT_EQ(s.acquire(0x1, space(1), false), 0x1u);
    {
        Acquirer same_core(s, 0x1, space(1));
        wait_for_waiters(s, 1);
        Acquirer other_space(s, 0x4, space(2));
        EXPECT_FALSE(same_core.started_within(kShort));
        EXPECT_FALSE(other_space.started_within(kShort));
        s.release(0x1, 0);
        ASSERT_TRUE(same_core.started_within(kLong));
        EXPECT_EQ(same_core.cores.load(), 0x1u);
        EXPECT_FALSE(other_space.started_within(kShort));  // the first space is still in use
        s.release(0x1, 0);
        ASSERT_TRUE(other_space.started_within(kLong));
        EXPECT_EQ(active.load(), space(2));
        s.release(0x4, 0);
    }
}

TEST(CoreScheduler, AnyCoreTakesTheLowestIdleOne) {
    std::atomic<AddressSpace*> active{nullptr};
    CoreScheduler s(3, &active);
    ASSERT_EQ(s.acquire(0x1, space(1), false), 0x1u);
    EXPECT_EQ(s.acquire(0, space(1), false), 0x2u);
    EXPECT_EQ(s.acquire(0, space(1), false), 0x4u);
    Acquirer fourth(s, 0, space(1));
    EXPECT_FALSE(fourth.started_within(kShort));
    s.release(0x2, 0);
    ASSERT_TRUE(fourth.started_within(kLong));
    EXPECT_EQ(fourth.cores.load(), 0x2u);
    s.release(0x1, 0);
    s.release(0x2, 0);
    s.release(0x4, 0);
}

// A later job does not overtake an earlier waiter on a core they share.
TEST(CoreScheduler, WaitersKeepTheirOrderOnSharedCores) {
    std::atomic<AddressSpace*> active{nullptr};
    CoreScheduler s(3, &active);
    ASSERT_EQ(s.acquire(0x1, space(1), false), 0x1u);
    Acquirer both(s, 0x3, space(1));
    wait_for_waiters(s, 1);
    Acquirer second_core(s, 0x2, space(1));  // core 1 is idle, but owed to `both`
    wait_for_waiters(s, 2);
    EXPECT_FALSE(second_core.started_within(kShort));
    Acquirer third_core(s, 0x4, space(1));  // nobody waits for core 2
    EXPECT_TRUE(third_core.started_within(kLong));
    s.release(0x1, 0);
    ASSERT_TRUE(both.started_within(kLong));
    EXPECT_FALSE(second_core.started_within(kShort));
    s.release(0x3, 0);
    ASSERT_TRUE(second_core.started_within(kLong));
    s.release(0x2, 0);
    s.release(0x4, 0);
}

// A more urgent job goes ahead of one that waited longer.
TEST(CoreScheduler, UrgentPriorityGoesFirst) {
    std::atomic<AddressSpace*> active{nullptr};
    CoreScheduler s(3, &active);
    ASSERT_EQ(s.acquire(0x1, space(1), false), 0x1u);
    std::atomic<uint32_t> low_cores{0}, high_cores{0};
    std::thread low([&] { low_cores = s.acquire(0x1, space(1), false, /*priority=*/2); });
    wait_for_waiters(s, 1);
    std::thread high([&] { high_cores = s.acquire(0x1, space(1), false, /*priority=*/0); });
    wait_for_waiters(s, 2);
    auto wait_until = [](const auto& done) {
        const auto end = std::chrono::steady_clock::now() + kLong;
        while (!done() && std::chrono::steady_clock::now() < end)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    s.release(0x1, 0);  // the first job ends: one of the two starts
    wait_until([&] { return high_cores.load() != 0 || low_cores.load() != 0; });
    EXPECT_EQ(high_cores.load(), 0x1u);
    EXPECT_EQ(low_cores.load(), 0u);
    s.release(0x1, 0);  // that one ends: the other starts
    wait_until([&] { return high_cores.load() != 0 && low_cores.load() != 0; });
    s.release(0x1, 0);
    low.join();
    high.join();
}

TEST(CoreScheduler, AJobWithInjectedFaultsRunsAlone) {
    std::atomic<AddressSpace*> active{nullptr};
    CoreScheduler s(3, &active);
    ASSERT_EQ(s.acquire(0x1, space(1), false), 0x1u);
    Acquirer faulty(s, 0x2, space(1), /*alone=*/true);
    EXPECT_FALSE(faulty.started_within(kShort));
    s.release(0x1, 0);
    ASSERT_TRUE(faulty.started_within(kLong));
    Acquirer after(s, 0x4, space(1));
    EXPECT_FALSE(after.started_within(kShort));
    s.release(0x2, 0);
    EXPECT_TRUE(after.started_within(kLong));
    s.release(0x4, 0);
}

}  // namespace
}  // namespace rknn::driver::mock
