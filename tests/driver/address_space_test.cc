// The mock IOMMU space keeps a buffer's host bytes while a job runs: another
// client may free the buffer mid-job (the kernel lock is released while jobs
// run), and the emulator still holds pointers that resolve() returned.
#include <gtest/gtest.h>

#include <memory>

#include "driver/mock/address_space.h"
#include "driver/mock/mock_memory.h"

namespace rknn::driver::testing {
namespace {

using mock::AddressSpace;
using mock::MockMemory;

// One buffer mapped into a fresh space, held by the mapping alone.
class AddressSpaceTest : public ::testing::Test {
protected:
    void SetUp() override {
        int err = 0;
        std::shared_ptr<MockMemory> memory = MockMemory::create(8192, false, &err);
        ASSERT_TRUE(memory) << "memfd failed: " << err;
        watch_ = memory;
        iova_ = space_.map(memory->device(), memory->size(), memory);
        ASSERT_NE(iova_, 0u);
    }
    bool freed() const { return watch_.expired(); }

    AddressSpace space_;
    std::weak_ptr<MockMemory> watch_;
    uint64_t iova_ = 0;
};

TEST_F(AddressSpaceTest, UnmapWithoutAJobFreesAtOnce) {
    EXPECT_FALSE(freed());  // the mapping holds it
    space_.unmap(iova_);
    EXPECT_TRUE(freed());
    EXPECT_EQ(space_.retired_count(), 0u);
}

TEST_F(AddressSpaceTest, BufferFreedDuringAJobFaultsButLivesUntilTheJobEnds) {
    space_.begin_job();
    uint8_t* bytes = space_.resolve(iova_, 4096, true);
    ASSERT_NE(bytes, nullptr);
    space_.unmap(iova_);  // another client's GEM close
    EXPECT_EQ(space_.resolve(iova_, 4096), nullptr) << "an unmapped address must fault at once";
    EXPECT_FALSE(freed()) << "freed while a job may still read it";
    EXPECT_EQ(space_.retired_count(), 1u);
    bytes[100] = 0x5a;  // the job goes on writing (ASan: no use-after-free)
    space_.end_job();
    EXPECT_TRUE(freed());
    EXPECT_EQ(space_.retired_count(), 0u);
}

TEST_F(AddressSpaceTest, OverlappingJobsFreeOnlyAfterTheLastEnds) {
    space_.begin_job();
    space_.begin_job();  // a second core's job in the same space
    space_.unmap(iova_);
    space_.end_job();
    EXPECT_FALSE(freed());
    space_.end_job();
    EXPECT_TRUE(freed());
}

}  // namespace
}  // namespace rknn::driver::testing
