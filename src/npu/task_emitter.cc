#include "npu/task_emitter.h"

namespace rknn::npu {

void TaskEmitter::address(uint16_t reg, const BufferRef& ref) {
    if (ref.relocatable()) {
        relocations_.push_back({static_cast<uint32_t>(size()), ref.buffer, ref.offset});
        write(reg, 0);
        return;
    }
    // Address registers are 32 bits wide; a wider absolute value is a caller bug
    // that write() cannot see, so keep only what the register holds.
    write(reg, static_cast<uint32_t>(ref.offset));
}

}  // namespace rknn::npu
