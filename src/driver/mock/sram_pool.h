// The NPU's share of system SRAM as the vendor driver manages it: a bitmap of
// 4 KiB chunks (debugfs `mm` shows one bit per chunk, hw-facts 1.1) from which
// TRY_ALLOC_SRAM buffers take one contiguous run.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace rknn::driver::mock {

class SramPool {
public:
    static constexpr uint64_t kChunk = 4096;

    explicit SramPool(uint64_t bytes);

    // Offset of a contiguous run of `bytes` (rounded up to chunks), or nothing.
    std::optional<uint64_t> allocate(uint64_t bytes);
    void release(uint64_t offset, uint64_t bytes);
    uint64_t total_bytes() const { return used_.size() * kChunk; }
    uint64_t free_bytes() const;

private:
    std::vector<bool> used_;
};

}  // namespace rknn::driver::mock
