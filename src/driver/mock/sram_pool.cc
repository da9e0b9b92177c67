#include "driver/mock/sram_pool.h"

namespace rknn::driver::mock {

SramPool::SramPool(uint64_t bytes) : used_(static_cast<size_t>(bytes / kChunk), false) {}

std::optional<uint64_t> SramPool::allocate(uint64_t bytes) {
    const size_t need = static_cast<size_t>((bytes + kChunk - 1) / kChunk);
    if (need == 0 || need > used_.size()) return std::nullopt;
    size_t run = 0;
    for (size_t i = 0; i < used_.size(); ++i) {
        run = used_[i] ? 0 : run + 1;
        if (run == need) {
            const size_t first = i + 1 - need;
            for (size_t j = first; j <= i; ++j) used_[j] = true;
            return static_cast<uint64_t>(first) * kChunk;
        }
    }
    return std::nullopt;
}

void SramPool::release(uint64_t offset, uint64_t bytes) {
    const size_t first = static_cast<size_t>(offset / kChunk);
    const size_t count = static_cast<size_t>((bytes + kChunk - 1) / kChunk);
    for (size_t j = first; j < first + count && j < used_.size(); ++j) used_[j] = false;
}

uint64_t SramPool::free_bytes() const {
    uint64_t chunks = 0;
    for (bool used : used_) chunks += used ? 0 : 1;
    return chunks * kChunk;
}

}  // namespace rknn::driver::mock
