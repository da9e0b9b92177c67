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

std::shared_ptr<MockMemory> make_buffer() {
    int err = 0;
    auto memory = MockMemory::create(8192, false, &err);
    EXPECT_TRUE(memory) << "memfd failed: " << err;
    return memory;
}

TEST(AddressSpace, UnmapWithoutAJobFreesAtOnce) {
    AddressSpace space;
    auto memory = make_buffer();
    ASSERT_TRUE(memory);
    const std::weak_ptr<MockMemory> watch = memory;
    const uint64_t iova = space.map(memory->device(), memory->size(), memory);
    ASSERT_NE(iova, 0u);
    memory.reset();
    EXPECT_FALSE(watch.expired());  // the mapping holds it
    space.unmap(iova);
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(space.retired_count(), 0u);
}

TEST(AddressSpace, BufferFreedDuringAJobFaultsButLivesUntilTheJobEnds) {
    AddressSpace space;
    auto memory = make_buffer();
    ASSERT_TRUE(memory);
    const std::weak_ptr<MockMemory> watch = memory;
    const uint64_t iova = space.map(memory->device(), memory->size(), memory);
    ASSERT_NE(iova, 0u);
    memory.reset();

    space.begin_job();
    uint8_t* bytes = space.resolve(iova, 4096, true);
    ASSERT_NE(bytes, nullptr);
    space.unmap(iova);  // another client's GEM close
    EXPECT_EQ(space.resolve(iova, 4096), nullptr) << "an unmapped address must fault at once";
    EXPECT_FALSE(watch.expired()) << "freed while a job may still read it";
    EXPECT_EQ(space.retired_count(), 1u);
    bytes[100] = 0x5a;  // the job goes on writing (ASan: no use-after-free)
    space.end_job();
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(space.retired_count(), 0u);
}

TEST(AddressSpace, OverlappingJobsFreeOnlyAfterTheLastEnds) {
    AddressSpace space;
    auto memory = make_buffer();
    ASSERT_TRUE(memory);
    const std::weak_ptr<MockMemory> watch = memory;
    const uint64_t iova = space.map(memory->device(), memory->size(), memory);
    memory.reset();
    space.begin_job();
    space.begin_job();  // a second core's job in the same space
    space.unmap(iova);
    space.end_job();
    EXPECT_FALSE(watch.expired());
    space.end_job();
    EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace rknn::driver::testing
