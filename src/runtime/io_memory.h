// Memory a client asks the runtime for (rknn_create_mem, rknn_create_mem2):
// one device buffer, mapped for the CPU and exported as a dma-buf fd, so
// that other devices (RGA, a camera, a decoder) can fill it too. It lives as
// long as its descriptor or a context binding it (rknn_set_io_mem), whichever
// lasts longer, and keeps its driver open until then.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.h"
#include "driver/kernel_driver_factory.h"

namespace rknn::runtime {

class IoMemory {
public:
    static StatusOr<std::shared_ptr<IoMemory>> create(std::shared_ptr<driver::OpenedDriver> driver, uint64_t bytes,
                                                      bool cacheable);
    ~IoMemory();
    IoMemory(const IoMemory&) = delete;
    IoMemory& operator=(const IoMemory&) = delete;

    uint8_t* host() const { return bo_.host; }
    uint64_t device_address() const { return bo_.dma_addr; }
    uint64_t size() const { return bytes_; }
    // The exported dma-buf (owned here, closed with the memory), or -1 where
    // the driver cannot export one.
    int fd() const { return fd_; }
    bool cacheable() const { return bo_.cacheable(); }
    // rknn_mem_sync: CPU writes to the device, or device writes to the CPU.
    Status sync(driver::SyncDirection direction) const;

private:
    IoMemory(std::shared_ptr<driver::OpenedDriver> driver, uint64_t bytes) : driver_(std::move(driver)), bytes_(bytes) {}

    std::shared_ptr<driver::OpenedDriver> driver_;
    driver::BufferObject bo_;
    uint64_t bytes_ = 0;  // as requested (the buffer may be larger)
    int fd_ = -1;
};

}  // namespace rknn::runtime
