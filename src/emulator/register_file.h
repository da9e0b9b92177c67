// One NPU core's block registers with their two register groups.
//
// Each processing block (CNA, CORE, DPU, DPU_RDMA, PPU, PPU_RDMA) has two
// copies of its registers (hw-facts 3.3-3.4). Writes land in the group the
// block's write pointer names; a fired block computes with the group its
// executer names; after the block finishes a task, both toggle when ping-pong
// is enabled in S_POINTER. State persists across tasks and submits, as on the
// hardware, until a reset.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hw/registers.h"

namespace rknn::emulator {

class RegisterFile {
public:
    RegisterFile();
    void reset();

    // A write from the command stream or MMIO to a block register (not PC).
    void write(uint16_t offset, uint32_t value);
    // The value the block computes with (its executer group).
    uint32_t exec(uint16_t offset) const;
    // The value in the write-pointer group (what an MMIO read returns).
    uint32_t pending(uint16_t offset) const;
    // Field helpers on the executer group.
    uint32_t exec(const hw::Field& f) const { return f.get(exec(f.reg)); }
    int32_t exec_signed(const hw::Field& f) const { return f.get_signed(exec(f.reg)); }

    // Called when a block finished a task: toggles its groups per S_POINTER.
    void complete(hw::Block block);
    int executer_group(hw::Block block) const;
    uint32_t s_pointer(hw::Block block) const;

private:
    static bool grouped(hw::Block block);
    static size_t slot(int group, uint16_t offset);

    struct PointerState {
        uint32_t config = 0;  // the PP_EN / PP_MODE bits last written
        int pointer = 0;
        int executer = 0;
    };
    std::array<PointerState, 16> pointers_;
    std::vector<uint32_t> values_;  // [group][offset / 4], offsets below 0x10000
};

}  // namespace rknn::emulator
