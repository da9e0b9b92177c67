#include "runtime/io_memory.h"

#include <unistd.h>

#include "base/log.h"

namespace rknn::runtime {

StatusOr<std::shared_ptr<IoMemory>> IoMemory::create(std::shared_ptr<driver::OpenedDriver> driver, uint64_t bytes,
                                                     bool cacheable) {
    if (bytes == 0) return RKNN_INVALID_ARGUMENT("a buffer of 0 bytes");
    std::shared_ptr<IoMemory> memory(new IoMemory(std::move(driver), bytes));
    driver::BufferRequest request;
    request.size = bytes;
    request.flags = driver::buffer_flag::kZeroing | (cacheable ? driver::buffer_flag::kCacheable : 0u);
    driver::KernelDriver& kd = *memory->driver_->driver;
    RKNN_ASSIGN_OR_RETURN(memory->bo_, kd.create_buffer(request));
    // From here on the destructor releases what was made.
    RKNN_RETURN_IF_ERROR(kd.map_buffer(&memory->bo_));
    StatusOr<int> fd = kd.export_dmabuf(memory->bo_);
    if (fd.is_ok()) {
        memory->fd_ = fd.value();
    } else {
        RKNN_LOG_AT(3, "rknn_create_mem: no dma-buf fd for the buffer (%s); fd is -1", fd.status().message().c_str());
    }
    return memory;
}

IoMemory::~IoMemory() {
    if (fd_ >= 0) ::close(fd_);
    if (bo_.size != 0) (void)driver_->driver->destroy_buffer(&bo_);
}

Status IoMemory::sync(driver::SyncDirection direction) const {
    if (!bo_.cacheable()) return Status::ok();
    return driver_->driver->sync_buffer(bo_, direction, 0, bo_.size);
}

}  // namespace rknn::runtime
