// Writes one task's regcmd stream and remembers which words hold device
// addresses, so a stream generated once can be patched when its buffers are
// placed or move (external memory, shared internal memory).
#pragma once

#include <cstdint>
#include <vector>

#include "hw/regcmd.h"

namespace rknn::npu {

// A device address: `offset` bytes into buffer `buffer` (an index the caller
// assigns), or, with buffer == kAbsolute, the address itself (hand-built
// programs in tests).
struct BufferRef {
    static constexpr int32_t kAbsolute = -1;
    int32_t buffer = kAbsolute;
    uint64_t offset = 0;

    BufferRef() = default;
    BufferRef(uint64_t absolute_address) : offset(absolute_address) {}  // NOLINT: plain addresses read naturally
    BufferRef(int32_t buffer_index, uint64_t byte_offset) : buffer(buffer_index), offset(byte_offset) {}

    BufferRef plus(uint64_t bytes) const { return BufferRef(buffer, offset + bytes); }
    bool relocatable() const { return buffer != kAbsolute; }
};

// The value field of word `word` must receive base(buffer) + offset.
struct Relocation {
    uint32_t word = 0;
    int32_t buffer = 0;
    uint64_t offset = 0;
};

class TaskEmitter : public hw::RegcmdBuilder {
public:
    // Writes an address register: the absolute value, or 0 plus a relocation.
    void address(uint16_t reg, const BufferRef& ref);
    const std::vector<Relocation>& relocations() const { return relocations_; }

private:
    std::vector<Relocation> relocations_;
};

}  // namespace rknn::npu
