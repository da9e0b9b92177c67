#include "hw/rk356x_dialect.h"

namespace rknn::hw::rk356x {

namespace {

// CORE registers from MISC_CFG on: the table's offset minus one slot.
constexpr uint16_t kCoreShiftedFirst = reg::CORE_MISC_CFG;  // 0x3010 in the table, 0x300C on the wire
constexpr uint16_t kCoreEnd = 0x4000;
constexpr uint16_t kSlot = 4;

bool core_shifted(uint16_t table) { return table >= kCoreShiftedFirst && table < kCoreEnd; }

}  // namespace

bool wire_offset(uint16_t table, uint16_t* wire) {
    if (table == reg::CORE_MAC_GATING) return false;
    const uint16_t w = core_shifted(table) ? static_cast<uint16_t>(table - kSlot) : table;
    if (find_register(table) == nullptr) return false;
    *wire = w;
    return true;
}

bool rk356x_only(uint16_t table) {
    return block_of(table) == Block::kCmac || table == reg::DPU_RDMA_RDMA_EW_LINE_STRIDE;
}

DecodedWord decode_word(uint64_t word, const DecodeRules& rules) {
    DecodeRules relaxed = rules;
    relaxed.require_known_register = false;  // checked below, on the mapped offset
    DecodedWord d = hw::decode_word(word, relaxed);
    if (d.kind != WordKind::kWrite || d.block == Block::kPc) return d;
    uint16_t table = 0;
    if (table_offset(d.reg, &table)) {
        d.reg = table;
    } else if (rules.require_known_register) {
        d.kind = WordKind::kInvalid;
        d.problem = "register offset is not in the RK356x register map";
    }
    return d;
}

bool table_offset(uint16_t wire, uint16_t* table) {
    const bool core = wire >= kCoreShiftedFirst - kSlot && wire < kCoreEnd - kSlot;
    const uint16_t t = core ? static_cast<uint16_t>(wire + kSlot) : wire;
    if (find_register(t) == nullptr) return false;
    *table = t;
    return true;
}

}  // namespace rknn::hw::rk356x
