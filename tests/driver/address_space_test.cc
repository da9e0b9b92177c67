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
    const uint64_t job = space_.begin_job();
    uint8_t* bytes = space_.resolve(iova_, 4096, true);
    ASSERT_NE(bytes, nullptr);
    space_.unmap(iova_);  // another client's GEM close
    EXPECT_EQ(space_.resolve(iova_, 4096), nullptr) << "an unmapped address must fault at once";
    EXPECT_FALSE(freed()) << "freed while a job may still read it";
    EXPECT_EQ(space_.retired_count(), 1u);
    bytes[100] = 0x5a;  // the job goes on writing (ASan: no use-after-free)
    space_.end_job(job);
    EXPECT_TRUE(freed());
    EXPECT_EQ(space_.retired_count(), 0u);
}

// The freed range is not handed out again while the job runs: a new buffer
// elsewhere, so the job's stale address still faults.
TEST_F(AddressSpaceTest, AFreedAddressIsNotReusedDuringTheJob) {
    const uint64_t job = space_.begin_job();
    space_.unmap(iova_);
    int err = 0;
    std::shared_ptr<MockMemory> other = MockMemory::create(8192, false, &err);
    ASSERT_TRUE(other);
    const uint64_t next = space_.map(other->device(), other->size(), other);
    EXPECT_NE(next, iova_);
    EXPECT_EQ(space_.resolve(iova_, 64), nullptr);
    space_.end_job(job);
    space_.unmap(next);
}

// Jobs overlapping without end (several cores, one space): a buffer is freed
// once the jobs that began before its unmap are over, even while later
// ones still run.
TEST_F(AddressSpaceTest, OverlappingJobsFreeOnceTheEarlierOnesEnd) {
    const uint64_t first = space_.begin_job();
    const uint64_t second = space_.begin_job();  // a second core's job in the same space
    space_.unmap(iova_);
    const uint64_t later = space_.begin_job();  // began after the unmap
    space_.end_job(first);
    EXPECT_FALSE(freed()) << "the second job began before the unmap";
    space_.end_job(second);
    EXPECT_TRUE(freed()) << "only a job that began after the unmap still runs";
    space_.end_job(later);
}

}  // namespace
}  // namespace rknn::driver::testing
