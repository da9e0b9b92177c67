#include "emulator/dma_port.h"

#include <cstring>
#include <iterator>

namespace rknn::emulator {

uint8_t* FlatDmaSpace::add(uint64_t addr, uint64_t size, bool writable) {
    if (size == 0 || addr + size < addr) return nullptr;
    auto next = regions_.lower_bound(addr);
    if (next != regions_.end() && next->first < addr + size) return nullptr;
    if (next != regions_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second.bytes.size() > addr) return nullptr;
    }
    Region& r = regions_[addr];
    r.bytes.assign(size, 0);
    r.writable = writable;
    return r.bytes.data();
}

uint8_t* FlatDmaSpace::add(uint64_t addr, const std::vector<uint8_t>& bytes, bool writable) {
    uint8_t* p = add(addr, bytes.size(), writable);
    if (p != nullptr) std::memcpy(p, bytes.data(), bytes.size());
    return p;
}

uint8_t* FlatDmaSpace::map(uint64_t addr, uint64_t len, bool for_write) {
    if (len == 0 || addr + len < addr) return nullptr;
    auto it = regions_.upper_bound(addr);
    if (it == regions_.begin()) return nullptr;
    --it;
    Region& r = it->second;
    const uint64_t offset = addr - it->first;
    if (offset + len > r.bytes.size()) return nullptr;
    if (for_write && !r.writable) return nullptr;
    return r.bytes.data() + offset;
}

uint8_t* FlatDmaSpace::buffer_at(uint64_t addr) {
    auto it = regions_.find(addr);
    return it == regions_.end() ? nullptr : it->second.bytes.data();
}

}  // namespace rknn::emulator
