#include "emulator/npu_core.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "emulator/dpu_unit.h"
#include "emulator/ppu_unit.h"
#include "hw/rk356x_dialect.h"

namespace rknn::emulator {

namespace r = hw::reg;
namespace f = hw::field;
namespace oe = hw::op_enable;

namespace {

constexpr uint32_t kVersionNum = 0x0000;  // VERSION + (VERSION_NUM & 0xffff) = the hw version

size_t pc_slot(uint32_t offset) { return offset / 4; }

}  // namespace

NpuCore::NpuCore(const hw::SocProfile& soc, int index, DmaPort* dma, bool strict)
    : soc_(soc), index_(index), dma_(dma), strict_(strict) {
    rules_.check_block_offset = soc.check_block_offset;
    rules_.require_known_register = strict;
    reset();
}

void NpuCore::reset() {
    regs_.reset();
    lut_.reset();
    pc_.fill(0);
    pc_[pc_slot(r::PC_VERSION)] = soc_.hw_version - kVersionNum;
    pc_[pc_slot(r::PC_VERSION_NUM)] = kVersionNum;
    pc_[pc_slot(r::PC_INTERRUPT_MASK)] = hw::irq::kClearAll;
    raw_status_ = 0;
    task_status_ = 0;
    op_en_ = 0;
}

bool NpuCore::mmio_write(uint32_t offset, uint32_t value) {
    if (offset >= 0x10000) return false;
    if (hw::block_of(offset) != hw::Block::kPc) {
        regs_.write(static_cast<uint16_t>(offset), value);
        return false;
    }
    if (offset >= pc_.size() * 4) return false;
    switch (offset) {
    case r::PC_INTERRUPT_CLEAR: raw_status_ &= ~value; return false;
    case r::PC_INTERRUPT_STATUS:
    case r::PC_INTERRUPT_RAW_STATUS:
    case r::PC_TASK_STATUS:
    case r::PC_VERSION:
    case r::PC_VERSION_NUM: return false;  // read-only
    case r::PC_OPERATION_ENABLE: {
        const bool start = (value & 1u) && !(op_en_ & 1u);
        op_en_ = value;
        pc_[pc_slot(offset)] = value;
        return start;
    }
    default: pc_[pc_slot(offset)] = value; return false;
    }
}

void NpuCore::latch_op_enable(uint32_t value) {
    op_en_ = value;
    pc_[pc_slot(r::PC_OPERATION_ENABLE)] = value;
}

uint32_t NpuCore::mmio_read(uint32_t offset) const {
    if (offset >= 0x10000) return 0;
    if (hw::block_of(offset) != hw::Block::kPc) {
        if ((offset & 0xfff) == 0x004) return regs_.s_pointer(hw::block_of(offset));
        return regs_.pending(static_cast<uint16_t>(offset));
    }
    switch (offset) {
    case r::PC_INTERRUPT_RAW_STATUS: return raw_status_;
    case r::PC_INTERRUPT_STATUS: return raw_status_ & pc_[pc_slot(r::PC_INTERRUPT_MASK)];
    default: break;
    }
    if (offset == soc_.task_status_offset) return task_status_;
    return offset < pc_.size() * 4 ? pc_[pc_slot(offset)] : 0;
}

void NpuCore::raise_completion(uint32_t mask_fired, int dpu_group, int ppu_group) {
    // The task's terminal unit reports, with the bit of the group it ran.
    if (mask_fired & oe::kPpu) {
        raw_status_ |= ppu_group ? hw::irq::kPpu1 : hw::irq::kPpu0;
    } else if (mask_fired & oe::kDpu) {
        raw_status_ |= dpu_group ? hw::irq::kDpu1 : hw::irq::kDpu0;
    }
}

Status NpuCore::fire(uint32_t mask, TaskContext* ctx) {
    const bool rk356x = soc_.arch == hw::NpuArch::kRk356x;
    // RK356x convolutions enable CMAC too (0x1f): the units must start together.
    if (rk356x && (mask & oe::kCna) && !(mask & oe::kCmac) && strict_)
        return ctx->bad_program("operation-enable 0x%02x starts the CNA without the CMAC (RK356x needs 0x1f)", mask);
    mask &= rk356x ? ~oe::kCmac : ~0u;
    const uint32_t conv = oe::kCna | oe::kCore | oe::kDpu;
    const int dpu_group = regs_.executer_group(hw::Block::kDpu);
    const int ppu_group = regs_.executer_group(hw::Block::kPpu);
    if ((mask & conv) == conv && !(mask & (oe::kPpu | oe::kPpuRdma))) {
        // On multi-core parts the CNA/CORE S_POINTER carry the core index
        // (bits 28-29); without it the task never completes on a board.
        if (strict_ && soc_.num_cores > 1) {
            for (hw::Block b : {hw::Block::kCna, hw::Block::kCore}) {
                const uint32_t index = (regs_.s_pointer(b) >> hw::s_pointer::kCoreIndexShift) & 3u;
                if (index != static_cast<uint32_t>(index_)) {
                    return ctx->bad_program("%s S_POINTER names core %u but the task runs on core %d (the hardware "
                                            "would not complete it)", hw::block_name(b), index, index_);
                }
            }
        }
        dpu_pass_.reset(ctx);
        RKNN_RETURN_IF_ERROR(run_conv_unit(*ctx, dpu_wants_window_sum(regs_), &conv_scratch_, &conv_out_, &dpu_pass_));
        RKNN_RETURN_IF_ERROR(dpu_pass_.finish(conv_out_));
    } else if ((mask == oe::kDpu || mask == (oe::kDpu | oe::kDpuRdma))) {
        RKNN_RETURN_IF_ERROR(run_dpu_unit(*ctx, nullptr));
    } else if (mask == (oe::kPpu | oe::kPpuRdma)) {
        RKNN_RETURN_IF_ERROR(run_ppu_unit(*ctx));
    } else {
        return ctx->unsupported("operation-enable bitmap 0x%02x (modelled: 0x0d/0x1d convolution, 0x08/0x18 DPU, "
                                "0x60 PPU)", mask);
    }
    const hw::Block blocks[] = {hw::Block::kCna, hw::Block::kCore, hw::Block::kDpu,
                                hw::Block::kDpuRdma, hw::Block::kPpu, hw::Block::kPpuRdma};
    const uint32_t bits[] = {oe::kCna, oe::kCore, oe::kDpu, oe::kDpuRdma, oe::kPpu, oe::kPpuRdma};
    for (size_t i = 0; i < 6; ++i) {
        if (mask & bits[i]) regs_.complete(blocks[i]);
    }
    if (rk356x && (mask & oe::kCna)) regs_.complete(hw::Block::kCmac);
    raise_completion(mask, dpu_group, ppu_group);
    return Status::ok();
}

Status NpuCore::run_task(uint64_t addr, uint32_t fetch_words, uint32_t* link_addr, uint32_t* link_amount,
                         ProgramResult* result, TaskContext* ctx) {
    bool armed = false;
    // The whole fetch at once when one mapped buffer holds it (one lookup in
    // the IOMMU's table instead of one per word); otherwise word by word, so
    // that a fault names the first word outside.
    const uint8_t* fetched = fetch_words > 0 ? ctx->dma.map(addr, 8ull * fetch_words, false) : nullptr;
    for (uint32_t i = 0; i < fetch_words; ++i) {
        const uint64_t word_addr = addr + 8ull * i;
        const uint8_t* p = fetched != nullptr ? fetched + 8ull * i : nullptr;
        if (p == nullptr) {
            RKNN_ASSIGN_OR_RETURN(p, ctx->map(word_addr, 8, false, "PC command fetch"));
        }
        uint64_t word;
        std::memcpy(&word, p, 8);
        ++result->words_decoded;
        // RK356x streams speak a dialect: their writes come back with the table's offsets.
        const bool rk356x = soc_.arch == hw::NpuArch::kRk356x;
        hw::DecodedWord d = rk356x ? hw::rk356x::decode_word(word, rules_) : hw::decode_word(word, rules_);
        if (!rk356x && strict_ && d.kind == hw::WordKind::kWrite && hw::rk356x::rk356x_only(d.reg)) {
            d.kind = hw::WordKind::kInvalid;
            d.problem = "a register only RK356x streams write";
        }
        switch (d.kind) {
        case hw::WordKind::kNop: break;
        case hw::WordKind::kInvalid:
            if (strict_) {
                ctx->fault = FaultKind::kDecode;
                char msg[160];
                std::snprintf(msg, sizeof(msg), "word %u (0x%016" PRIx64 ") at 0x%" PRIx64 ": %s", i, word, word_addr,
                              d.problem);
                return Status(StatusCode::kInvalidArgument, msg);
            }
            break;
        case hw::WordKind::kArm: armed = true; break;
        case hw::WordKind::kWrite:
            if (d.block == hw::Block::kPc) {
                if (d.reg == r::PC_BASE_ADDRESS) {
                    *link_addr = d.value;
                } else if (d.reg == r::PC_REGISTER_AMOUNTS) {
                    *link_amount = d.value;
                } else if (strict_) {
                    ctx->fault = FaultKind::kDecode;
                    return Status(StatusCode::kInvalidArgument,
                                  "a command stream may write only the PC link registers (0x10, 0x14), not " +
                                      hw::describe_write(d.reg, d.value));
                }
                break;
            }
            if (d.reg == r::DPU_LUT_ACCESS_CFG) lut_.write_access_cfg(d.value);
            if (d.reg == r::DPU_LUT_ACCESS_DATA) {
                // A LUT upload is hundreds of writes to this register in a row.
                // A word's decoding depends on its header only (op and
                // register, not the value), so the words after this one with
                // the same header go straight to the table.
                constexpr uint64_t kHeaderBits = 0xffff00000000ffffull;
                lut_.write_access_data(d.value);
                uint32_t last = d.value;
                while (fetched != nullptr && i + 1 < fetch_words) {
                    uint64_t next;
                    std::memcpy(&next, fetched + 8ull * (i + 1), 8);
                    if ((next & kHeaderBits) != (word & kHeaderBits)) break;
                    ++i;
                    ++result->words_decoded;
                    last = static_cast<uint32_t>(next >> 16);
                    lut_.write_access_data(last);
                }
                regs_.write(d.reg, last);
                break;
            }
            regs_.write(d.reg, d.value);
            break;
        case hw::WordKind::kOpEnable:
            if (strict_ && !armed) {
                ctx->fault = FaultKind::kDecode;
                return Status(StatusCode::kInvalidArgument, "operation-enable word without the 0x0041 marker before it");
            }
            return fire(d.value, ctx);
        }
    }
    ctx->fault = FaultKind::kDecode;
    char msg[160];
    std::snprintf(msg, sizeof(msg), "no operation-enable word in the %u words fetched from 0x%" PRIx64, fetch_words, addr);
    return Status(StatusCode::kInvalidArgument, msg);
}

ProgramResult NpuCore::run() {
    ProgramResult result;
    ++stats_.programs;
    const uint32_t task_con = pc_[pc_slot(r::PC_TASK_CON)];
    const uint32_t tasks = task_con & soc_.task_number_mask();
    const uint32_t count_clear_bit = 1u << (soc_.task_number_bits + 1);
    if (task_con & count_clear_bit) task_status_ = 0;
    uint64_t addr = pc_[pc_slot(r::PC_BASE_ADDRESS)] & ~0xfu;
    uint32_t fetch = hw::pc_fetch_words(pc_[pc_slot(r::PC_REGISTER_AMOUNTS)] & 0xffff, soc_.pc_amount_scale);
    const uint64_t dma_base = pc_[pc_slot(r::PC_TASK_DMA_BASE_ADDR)] & ~0xfu;
    TaskContext ctx{soc_, regs_, *dma_, lut_, strict_};
    if (tasks == 0) {
        result.fault = FaultKind::kBadProgram;
        result.message = "TASK_CON.TASK_NUMBER is 0";
        return result;
    }
    for (uint32_t t = 0; t < tasks; ++t) {
        uint32_t link_addr = 0, link_amount = 0;
        Status s = run_task(addr, fetch, &link_addr, &link_amount, &result, &ctx);
        if (!s.is_ok()) {
            result.fault = ctx.fault == FaultKind::kNone ? FaultKind::kBadProgram : ctx.fault;
            result.fault_address = ctx.fault_address;
            char where[64];
            std::snprintf(where, sizeof(where), "core %d task %u", index_, t);
            result.message = std::string(where) + ": " + s.message();
            if (result.fault == FaultKind::kIommuRead) raw_status_ |= hw::irq::kDmaReadError;
            if (result.fault == FaultKind::kIommuWrite) raw_status_ |= hw::irq::kDmaWriteError;
            break;
        }
        ++task_status_;
        ++result.tasks_done;
        ++stats_.tasks;
        if (t + 1 == tasks) break;
        if (link_addr == 0) {
            result.fault = FaultKind::kBadProgram;
            char msg[128];
            std::snprintf(msg, sizeof(msg), "core %d: task %u has no link to a next task, but TASK_NUMBER is %u",
                          index_, t, tasks);
            result.message = msg;
            break;
        }
        addr = (dma_base + link_addr) & ~0xfull;
        fetch = hw::pc_fetch_words(link_amount & 0xffff, soc_.pc_amount_scale);
    }
    stats_.words += result.words_decoded;
    result.completed = result.fault == FaultKind::kNone;
    return result;
}

}  // namespace rknn::emulator
