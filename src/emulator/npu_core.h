// One emulated NPU core: the program controller (PC) and the units it fires.
//
// The kernel driver programs the PC through MMIO (hw-facts 1.6 / 2.3):
// BASE_ADDRESS, REGISTER_AMOUNTS, INTERRUPT_MASK/CLEAR, TASK_CON,
// TASK_DMA_BASE_ADDR, then OPERATION_ENABLE. run() then executes the program
// (hw-facts 6.4): fetch a task's words, apply register writes to the write
// groups, and on the operation-enable word fire the blocks in its bitmap; the
// PC writes inside a stream (BASE_ADDRESS, REGISTER_AMOUNTS) are the link to
// the next task. After TASK_NUMBER tasks the interrupt status is raised.
//
// Malformed words, inconsistent registers and DMA outside live buffers stop
// the program with a fault (the result says which); nothing is thrown.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "emulator/conv_unit.h"
#include "emulator/dma_port.h"
#include "emulator/dpu_unit.h"
#include "emulator/lut.h"
#include "emulator/register_file.h"
#include "emulator/task_context.h"
#include "hw/regcmd.h"
#include "hw/soc_profile.h"

namespace rknn::emulator {

struct ProgramResult {
    bool completed = false;     // all TASK_NUMBER tasks ran
    FaultKind fault = FaultKind::kNone;
    std::string message;        // why the program stopped early
    uint32_t tasks_done = 0;
    uint64_t words_decoded = 0;
    uint64_t fault_address = 0;
};

struct CoreStats {
    uint64_t programs = 0;
    uint64_t tasks = 0;
    uint64_t words = 0;
};

class NpuCore {
public:
    NpuCore(const hw::SocProfile& soc, int index, DmaPort* dma, bool strict);

    // Power-on state: registers, groups, LUT, interrupt state.
    void reset();
    // MMIO. Returns true when the write starts a program (OP_EN 0 -> 1).
    bool mmio_write(uint32_t offset, uint32_t value);
    uint32_t mmio_read(uint32_t offset) const;

    // The OP_EN latch alone, for writes that arrive while a program runs
    // (the vendor driver writes 1 then 0 at once): no kick, no other state.
    void latch_op_enable(uint32_t value);

    // Executes the program the last kick started.
    ProgramResult run();

    const RegisterFile& registers() const { return regs_; }
    const LutTables& lut() const { return lut_; }
    const CoreStats& stats() const { return stats_; }
    int index() const { return index_; }

private:
    Status run_task(uint64_t addr, uint32_t fetch_words, uint32_t* link_addr, uint32_t* link_amount,
                    ProgramResult* result, TaskContext* ctx);
    Status fire(uint32_t mask, TaskContext* ctx);
    void raise_completion(uint32_t mask_fired, int dpu_group, int ppu_group);

    const hw::SocProfile& soc_;
    int index_;
    DmaPort* dma_;
    bool strict_;
    hw::DecodeRules rules_;
    RegisterFile regs_;
    LutTables lut_;
    std::array<uint32_t, 0x50 / 4> pc_{};  // PC registers 0x00..0x4c
    // Status registers the driver may poll while the core runs (atomic: the
    // program runs on the core's thread without the device lock).
    std::atomic<uint32_t> raw_status_{0};
    std::atomic<uint32_t> task_status_{0};
    uint32_t op_en_ = 0;
    ConvScratch conv_scratch_;
    ConvOutput conv_out_;
    DpuRowPass dpu_pass_;
    CoreStats stats_;
};

}  // namespace rknn::emulator
