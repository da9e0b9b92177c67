#include "driver/mock/iova_allocator.h"

#include <iterator>

namespace rknn::driver::mock {

IovaAllocator::IovaAllocator(uint64_t base, uint64_t limit, uint64_t granule) : granule_(granule) {
    if (limit > base) free_[base] = limit - base;
}

std::optional<uint64_t> IovaAllocator::allocate(uint64_t size) {
    if (size == 0) return std::nullopt;
    const uint64_t need = round_up(size);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < need) continue;
        const uint64_t start = it->first;
        const uint64_t rest = it->second - need;
        free_.erase(it);
        if (rest > 0) free_[start + need] = rest;
        return start;
    }
    return std::nullopt;
}

void IovaAllocator::release(uint64_t addr, uint64_t size) {
    uint64_t start = addr;
    uint64_t length = round_up(size);
    auto next = free_.lower_bound(start);
    if (next != free_.end() && start + length == next->first) {
        length += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            length += prev->second;
            free_.erase(prev);
        }
    }
    free_[start] = length;
}

uint64_t IovaAllocator::free_bytes() const {
    uint64_t total = 0;
    for (const auto& range : free_) total += range.second;
    return total;
}

}  // namespace rknn::driver::mock
