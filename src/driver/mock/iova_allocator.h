// A first-fit allocator of device (IOVA) address ranges, as an IOMMU driver
// keeps one per address space. Freed ranges are merged with their neighbours
// and handed out again, so addresses get reused the way they do on a board.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace rknn::driver::mock {

class IovaAllocator {
public:
    // Manages [base, limit); every range is a multiple of `granule` bytes.
    IovaAllocator(uint64_t base, uint64_t limit, uint64_t granule);

    // The start of a free range of `size` bytes (rounded up to the granule).
    std::optional<uint64_t> allocate(uint64_t size);
    // Returns a range handed out by allocate() (same size as asked for).
    void release(uint64_t addr, uint64_t size);
    uint64_t free_bytes() const;

private:
    uint64_t round_up(uint64_t size) const { return (size + granule_ - 1) / granule_ * granule_; }

    uint64_t granule_;
    std::map<uint64_t, uint64_t> free_;  // start -> length, never adjacent
};

}  // namespace rknn::driver::mock
