#include "api/mem_registry.h"

namespace rknn::api {

MemRegistry& MemRegistry::global() {
    static MemRegistry registry;
    return registry;
}

rknn_tensor_mem* MemRegistry::insert(std::shared_ptr<MemRecord> record) {
    rknn_tensor_mem* descriptor = &record->descriptor;
    std::lock_guard<std::mutex> lock(mutex_);
    records_[descriptor] = std::move(record);
    return descriptor;
}

std::shared_ptr<MemRecord> MemRegistry::find(const rknn_tensor_mem* mem) const {
    if (mem == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = records_.find(mem);
    return it == records_.end() ? nullptr : it->second;
}

std::shared_ptr<MemRecord> MemRegistry::remove(const rknn_tensor_mem* mem) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = records_.find(mem);
    if (it == records_.end()) return nullptr;
    std::shared_ptr<MemRecord> record = std::move(it->second);
    records_.erase(it);
    return record;
}

std::shared_ptr<runtime::IoMemory> MemRegistry::memory_holding(const void* p, uint64_t bytes) const {
    const auto at = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> lock(mutex_);
    std::shared_ptr<runtime::IoMemory> found;
    for (const auto& [descriptor, record] : records_) {
        const auto host = reinterpret_cast<uintptr_t>(record->memory->host());
        if (at < host || at - host + bytes > record->memory->size()) continue;
        // The runtime's own buffer owns the mapping; a client's wrapper of it does not.
        if (!record->memory->client_owned()) return record->memory;
        if (!found) found = record->memory;
    }
    return found;
}

}  // namespace rknn::api
