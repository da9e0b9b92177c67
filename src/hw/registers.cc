#include "hw/registers.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace rknn::hw {

namespace {

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

// Register offsets are 16-bit and word aligned.
constexpr uint32_t kOffsetSlots = 0x10000 / 4;

struct Table {
    std::vector<RegisterInfo> regs;
    std::vector<std::vector<FieldInfo>> fields;  // parallel to regs
    // Index into regs by offset / 4 (-1: no register): every command word
    // the emulator decodes looks its register up.
    std::vector<int16_t> by_offset = std::vector<int16_t>(kOffsetSlots, -1);

    Table() {
#define RKNN_REG(block, offset, name)                                   \
    regs.push_back(RegisterInfo{block_from_token(#block), offset, #name, nullptr, 0}); \
    fields.emplace_back();
#define RKNN_FIELD(block, reg_name, name, low, high) \
    fields.back().push_back(FieldInfo{#name, field::block##_##reg_name##_##name});
#include "hw/rk3588_registers.inc"
#undef RKNN_REG
#undef RKNN_FIELD
        for (size_t i = 0; i < regs.size(); ++i) {
            auto& f = fields[i];
            std::sort(f.begin(), f.end(), [](const FieldInfo& a, const FieldInfo& b) {
                return a.field.low < b.field.low;
            });
            regs[i].fields = f.data();
            regs[i].field_count = f.size();
        }
        // The .inc file is sorted by block then offset, which is offset order.
        for (size_t i = 0; i < regs.size(); ++i)
            if (regs[i].offset % 4 == 0 && regs[i].offset / 4 < kOffsetSlots) by_offset[regs[i].offset / 4] = static_cast<int16_t>(i);
    }

    static Block block_from_token(const char* token) {
        Block b = Block::kPc;
        block_from_name(token, &b);
        return b;
    }
};

const Table& table() {
    static const Table t;
    return t;
}

struct BlockName {
    Block block;
    const char* name;
};
constexpr BlockName kBlockNames[] = {
    {Block::kPc, "PC"},       {Block::kCna, "CNA"},           {Block::kCmac, "CMAC"},
    {Block::kCore, "CORE"},   {Block::kDpu, "DPU"},           {Block::kDpuRdma, "DPU_RDMA"},
    {Block::kPpu, "PPU"},     {Block::kPpuRdma, "PPU_RDMA"},  {Block::kDdma, "DDMA"},
    {Block::kSdma, "SDMA"},   {Block::kGlobal, "GLOBAL"},
};

}  // namespace

const char* block_name(Block block) {
    for (const auto& b : kBlockNames) {
        if (b.block == block) return b.name;
    }
    return "?";
}

bool block_from_name(std::string_view name, Block* block) {
    const std::string u = upper(name);
    for (const auto& b : kBlockNames) {
        if (u == b.name) {
            *block = b.block;
            return true;
        }
    }
    return false;
}

const RegisterInfo* register_table(size_t* count) {
    *count = table().regs.size();
    return table().regs.data();
}

const RegisterInfo* find_register(uint32_t offset) {
    const Table& t = table();
    if (offset % 4 != 0 || offset / 4 >= kOffsetSlots) return nullptr;
    const int16_t index = t.by_offset[offset / 4];
    return index < 0 ? nullptr : &t.regs[static_cast<size_t>(index)];
}

const RegisterInfo* find_register(std::string_view qualified_name) {
    std::string u = upper(qualified_name);
    std::replace(u.begin(), u.end(), '.', '_');
    for (const auto& r : table().regs) {
        const std::string full = std::string(block_name(r.block)) + "_" + r.name;
        if (full == u) return &r;
    }
    return nullptr;
}

const FieldInfo* find_field(const RegisterInfo& reg, std::string_view name) {
    const std::string u = upper(name);
    for (size_t i = 0; i < reg.field_count; ++i) {
        if (u == reg.fields[i].name) return &reg.fields[i];
    }
    return nullptr;
}

namespace irq {
uint32_t fuzz_pairs(uint32_t status) {
    uint32_t out = status;
    for (int bit = 0; bit < 12; bit += 2) {
        if (status & (3u << bit)) out |= 3u << bit;
    }
    return out;
}
}  // namespace irq

const char* precision_name(Precision p) {
    switch (p) {
    case Precision::kInt8: return "int8";
    case Precision::kInt16: return "int16";
    case Precision::kFp16: return "fp16";
    case Precision::kBf16: return "bf16";
    case Precision::kInt32: return "int32";
    case Precision::kFp32: return "fp32";
    case Precision::kInt4: return "int4";
    case Precision::kTf32: return "tf32";
    }
    return "?";
}

int precision_bytes(Precision p) {
    switch (p) {
    case Precision::kInt8:
    case Precision::kInt4: return 1;
    case Precision::kInt16:
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kInt32:
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    }
    return 1;
}

}  // namespace rknn::hw
