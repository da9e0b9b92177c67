// parallel_for: every index exactly once, shares on grain boundaries, and
// callers on several threads at once (each runs alone when the pool is busy).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "base/parallel.h"

namespace {

TEST(ParallelFor, CoversTheRangeOnceOnGrainBoundaries) {
    EXPECT_GE(rknn::host_threads(), 1);
    for (int64_t n : {0, 1, 7, 64, 1000, 4097}) {
        for (int64_t grain : {1, 3, 64, 5000}) {
            std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
            std::atomic<bool> misaligned{false};
            rknn::parallel_for(n, grain, [&](int64_t begin, int64_t end) {
                if (begin % grain != 0 || begin >= end) misaligned = true;
                for (int64_t i = begin; i < end; ++i) ++hits[static_cast<size_t>(i)];
            });
            EXPECT_FALSE(misaligned) << n << " / " << grain;
            for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i << " of " << n;
        }
    }
}

TEST(ParallelFor, ConcurrentCallersEachGetTheirWholeRange) {
    constexpr int kCallers = 4, kRounds = 50;
    std::vector<std::thread> callers;
    std::vector<int64_t> totals(kCallers, 0);
    for (int t = 0; t < kCallers; ++t) {
        callers.emplace_back([t, &totals] {
            for (int round = 0; round < kRounds; ++round) {
                std::atomic<int64_t> sum{0};
                rknn::parallel_for(1000, 10, [&](int64_t begin, int64_t end) {
                    int64_t local = 0;
                    for (int64_t i = begin; i < end; ++i) local += i;
                    sum += local;
                });
                totals[static_cast<size_t>(t)] += sum.load();
            }
        });
    }
    for (std::thread& c : callers) c.join();
    for (int64_t total : totals) EXPECT_EQ(total, int64_t{kRounds} * 999 * 1000 / 2);
}

TEST(ParallelFor, NestedCallsAndExceptions) {
    std::atomic<int64_t> total{0};
    rknn::parallel_for(8, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
            rknn::parallel_for(100, 10, [&](int64_t b, int64_t e) { total += e - b; });  // runs inside the share
    });
    EXPECT_EQ(total.load(), 800);
    EXPECT_THROW(rknn::parallel_for(64, 1,
                                    [](int64_t begin, int64_t) {
                                        if (begin > 0) throw std::runtime_error("a share failed");
                                    }),
                 std::runtime_error);
    // The pool still works afterwards.
    std::atomic<int64_t> after{0};
    rknn::parallel_for(64, 1, [&](int64_t begin, int64_t end) { after += end - begin; });
    EXPECT_EQ(after.load(), 64);
}

}  // namespace
