#include "driver/mock/address_space.h"

#include <iterator>
#include <mutex>

namespace rknn::driver::mock {

AddressSpace::AddressSpace() : iova_(kBase, kLimit, kPage) {}

uint64_t AddressSpace::map(uint8_t* bytes, uint64_t size, std::shared_ptr<MockMemory> memory) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    const auto iova = iova_.allocate(size);
    if (!iova) return 0;
    mappings_[*iova] = Mapping{bytes, size, false, std::move(memory)};
    return *iova;
}

void AddressSpace::unmap(uint64_t iova) {
    std::shared_ptr<MockMemory> freed;  // released after the lock
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = mappings_.find(iova);
    if (it == mappings_.end()) return;
    const uint64_t size = it->second.size;
    freed = std::move(it->second.memory);
    mappings_.erase(it);
    if (running_jobs_.empty()) {
        iova_.release(iova, size);
    } else {
        retired_.push_back(Retired{iova, size, std::move(freed), next_job_});
    }
    lock.unlock();
}

uint64_t AddressSpace::begin_job() {
    std::unique_lock<std::shared_mutex> lock(mu_);
    const uint64_t job = next_job_++;
    running_jobs_.insert(job);
    return job;
}

void AddressSpace::end_job(uint64_t job) {
    std::vector<std::shared_ptr<MockMemory>> freed;  // released after the lock
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = running_jobs_.find(job);
    if (it != running_jobs_.end()) running_jobs_.erase(it);
    free_retired(&freed);
    lock.unlock();
}

void AddressSpace::free_retired(std::vector<std::shared_ptr<MockMemory>>* freed) {
    const uint64_t oldest = running_jobs_.empty() ? next_job_ : *running_jobs_.begin();
    for (auto it = retired_.begin(); it != retired_.end();) {
        if (oldest < it->before) {  // a job that began before the unmap still runs
            ++it;
            continue;
        }
        iova_.release(it->iova, it->size);
        if (it->memory) freed->push_back(std::move(it->memory));
        it = retired_.erase(it);
    }
}

size_t AddressSpace::retired_count() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return retired_.size();
}

std::map<uint64_t, AddressSpace::Mapping>::const_iterator AddressSpace::find(uint64_t addr) const {
    auto it = mappings_.upper_bound(addr);
    if (it == mappings_.begin()) return mappings_.end();
    --it;
    return addr - it->first < it->second.size ? it : mappings_.end();
}

uint8_t* AddressSpace::resolve(uint64_t addr, uint64_t len, bool for_write) const {
    if (len == 0 || addr + len < addr) return nullptr;
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = find(addr);
    if (it == mappings_.end() || it->second.blocked) return nullptr;
    const uint64_t offset = addr - it->first;
    if (len > it->second.size - offset) return nullptr;
    if (for_write && it->second.memory != nullptr) it->second.memory->note_device_write();
    return it->second.bytes + offset;
}

uint8_t* AddressSpace::resolve_to_end(uint64_t addr, uint64_t* len) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = find(addr);
    if (it == mappings_.end() || it->second.blocked) return nullptr;
    const uint64_t offset = addr - it->first;
    *len = it->second.size - offset;
    if (it->second.memory != nullptr) it->second.memory->note_device_write();  // the bytes are about to change
    return it->second.bytes + offset;
}

uint64_t AddressSpace::version(uint64_t addr) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = find(addr);
    if (it == mappings_.end() || it->second.memory == nullptr) return 0;
    return it->second.memory->device_version();
}

bool AddressSpace::block(uint64_t addr) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto it = find(addr);
    if (it == mappings_.end()) return false;
    mappings_[it->first].blocked = true;
    return true;
}

void AddressSpace::block_all() {
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (auto& entry : mappings_) entry.second.blocked = true;
}

void AddressSpace::unblock_all() {
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (auto& entry : mappings_) entry.second.blocked = false;
}

size_t AddressSpace::mapping_count() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return mappings_.size();
}

}  // namespace rknn::driver::mock

