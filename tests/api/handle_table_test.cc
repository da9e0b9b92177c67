#include "api/handle_table.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace {

using rknn::api::HandleKind;
using rknn::api::HandleObject;
using rknn::api::HandleTable;

class Counted : public HandleObject {
public:
    explicit Counted(int* live) : live_(live) { ++*live_; }
    ~Counted() override { --*live_; }
    HandleKind kind() const override { return HandleKind::kContext; }

private:
    int* live_;
};

TEST(HandleTable, HandlesAreNeverZeroAndNeverRepeat) {
    int live = 0;  // before the table: its objects count down here when it goes
    HandleTable table;
    std::set<rknn_context> seen;
    for (int i = 0; i < 20000; ++i) {
        const rknn_context handle = table.insert(std::make_shared<Counted>(&live));
        ASSERT_NE(handle, 0u);
        ASSERT_TRUE(seen.insert(handle).second) << "handle reissued at " << i;
        if (i % 2 == 0) table.remove(handle, HandleKind::kContext);  // freed handles stay retired
    }
    EXPECT_EQ(table.size(), 10000u);
    EXPECT_EQ(live, 10000);
}

TEST(HandleTable, RemovedAndUnknownHandlesAreNotFound) {
    int live = 0;
    HandleTable table;
    const rknn_context handle = table.insert(std::make_shared<Counted>(&live));
    EXPECT_NE(table.find(handle, HandleKind::kContext), nullptr);
    EXPECT_EQ(table.find(handle, HandleKind::kMatmul), nullptr) << "kind must match";
    EXPECT_EQ(table.find(0, HandleKind::kContext), nullptr);
    EXPECT_EQ(table.find(handle + 1, HandleKind::kContext), nullptr);
    EXPECT_NE(table.remove(handle, HandleKind::kContext), nullptr);
    EXPECT_EQ(live, 0) << "the object dies with its last reference";
    EXPECT_EQ(table.find(handle, HandleKind::kContext), nullptr);
    EXPECT_EQ(table.remove(handle, HandleKind::kContext), nullptr);
}

TEST(HandleTable, ALookupKeepsTheObjectAliveAcrossRemove) {
    int live = 0;
    HandleTable table;
    const rknn_context handle = table.insert(std::make_shared<Counted>(&live));
    std::shared_ptr<HandleObject> in_use = table.find(handle, HandleKind::kContext);
    table.remove(handle, HandleKind::kContext);
    EXPECT_EQ(live, 1);
    in_use.reset();
    EXPECT_EQ(live, 0);
}

TEST(HandleTable, ConcurrentInsertAndRemoveGiveDistinctHandles) {
    HandleTable table;
    constexpr int kThreads = 4;
    constexpr int kPerThread = 2000;
    std::vector<std::vector<rknn_context>> issued(kThreads);
    std::vector<std::thread> threads;
    struct Plain : HandleObject {
        HandleKind kind() const override { return HandleKind::kMatmul; }
    };
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kPerThread; ++i) {
                const rknn_context handle = table.insert(std::make_shared<Plain>());
                issued[t].push_back(handle);
                if (i % 3 == 0) table.remove(handle, HandleKind::kMatmul);
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    std::set<rknn_context> all;
    for (const auto& list : issued) all.insert(list.begin(), list.end());
    EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
    EXPECT_EQ(all.count(0), 0u);
}

}  // namespace
