// The memory behind one mock buffer: a memfd, so the buffer can be handed out
// as a real file descriptor (dma-buf export, /dev/rknpu handles) and mapped
// with a real mmap.
//
// Two views model the CPU cache (hw-facts 1.5):
//   cpu()     the memfd pages: what every CPU mapping of the buffer sees;
//   device()  what the NPU reads and writes.
// For non-cacheable buffers both are the same bytes. For cacheable ones the
// NPU has its own copy: CPU writes reach it only through sync_to_device()
// (MEM_SYNC TO_DEVICE, rocket FINI_BO) and NPU writes reach the CPU only
// through sync_from_device() (MEM_SYNC FROM_DEVICE, rocket PREP_BO). A
// missing sync therefore shows up as stale data, as on a board.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>

namespace rknn::driver::mock {

class MockMemory {
public:
    // `size` must be a multiple of the page size. Returns nullptr and sets
    // *out_err (a negative errno) when the memfd or a mapping fails.
    static std::shared_ptr<MockMemory> create(uint64_t size, bool separate_device_view, int* out_err);
    ~MockMemory();
    MockMemory(const MockMemory&) = delete;
    MockMemory& operator=(const MockMemory&) = delete;

    uint64_t size() const { return size_; }
    int memfd() const { return memfd_; }
    uint8_t* cpu() const { return cpu_; }
    uint8_t* device() const { return device_; }
    bool separate_device_view() const { return device_ != cpu_; }

    // Copies [offset, offset + length) between the views (clamped to the buffer).
    void sync_to_device(uint64_t offset, uint64_t length);
    void sync_from_device(uint64_t offset, uint64_t length);

    // A number, unique across the process's buffers, that changes whenever
    // the device view may have changed: a sync to the device or a device
    // write (note_device_write). 0 when the views are one (CPU writes reach
    // the device unseen), so a reader that caches what it derived from the
    // bytes must compare them.
    uint64_t device_version() const { return separate_device_view() ? device_version_.load() : 0; }
    void note_device_write();

    // Identity of the memfd, to recognise a dma-buf fd handed back for import.
    bool same_file(dev_t dev, ino_t ino) const { return dev == dev_ && ino == ino_; }

private:
    MockMemory() = default;

    uint64_t size_ = 0;
    int memfd_ = -1;
    uint8_t* cpu_ = nullptr;
    uint8_t* device_ = nullptr;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
    std::atomic<uint64_t> device_version_{0};
};

}  // namespace rknn::driver::mock
