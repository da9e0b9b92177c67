// One simulated IOMMU address space: the device addresses the NPU uses and
// the buffers behind them. The NPU's memory accesses (MockKernel's DmaPort)
// resolve here: a range is valid only when it lies entirely inside one live
// mapping; anything else is an IOMMU fault.
//
// The space is 4 GiB (the first MiB is left unmapped so that address 0 and
// small offsets from it always fault), so every buffer is also below 4 GiB as
// DMA32 and rocket's 32-bit regcmd addresses require.
//
// Thread-safe: jobs on several cores resolve addresses while other clients'
// ioctls map and unmap buffers. A buffer unmapped while a job runs in the
// space stops resolving at once (later accesses fault, as behind a real
// IOMMU), but its host bytes and its address range stay taken until every
// job that began before the unmap has ended: the emulator may still hold a
// pointer resolve() gave it, and a new buffer at the same address would
// turn that job's faults into silent accesses to someone else's memory.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <vector>

#include "driver/mock/iova_allocator.h"
#include "driver/mock/mock_memory.h"

namespace rknn::driver::mock {

class AddressSpace {
public:
    static constexpr uint64_t kBase = 1ull << 20;
    static constexpr uint64_t kLimit = 1ull << 32;
    static constexpr uint64_t kPage = 4096;

    AddressSpace();

    // Maps `size` bytes at `bytes` for the device; 0 when the space is full.
    // `memory`, when the bytes are its device view, versions them and is kept
    // alive while mapped (and, after an unmap, until the running jobs end).
    uint64_t map(uint8_t* bytes, uint64_t size, std::shared_ptr<MockMemory> memory = nullptr);
    void unmap(uint64_t iova);
    // Host bytes for [addr, addr + len), or nullptr (an IOMMU fault). A
    // write mapping counts as a device write to the buffer's version.
    uint8_t* resolve(uint64_t addr, uint64_t len, bool for_write = false) const;
    // The bytes from addr to the end of its mapping, for writing (*len set),
    // or nullptr.
    uint8_t* resolve_to_end(uint64_t addr, uint64_t* len) const;
    // MockMemory::device_version of the buffer holding addr (0: unknown).
    uint64_t version(uint64_t addr) const;

    // Fault injection: the mapping that contains `addr` stops resolving until
    // unblock_all(). False when no mapping contains it.
    bool block(uint64_t addr);
    // Blocks every mapping there is now.
    void block_all();
    void unblock_all();

    size_t mapping_count() const;

    // Brackets a job running in this space (several cores' jobs overlap):
    // begin_job() returns the job's number for end_job().
    uint64_t begin_job();
    void end_job(uint64_t job);
    // Buffers unmapped during a job and not yet freed (tests).
    size_t retired_count() const;

private:
    struct Mapping {
        uint8_t* bytes;
        uint64_t size;
        bool blocked;
        std::shared_ptr<MockMemory> memory;
    };
    std::map<uint64_t, Mapping>::const_iterator find(uint64_t addr) const;

    mutable std::shared_mutex mu_;
    IovaAllocator iova_;
    // Unmapped while jobs ran: freed once no job numbered below `before` runs.
    struct Retired {
        uint64_t iova, size;
        std::shared_ptr<MockMemory> memory;
        uint64_t before;
    };
    // Frees what no running job can reach any more (mu_ held); the memory
    // goes to `freed`, to be released after the lock.
    void free_retired(std::vector<std::shared_ptr<MockMemory>>* freed);

    std::map<uint64_t, Mapping> mappings_;
    uint64_t next_job_ = 1;
    std::multiset<uint64_t> running_jobs_;
    std::vector<Retired> retired_;
};

}  // namespace rknn::driver::mock
