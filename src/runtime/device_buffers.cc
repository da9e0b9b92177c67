#include "runtime/device_buffers.h"

namespace rknn::runtime {

StatusOr<driver::BufferObject> DeviceBuffers::create_detached(uint64_t bytes) const {
    driver::BufferObject bo;
    if (bytes == 0) return bo;
    driver::BufferRequest request;
    request.size = bytes;
    request.flags = driver::buffer_flag::kCacheable | driver::buffer_flag::kZeroing;
    RKNN_ASSIGN_OR_RETURN(bo, driver_->create_buffer(request));
    const Status mapped = driver_->map_buffer(&bo);
    if (!mapped.is_ok()) {
        (void)driver_->destroy_buffer(&bo);
        return mapped;
    }
    return bo;
}

StatusOr<std::unique_ptr<DeviceBuffers>> DeviceBuffers::create(driver::KernelDriver* driver,
                                                               const std::vector<uint64_t>& bytes) {
    std::unique_ptr<DeviceBuffers> buffers(new DeviceBuffers(driver));
    for (uint64_t size : bytes) {
        RKNN_ASSIGN_OR_RETURN(driver::BufferObject bo, buffers->create_detached(size));
        buffers->buffers_.push_back(bo);
        buffers->requested_.push_back(size);
    }
    return buffers;
}

void DeviceBuffers::discard(driver::BufferObject* buffer) const {
    if (buffer->size != 0) (void)driver_->destroy_buffer(buffer);
}

void DeviceBuffers::install(int32_t id, const driver::BufferObject& buffer, uint64_t bytes) {
    discard(&buffers_[static_cast<size_t>(id)]);
    buffers_[static_cast<size_t>(id)] = buffer;
    requested_[static_cast<size_t>(id)] = bytes;
}

DeviceBuffers::~DeviceBuffers() {
    for (driver::BufferObject& bo : buffers_)
        if (bo.size != 0) (void)driver_->destroy_buffer(&bo);
}

std::vector<uint64_t> DeviceBuffers::bases() const {
    std::vector<uint64_t> bases;
    for (const driver::BufferObject& bo : buffers_) bases.push_back(bo.dma_addr);
    return bases;
}

uint64_t DeviceBuffers::total_allocated() const {
    uint64_t total = 0;
    for (const driver::BufferObject& bo : buffers_) total += bo.size;
    return total;
}

Status DeviceBuffers::flush(int32_t id) const {
    const driver::BufferObject& bo = buffers_[static_cast<size_t>(id)];
    if (bo.size == 0 || !bo.cacheable()) return Status::ok();
    return driver_->sync_buffer(bo, driver::SyncDirection::kToDevice, 0, bo.size);
}

Status DeviceBuffers::invalidate(int32_t id) const {
    const driver::BufferObject& bo = buffers_[static_cast<size_t>(id)];
    if (bo.size == 0 || !bo.cacheable()) return Status::ok();
    return driver_->sync_buffer(bo, driver::SyncDirection::kFromDevice, 0, bo.size);
}

}  // namespace rknn::runtime
