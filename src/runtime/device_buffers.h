// The device buffers of one context, indexed by relocation buffer id:
// weights, internal tensors (with the scratch area), one per I/O region, and
// the regcmd streams last. Mapped for the CPU and cacheable, so CPU writes
// are flushed before a submit and device writes invalidated after it, whole
// buffers or byte ranges (the mock kernel models the two views).
//
// An id names one of three things, and may change between them (the streams
// are relinked then):
//   - a buffer created here through the kernel driver (the default);
//   - a range of client memory (rknn_set_internal_mem, rknn_set_weight_mem,
//     an in-place rknn_set_io_mem): memory of another driver or a client's
//     dma-buf is imported, so that this driver's jobs hold it;
//   - a range of another id (I/O staging inside client internal memory),
//     which follows that id wherever it goes;
// or nothing yet (its base reads as 0 and its host address as null).
//
// What backs an id is reference-counted, and each reference keeps the driver
// open: a duplicated context (rknn_dup_context) shares its original's
// weights, which live until the last context using them goes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "driver/kernel_driver_factory.h"
#include "runtime/io_memory.h"

namespace rknn::runtime {

class DeviceBuffers {
public:
    // What an id stands for, to be put back later (see attach_*).
    struct Slot;

    // One buffer per entry of `bytes` (0: nothing yet). Buffer `sram_id`
    // (-1: none) asks for `sram_limit` bytes of NPU SRAM from its start.
    static StatusOr<std::unique_ptr<DeviceBuffers>> create(std::shared_ptr<driver::OpenedDriver> driver,
                                                           const std::vector<uint64_t>& bytes, int32_t sram_id = -1,
                                                           uint64_t sram_limit = 0);
    ~DeviceBuffers();
    DeviceBuffers(const DeviceBuffers&) = delete;
    DeviceBuffers& operator=(const DeviceBuffers&) = delete;

    size_t count() const { return slots_.size(); }
    // Null / 0 where the id has nothing yet.
    uint8_t* host(int32_t id) const;
    uint64_t device_address(int32_t id) const;
    uint64_t size(int32_t id) const;
    bool present(int32_t id) const { return host(id) != nullptr; }
    // Whether the id is a range of another id (synced with it).
    bool is_view(int32_t id) const;
    // Device addresses indexed by buffer id (the relocation bases).
    std::vector<uint64_t> bases() const;
    // Bytes of the buffers created here (not client memory).
    uint64_t total_allocated() const;
    // The part of it that buffer `id` is (0: client memory, or none).
    uint64_t allocated(int32_t id) const;
    // Bytes of buffer `id` the driver placed in SRAM (from its start).
    uint64_t sram_bytes(int32_t id) const;

    // A new zeroed, mapped buffer outside the table (empty for 0 bytes), to be
    // filled and then installed, or discarded.
    StatusOr<driver::BufferObject> create_detached(uint64_t bytes, uint32_t extra_flags = 0, uint64_t sram_limit = 0) const;
    void discard(driver::BufferObject* buffer) const;
    Status flush_detached(const driver::BufferObject& buffer) const;
    // Puts `buffer` (of `bytes` requested) in place of buffer `id`, releasing the old one.
    void install(int32_t id, const driver::BufferObject& buffer, uint64_t bytes);
    // Buffer `id` becomes `other`'s buffer `id`, shared (both on the same driver).
    Status share(int32_t id, const DeviceBuffers& other);
    // Whether buffer `id` is one object with `other`'s buffer `id`.
    bool shares(int32_t id, const DeviceBuffers& other) const;

    // Buffer `id` becomes `bytes` of client `memory` from `offset`. Fails
    // (and changes nothing) where the NPU cannot reach the memory: no fd to
    // import and no physical address, or an import the driver refuses.
    Status attach_client(int32_t id, std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes);
    // Buffer `id` becomes `bytes` of buffer `parent` from `offset`.
    void attach_view(int32_t id, int32_t parent, uint64_t offset, uint64_t bytes);
    std::shared_ptr<const Slot> slot(int32_t id) const { return slots_[static_cast<size_t>(id)]; }
    void restore(int32_t id, std::shared_ptr<const Slot> slot) { slots_[static_cast<size_t>(id)] = std::move(slot); }

    Status flush(int32_t id) const;       // CPU writes -> device
    Status invalidate(int32_t id) const;  // device writes -> CPU
    // The same for `bytes` of buffer `id` from `offset` (clipped to the buffer).
    Status flush(int32_t id, uint64_t offset, uint64_t bytes) const;
    Status invalidate(int32_t id, uint64_t offset, uint64_t bytes) const;

private:
    struct Backing;
    explicit DeviceBuffers(std::shared_ptr<driver::OpenedDriver> driver) : driver_(std::move(driver)) {}
    std::shared_ptr<const Slot> own(const driver::BufferObject& bo, uint64_t bytes) const;
    Status sync(int32_t id, driver::SyncDirection direction, uint64_t offset, uint64_t bytes) const;

    std::shared_ptr<driver::OpenedDriver> driver_;
    std::vector<std::shared_ptr<const Slot>> slots_;
};

}  // namespace rknn::runtime
