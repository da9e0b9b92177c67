// The device buffers of one context, created through the kernel driver at
// rknn_init and mapped for the CPU: weights, internal tensors (with the
// scratch area), one per I/O region, and the regcmd streams last. All are
// cacheable, so every CPU write is flushed before a submit and every device
// write invalidated after it (the mock kernel models the two views).
//
// Each buffer is reference-counted, and each reference keeps the driver
// open: a duplicated context (rknn_dup_context) shares its original's
// weights buffer, which lives until the last context using it goes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "driver/kernel_driver_factory.h"

namespace rknn::runtime {

class DeviceBuffers {
public:
    // One buffer per entry of `bytes` (0: no buffer; its base reads as 0).
    static StatusOr<std::unique_ptr<DeviceBuffers>> create(std::shared_ptr<driver::OpenedDriver> driver,
                                                           const std::vector<uint64_t>& bytes);
    DeviceBuffers(const DeviceBuffers&) = delete;
    DeviceBuffers& operator=(const DeviceBuffers&) = delete;

    size_t count() const { return buffers_.size(); }
    uint8_t* host(int32_t id) const { return object(id).host; }
    uint64_t device_address(int32_t id) const { return object(id).dma_addr; }
    uint64_t size(int32_t id) const { return requested_[static_cast<size_t>(id)]; }
    // Device addresses indexed by buffer id (the relocation bases).
    std::vector<uint64_t> bases() const;
    uint64_t total_allocated() const;

    // A new zeroed, mapped buffer outside the table (empty for 0 bytes), to be
    // filled and then installed, or discarded.
    StatusOr<driver::BufferObject> create_detached(uint64_t bytes) const;
    void discard(driver::BufferObject* buffer) const;
    // Puts `buffer` (of `bytes` requested) in place of buffer `id`, releasing the old one.
    void install(int32_t id, const driver::BufferObject& buffer, uint64_t bytes);
    // Buffer `id` becomes `other`'s buffer `id`, shared (both on the same driver).
    Status share(int32_t id, const DeviceBuffers& other);
    // Whether buffer `id` is one object with `other`'s buffer `id`.
    bool shares(int32_t id, const DeviceBuffers& other) const;

    Status flush(int32_t id) const;       // CPU writes -> device
    Status invalidate(int32_t id) const;  // device writes -> CPU

private:
    // A buffer object destroyed with its last reference, while its driver is still open.
    struct Owned {
        std::shared_ptr<driver::OpenedDriver> driver;
        driver::BufferObject bo;
        ~Owned();
    };

    explicit DeviceBuffers(std::shared_ptr<driver::OpenedDriver> driver) : driver_(std::move(driver)) {}
    const driver::BufferObject& object(int32_t id) const { return buffers_[static_cast<size_t>(id)]->bo; }
    std::shared_ptr<Owned> own(const driver::BufferObject& bo) const;

    std::shared_ptr<driver::OpenedDriver> driver_;
    std::vector<std::shared_ptr<Owned>> buffers_;
    std::vector<uint64_t> requested_;
};

}  // namespace rknn::runtime
