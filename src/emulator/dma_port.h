// The NPU's view of memory. Every read and write the emulated units make goes
// through a DmaPort, which resolves a device address (an IOVA) to host bytes
// only when the whole range lies inside one live buffer. Anything else is an
// IOMMU fault for the submit that caused it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rknn::emulator {

class DmaPort {
public:
    virtual ~DmaPort() = default;
    // Host pointer for [addr, addr + len), or nullptr when the range is not
    // inside one buffer mapped for the device (or not writable, for writes).
    virtual uint8_t* map(uint64_t addr, uint64_t len, bool for_write) = 0;
    // A number that changes whenever the bytes of the buffer holding `addr`
    // may have changed for the device, and differs between buffers; 0 when
    // the port cannot tell. Caches of what was derived from device memory
    // (packed weights) skip comparing the bytes while it stays the same.
    virtual uint64_t content_version(uint64_t /*addr*/) { return 0; }
};

// A simple device address space for tests and replays: buffers placed at
// chosen addresses, owned here.
class FlatDmaSpace : public DmaPort {
public:
    // Adds a zeroed buffer; returns its host bytes. Overlaps are refused (nullptr).
    uint8_t* add(uint64_t addr, uint64_t size, bool writable = true);
    // Adds a buffer holding `bytes`.
    uint8_t* add(uint64_t addr, const std::vector<uint8_t>& bytes, bool writable = true);
    uint8_t* map(uint64_t addr, uint64_t len, bool for_write) override;
    // Host bytes of the buffer that starts at `addr` (nullptr if none does).
    uint8_t* buffer_at(uint64_t addr);

private:
    struct Region {
        std::vector<uint8_t> bytes;
        bool writable;
    };
    std::map<uint64_t, Region> regions_;
};

}  // namespace rknn::emulator
