#include "runtime/device_buffers.h"

namespace rknn::runtime {

DeviceBuffers::Owned::~Owned() {
    if (bo.size != 0) (void)driver->driver->destroy_buffer(&bo);
}

std::shared_ptr<DeviceBuffers::Owned> DeviceBuffers::own(const driver::BufferObject& bo) const {
    auto owned = std::make_shared<Owned>();
    owned->driver = driver_;
    owned->bo = bo;
    return owned;
}

StatusOr<driver::BufferObject> DeviceBuffers::create_detached(uint64_t bytes) const {
    driver::BufferObject bo;
    if (bytes == 0) return bo;
    driver::BufferRequest request;
    request.size = bytes;
    request.flags = driver::buffer_flag::kCacheable | driver::buffer_flag::kZeroing;
    RKNN_ASSIGN_OR_RETURN(bo, driver_->driver->create_buffer(request));
    const Status mapped = driver_->driver->map_buffer(&bo);
    if (!mapped.is_ok()) {
        (void)driver_->driver->destroy_buffer(&bo);
        return mapped;
    }
    return bo;
}

StatusOr<std::unique_ptr<DeviceBuffers>> DeviceBuffers::create(std::shared_ptr<driver::OpenedDriver> driver,
                                                               const std::vector<uint64_t>& bytes) {
    std::unique_ptr<DeviceBuffers> buffers(new DeviceBuffers(std::move(driver)));
    for (uint64_t size : bytes) {
        RKNN_ASSIGN_OR_RETURN(driver::BufferObject bo, buffers->create_detached(size));
        buffers->buffers_.push_back(buffers->own(bo));
        buffers->requested_.push_back(size);
    }
    return buffers;
}

void DeviceBuffers::discard(driver::BufferObject* buffer) const {
    if (buffer->size != 0) (void)driver_->driver->destroy_buffer(buffer);
}

void DeviceBuffers::install(int32_t id, const driver::BufferObject& buffer, uint64_t bytes) {
    buffers_[static_cast<size_t>(id)] = own(buffer);  // the old one goes with its last reference
    requested_[static_cast<size_t>(id)] = bytes;
}

Status DeviceBuffers::share(int32_t id, const DeviceBuffers& other) {
    if (other.driver_ != driver_) return RKNN_INTERNAL_ERROR("buffers of two drivers cannot be shared");
    const auto index = static_cast<size_t>(id);
    if (index >= buffers_.size() || index >= other.buffers_.size())
        return RKNN_INTERNAL_ERROR("no buffer %d to share", id);
    buffers_[index] = other.buffers_[index];
    requested_[index] = other.requested_[index];
    return Status::ok();
}

bool DeviceBuffers::shares(int32_t id, const DeviceBuffers& other) const {
    const auto index = static_cast<size_t>(id);
    return index < buffers_.size() && index < other.buffers_.size() && buffers_[index] == other.buffers_[index];
}

std::vector<uint64_t> DeviceBuffers::bases() const {
    std::vector<uint64_t> bases;
    for (const auto& owned : buffers_) bases.push_back(owned->bo.dma_addr);
    return bases;
}

uint64_t DeviceBuffers::total_allocated() const {
    uint64_t total = 0;
    for (const auto& owned : buffers_) total += owned->bo.size;
    return total;
}

Status DeviceBuffers::flush(int32_t id) const {
    const driver::BufferObject& bo = object(id);
    if (bo.size == 0 || !bo.cacheable()) return Status::ok();
    return driver_->driver->sync_buffer(bo, driver::SyncDirection::kToDevice, 0, bo.size);
}

Status DeviceBuffers::invalidate(int32_t id) const {
    const driver::BufferObject& bo = object(id);
    if (bo.size == 0 || !bo.cacheable()) return Status::ok();
    return driver_->driver->sync_buffer(bo, driver::SyncDirection::kFromDevice, 0, bo.size);
}

}  // namespace rknn::runtime
