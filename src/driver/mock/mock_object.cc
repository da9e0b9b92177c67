#include "driver/mock/mock_object.h"

namespace rknn::driver::mock {
namespace {
// Cookies look like the arm64 kernel pointers the vendor driver hands out.
constexpr uint64_t kCookieBase = 0xffffff8000000000ull;
constexpr uint64_t kCookieStride = 0x400;
}  // namespace

MockObject::~MockObject() {
    if (space) space->unmap(dma_addr);
    if (sram != nullptr && sram_size > 0) sram->release(sram_offset, sram_size);
    if (table != nullptr) table->remove(this);
}

bool MockObject::map_into(std::shared_ptr<AddressSpace> s) {
    dma_addr = s->map(memory->device(), size, memory);
    if (dma_addr == 0) return false;
    space = std::move(s);
    return true;
}

void ObjectTable::add(const std::shared_ptr<MockObject>& object) {
    object->id = next_id_++;
    object->cookie = kCookieBase + object->id * kCookieStride;
    object->mmap_offset = next_offset_;
    next_offset_ += object->size;
    object->table = this;
    objects_[object->cookie] = object.get();
}

void ObjectTable::remove(const MockObject* object) { objects_.erase(object->cookie); }

std::shared_ptr<MockObject> ObjectTable::find_cookie(uint64_t cookie) const {
    auto it = objects_.find(cookie);
    return it == objects_.end() ? nullptr : it->second->weak_from_this().lock();
}

std::shared_ptr<MockObject> ObjectTable::find_file(dev_t dev, ino_t ino, NodeKind kind) const {
    std::shared_ptr<MockObject> any;
    for (const auto& entry : objects_) {
        MockObject* o = entry.second;
        if (!o->memory || !o->memory->same_file(dev, ino)) continue;
        auto alive = o->weak_from_this().lock();
        if (!alive) continue;
        if (o->kind == kind) return alive;
        if (!any) any = alive;
    }
    return any;
}

}  // namespace rknn::driver::mock
