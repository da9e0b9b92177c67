// A DRM file's GEM handle table: small integers (from 1) naming objects for
// this open file only. One object gets one handle per file, so importing a
// buffer the file already has returns its existing handle (as drm_prime does).
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "driver/mock/mock_object.h"

namespace rknn::driver::mock {

class GemHandles {
public:
    uint32_t insert(const std::shared_ptr<MockObject>& object) {
        for (const auto& entry : handles_) {
            if (entry.second == object) return entry.first;
        }
        const uint32_t handle = next_++;
        handles_[handle] = object;
        return handle;
    }
    std::shared_ptr<MockObject> find(uint32_t handle) const {
        auto it = handles_.find(handle);
        return it == handles_.end() ? nullptr : it->second;
    }
    // The object mapped at DRM fake offset `offset`, if this file holds it.
    std::shared_ptr<MockObject> find_offset(uint64_t offset) const {
        for (const auto& entry : handles_) {
            if (entry.second->mmap_offset == offset) return entry.second;
        }
        return nullptr;
    }
    bool erase(uint32_t handle) { return handles_.erase(handle) > 0; }
    void clear() { handles_.clear(); }
    size_t size() const { return handles_.size(); }

private:
    std::map<uint32_t, std::shared_ptr<MockObject>> handles_;
    uint32_t next_ = 1;
};

}  // namespace rknn::driver::mock
