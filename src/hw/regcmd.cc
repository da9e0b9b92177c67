#include "hw/regcmd.h"

#include <cinttypes>
#include <cstdio>

namespace rknn::hw {

uint64_t encode_word(uint16_t op, uint32_t value, uint16_t reg) {
    return (static_cast<uint64_t>(op) << 48) | (static_cast<uint64_t>(value) << 16) | reg;
}

uint64_t encode_write(uint16_t reg, uint32_t value) {
    return encode_word(op_for_block(block_of(reg)), value, reg);
}

uint64_t encode_arm() { return encode_word(kOpArm, 0, 0); }

uint64_t encode_op_enable(uint32_t block_mask) { return encode_word(kOpOpEnable, block_mask, kOpEnableReg); }

const char* word_kind_name(WordKind kind) {
    switch (kind) {
    case WordKind::kNop: return "nop";
    case WordKind::kWrite: return "write";
    case WordKind::kArm: return "arm";
    case WordKind::kOpEnable: return "op_enable";
    case WordKind::kInvalid: return "invalid";
    }
    return "?";
}

DecodedWord decode_word(uint64_t word, const DecodeRules& rules) {
    DecodedWord d;
    d.op = static_cast<uint16_t>(word >> 48);
    d.value = static_cast<uint32_t>(word >> 16);
    d.reg = static_cast<uint16_t>(word);
    if (d.op == kOpNop || d.op == kOpArm) {
        // Every capture has all-zero no-op and marker words; anything else in
        // them is a corrupted word (strict decoding says so).
        if (rules.require_known_register && (d.value != 0 || d.reg != 0)) {
            d.problem = d.op == kOpNop ? "no-op word with a non-zero payload" : "0x0041 marker with a non-zero payload";
            return d;
        }
        d.kind = d.op == kOpNop ? WordKind::kNop : WordKind::kArm;
        return d;
    }
    if (d.op == kOpOpEnable) {
        if (d.reg != kOpEnableReg) {
            d.problem = "operation-enable word does not address register 0x0008";
            return d;
        }
        if (d.value & ~op_enable::kAll) {
            d.problem = "operation-enable bitmap has bits outside 0x7f";
            return d;
        }
        d.kind = WordKind::kOpEnable;
        return d;
    }
    const uint16_t select = d.op >> 8;
    if ((d.op & 0xff) != 0x01 || select == 0 || (select & (select - 1)) != 0) {
        d.problem = "op field is neither a no-op, a marker nor a one-hot block select";
        return d;
    }
    int block_index = 0;
    while (!(select & (1u << block_index))) ++block_index;
    d.block = static_cast<Block>(block_index);
    if (rules.check_block_offset && static_cast<int>(d.reg >> 12) != block_index) {
        d.problem = "block select does not match the register offset";
        return d;
    }
    if (rules.require_known_register && find_register(d.reg) == nullptr) {
        d.problem = "register offset is not in the register table";
        return d;
    }
    d.kind = WordKind::kWrite;
    return d;
}

uint32_t pc_data_amount(uint32_t body_words, uint32_t amount_scale) {
    if (amount_scale == 0) amount_scale = 1;
    return (body_words + kTailWords + amount_scale - 1) / amount_scale - 1;
}

uint32_t pc_fetch_words(uint32_t amount, uint32_t amount_scale) {
    if (amount_scale == 0) amount_scale = 1;
    return (amount + 1) * amount_scale;
}

void RegcmdBuilder::write(uint16_t reg, uint32_t value) {
    if (error_.is_ok() && find_register(reg) == nullptr) {
        error_ = RKNN_INTERNAL_ERROR("regcmd: write to unknown register 0x%04x", reg);
    }
    if (error_.is_ok() && static_cast<int>(block_of(reg)) >= kNumStreamBlocks) {
        error_ = RKNN_INTERNAL_ERROR("regcmd: register 0x%04x is MMIO-only (no stream op selects its block)", reg);
    }
    words_.push_back(encode_write(reg, value));
}

void RegcmdBuilder::write_fields(uint16_t reg, std::initializer_list<std::pair<Field, uint32_t>> fields) {
    uint32_t value = 0;
    for (const auto& [f, v] : fields) {
        if (f.reg != reg && error_.is_ok()) {
            error_ = RKNN_INTERNAL_ERROR("regcmd: field of register 0x%04x used on 0x%04x", f.reg, reg);
        }
        if (!f.fits(v) && error_.is_ok()) {
            const RegisterInfo* info = find_register(reg);
            error_ = RKNN_INTERNAL_ERROR("regcmd: value %u does not fit the %u-bit field at bit %u of %s.%s",
                                         v, f.width(), f.low, info ? block_name(info->block) : "?",
                                         info ? info->name : "?");
        }
        value |= f.put(v);
    }
    write(reg, value);
}

void RegcmdBuilder::remap_registers(bool (*map)(uint16_t from, uint16_t* to)) {
    for (uint64_t& word : words_) {
        const uint16_t reg = static_cast<uint16_t>(word & 0xffff);
        const uint16_t op = static_cast<uint16_t>(word >> 48);
        if (op == kOpNop || op == kOpArm || op == kOpOpEnable) continue;
        uint16_t to = 0;
        if (!map(reg, &to)) {
            if (error_.is_ok()) error_ = RKNN_INTERNAL_ERROR("regcmd: register 0x%04x has no slot in the SoC's map", reg);
            continue;
        }
        word = (word & ~uint64_t{0xffff}) | to;
    }
}

void RegcmdBuilder::tail(uint32_t next_addr, uint32_t next_amount, uint32_t op_enable_mask) {
    if (next_addr != 0) {
        words_.push_back(encode_write(reg::PC_BASE_ADDRESS, next_addr));
    } else {
        words_.push_back(encode_word(kOpNop, 0, 0));
    }
    words_.push_back(encode_write(reg::PC_REGISTER_AMOUNTS, next_amount));
    words_.push_back(encode_arm());
    words_.push_back(encode_op_enable(op_enable_mask));
}

std::string describe_write(uint16_t reg, uint32_t value) {
    char head[96];
    const RegisterInfo* info = find_register(reg);
    if (info == nullptr) {
        std::snprintf(head, sizeof(head), "%s.0x%04X = 0x%08X", block_name(block_of(reg)), reg, value);
        return head;
    }
    std::snprintf(head, sizeof(head), "%s.%s = 0x%08X", block_name(info->block), info->name, value);
    std::string out = head;
    if (info->field_count > 1 || (info->field_count == 1 && info->fields[0].field.width() < 32)) {
        out += " (";
        for (size_t i = 0; i < info->field_count; ++i) {
            const FieldInfo& f = info->fields[i];
            char item[64];
            std::snprintf(item, sizeof(item), "%s%s=%u", i ? " " : "", f.name, f.field.get(value));
            out += item;
        }
        out += ")";
    }
    return out;
}

}  // namespace rknn::hw
