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
    // Memory the client owns (rknn_create_mem_from_fd / _from_phys): the
    // first `bytes` at `virt`, the CPU mapping of dma-buf `fd` (-1: none) or
    // of physical memory. With `virt` NULL the fd is mapped here. Nothing of
    // the client's is freed or closed here; only a mapping made here is undone.
    static StatusOr<std::shared_ptr<IoMemory>> wrap(int fd, void* virt, uint64_t bytes);
    ~IoMemory();
    IoMemory(const IoMemory&) = delete;
    IoMemory& operator=(const IoMemory&) = delete;

    uint8_t* host() const { return host_; }
    uint64_t device_address() const { return bo_.dma_addr; }  // 0 for wrapped memory (not imported)
    uint64_t size() const { return bytes_; }
    // The exported dma-buf (owned here, closed with the memory), or -1 where
    // the driver cannot export one.
    int fd() const { return fd_; }
    bool cacheable() const { return bo_.cacheable(); }
    bool client_owned() const { return !driver_; }
    // rknn_mem_sync: CPU writes to the device, or device writes to the CPU.
    // Client memory is synced through its dma-buf (nothing to do without one).
    Status sync(driver::SyncDirection direction) const;

private:
    IoMemory(std::shared_ptr<driver::OpenedDriver> driver, uint64_t bytes) : driver_(std::move(driver)), bytes_(bytes) {}

    std::shared_ptr<driver::OpenedDriver> driver_;  // null for client memory
    driver::BufferObject bo_;
    uint8_t* host_ = nullptr;
    uint64_t bytes_ = 0;  // as requested (the buffer may be larger)
    int fd_ = -1;
    bool owns_fd_ = false;
    void* mapped_ = nullptr;  // a mapping of a client's fd made here
};

}  // namespace rknn::runtime
