#include "api/handle_table.h"

namespace rknn::api {
namespace {

// A bijection on 32-bit values (an invertible integer hash): distinct counters
// give distinct handles, and consecutive handles look unrelated, so a stale or
// made-up value is very unlikely to name a live object.
uint32_t scramble(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

}  // namespace

HandleTable& HandleTable::global() {
    static HandleTable table;
    return table;
}

rknn_context HandleTable::next_handle_locked() {
    // 2^32 - 1 handles before the counter wraps; a live one is never reissued.
    for (;;) {
        ++counter_;
        const rknn_context candidate = static_cast<rknn_context>(scramble(counter_));
        if (candidate != 0 && objects_.count(candidate) == 0) return candidate;
    }
}

rknn_context HandleTable::insert(std::shared_ptr<HandleObject> object) {
    std::lock_guard<std::mutex> lock(mutex_);
    const rknn_context handle = next_handle_locked();
    objects_.emplace(handle, std::move(object));
    return handle;
}

std::shared_ptr<HandleObject> HandleTable::find_any(rknn_context handle) const {
    if (handle == 0) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = objects_.find(handle);
    return it == objects_.end() ? nullptr : it->second;
}

std::shared_ptr<HandleObject> HandleTable::find(rknn_context handle, HandleKind kind) const {
    std::shared_ptr<HandleObject> object = find_any(handle);
    if (object && object->kind() != kind) return nullptr;
    return object;
}

std::shared_ptr<HandleObject> HandleTable::remove(rknn_context handle, HandleKind kind) {
    if (handle == 0) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = objects_.find(handle);
    if (it == objects_.end() || it->second->kind() != kind) return nullptr;
    std::shared_ptr<HandleObject> object = std::move(it->second);
    objects_.erase(it);
    return object;
}

size_t HandleTable::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return objects_.size();
}

}  // namespace rknn::api
