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
    // `iommu_domain`: the rknpu address space (0-15) the buffer is mapped in.
    static StatusOr<std::shared_ptr<IoMemory>> create(std::shared_ptr<driver::OpenedDriver> driver, uint64_t bytes,
                                                      bool cacheable, int32_t iommu_domain = 0);
    // Memory the client owns (rknn_create_mem_from_fd / _from_phys): the
    // first `bytes` at `virt`, the CPU mapping of dma-buf `fd` (-1: none) or
    // of physical memory at `phys` (0: unknown). With `virt` NULL the fd is
    // mapped here. Nothing of the client's is freed or closed here; only a
    // mapping made here is undone.
    static StatusOr<std::shared_ptr<IoMemory>> wrap(int fd, void* virt, uint64_t bytes, uint64_t phys = 0);
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
    // The live memory created here whose dma-buf `fd` is (a dup of) the fd
    // it exported, or null: a client's wrapper of our own buffer. A DRM
    // driver gives its own buffer's handle back on import, so such memory is
    // used through its creator instead.
    static std::shared_ptr<IoMemory> find_created(int fd);
    // The same for physical memory: the live memory created here whose NPU
    // address range holds [device, device + bytes) and whose mapping holds
    // [host, host + bytes) (a client's rknn_create_mem_from_phys of it).
    static std::shared_ptr<IoMemory> find_created(uint64_t device, const uint8_t* host, uint64_t bytes);
    // The driver that created the memory (null for client memory).
    const driver::OpenedDriver* opened_driver() const { return driver_.get(); }
    uint64_t physical_address() const { return phys_; }  // client physical memory, else 0
    // rknn_mem_sync: CPU writes to the device, or device writes to the CPU,
    // of `bytes` from `offset` (the runtime's own buffers) or of all of it.
    // Client memory is synced through its dma-buf (nothing to do without one).
    Status sync(driver::SyncDirection direction) const { return sync(direction, 0, bytes_); }
    Status sync(driver::SyncDirection direction, uint64_t offset, uint64_t bytes) const;

private:
    IoMemory(std::shared_ptr<driver::OpenedDriver> driver, uint64_t bytes) : driver_(std::move(driver)), bytes_(bytes) {}

    std::shared_ptr<driver::OpenedDriver> driver_;  // null for client memory
    driver::BufferObject bo_;
    uint8_t* host_ = nullptr;
    uint64_t bytes_ = 0;  // as requested (the buffer may be larger)
    int fd_ = -1;
    uint64_t phys_ = 0;
    uint64_t fd_device_ = 0, fd_inode_ = 0;  // the exported dma-buf's identity
    bool owns_fd_ = false;
    void* mapped_ = nullptr;  // a mapping of a client's fd made here
};

}  // namespace rknn::runtime
