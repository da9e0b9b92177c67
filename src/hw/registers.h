// The NPU register table: one source of truth for the code generator (which
// encodes streams), the emulator (which decodes and executes them) and
// rknn_regdump (which prints them).
//
// Offsets are byte offsets inside one core's 64 KiB register window; the
// block is offset >> 12 (PC 0, CNA 1, CMAC 2, CORE 3, DPU 4, DPU_RDMA 5,
// PPU 6, PPU_RDMA 7, DDMA 8, SDMA 9, GLOBAL 15). The data lives in
// rk3588_registers.inc; this header turns it into
//   hw::reg::CNA_CONV_CON1            the offset, as a constant
//   hw::field::CNA_CONV_CON1_CONV_MODE a Field {reg, low, high}
// and a run-time table for lookups by offset or by name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rknn::hw {

enum class Block : uint8_t {
    kPc = 0,
    kCna = 1,
    kCmac = 2,
    kCore = 3,
    kDpu = 4,
    kDpuRdma = 5,
    kPpu = 6,
    kPpuRdma = 7,
    kDdma = 8,
    kSdma = 9,
    kGlobal = 15,
};

constexpr int kNumStreamBlocks = 8;  // PC..PPU_RDMA: the blocks a regcmd word can select

constexpr Block block_of(uint32_t offset) { return static_cast<Block>((offset >> 12) & 0xf); }
const char* block_name(Block block);
// "CNA" -> kCna; false when the name is unknown.
bool block_from_name(std::string_view name, Block* block);

// A bit field inside one register.
struct Field {
    uint16_t reg;
    uint8_t low;
    uint8_t high;

    constexpr uint32_t width() const { return high - low + 1u; }
    constexpr uint32_t mask() const {
        return width() >= 32 ? 0xffffffffu : (((1u << width()) - 1u) << low);
    }
    constexpr uint32_t max_value() const { return width() >= 32 ? 0xffffffffu : (1u << width()) - 1u; }
    constexpr bool fits(uint32_t value) const { return value <= max_value(); }
    constexpr uint32_t get(uint32_t reg_value) const { return (reg_value & mask()) >> low; }
    constexpr uint32_t put(uint32_t value) const { return (value << low) & mask(); }
    // The field read as a two's-complement number of its own width.
    constexpr int32_t get_signed(uint32_t reg_value) const {
        uint32_t v = get(reg_value);
        if (width() < 32 && (v >> (width() - 1)) != 0) v |= ~max_value();
        return static_cast<int32_t>(v);
    }
};

namespace reg {
#define RKNN_REG(block, offset, name) constexpr uint16_t block##_##name = offset;
#define RKNN_FIELD(block, reg, name, low, high)
#include "hw/rk3588_registers.inc"
#undef RKNN_REG
#undef RKNN_FIELD
}  // namespace reg

namespace field {
#define RKNN_REG(block, offset, name)
#define RKNN_FIELD(block, reg_name, name, low, high) \
    constexpr Field block##_##reg_name##_##name{reg::block##_##reg_name, low, high};
#include "hw/rk3588_registers.inc"
#undef RKNN_REG
#undef RKNN_FIELD
}  // namespace field

struct FieldInfo {
    const char* name;
    Field field;
};

struct RegisterInfo {
    Block block;
    uint16_t offset;
    const char* name;          // without the block prefix, e.g. "CONV_CON1"
    const FieldInfo* fields;   // sorted by low bit
    size_t field_count;
};

// Every register of the table, sorted by offset.
const RegisterInfo* register_table(size_t* count);
// nullptr when the offset names no register.
const RegisterInfo* find_register(uint32_t offset);
// Accepts "CNA_CONV_CON1", "CNA.CONV_CON1" or "cna.conv_con1"; nullptr if unknown.
const RegisterInfo* find_register(std::string_view qualified_name);
const FieldInfo* find_field(const RegisterInfo& reg, std::string_view name);

// S_POINTER bits (the same in every block that has one).
namespace s_pointer {
constexpr uint32_t kPointer = 1u << 0;
constexpr uint32_t kPointerPpEn = 1u << 1;
constexpr uint32_t kExecuterPpEn = 1u << 2;
constexpr uint32_t kPointerPpMode = 1u << 3;
constexpr uint32_t kPointerPpClear = 1u << 4;
constexpr uint32_t kExecuterPpClear = 1u << 5;
constexpr uint32_t kExecuter = 1u << 16;
constexpr int kCoreIndexShift = 28;  // bits 28-29: undocumented core index (hw-facts 3.4)
// What drivers and streams write: both pointers toggle after every task.
constexpr uint32_t kPingPong = kPointerPpEn | kExecuterPpEn | kPointerPpMode;
}  // namespace s_pointer

// The operation-enable bitmap (op 0x0081 words and GLOBAL OPERATION_ENABLE).
namespace op_enable {
constexpr uint32_t kCna = 1u << 0;
constexpr uint32_t kCmac = 1u << 1;  // written by RK356x streams (0x1f)
constexpr uint32_t kCore = 1u << 2;
constexpr uint32_t kDpu = 1u << 3;
constexpr uint32_t kDpuRdma = 1u << 4;
constexpr uint32_t kPpu = 1u << 5;
constexpr uint32_t kPpuRdma = 1u << 6;
constexpr uint32_t kAll = 0x7f;
}  // namespace op_enable

// PC interrupt bits; each unit has one bit per register group (_0/_1).
namespace irq {
constexpr uint32_t kCnaFeature0 = 1u << 0;
constexpr uint32_t kCnaWeight0 = 1u << 2;
constexpr uint32_t kCnaCsc0 = 1u << 4;
constexpr uint32_t kCore0 = 1u << 6;
constexpr uint32_t kDpu0 = 1u << 8;
constexpr uint32_t kDpu1 = 1u << 9;
constexpr uint32_t kPpu0 = 1u << 10;
constexpr uint32_t kPpu1 = 1u << 11;
constexpr uint32_t kDmaReadError = 1u << 12;
constexpr uint32_t kDmaWriteError = 1u << 13;
constexpr uint32_t kClearAll = 0x1ffff;
// What the vendor driver compares against: either bit of a pair sets both.
uint32_t fuzz_pairs(uint32_t status);
}  // namespace irq

// Data precision codes shared by CNA, CORE, DPU and PPU precision fields.
enum class Precision : uint8_t {
    kInt8 = 0,
    kInt16 = 1,
    kFp16 = 2,
    kBf16 = 3,
    kInt32 = 4,
    kFp32 = 5,
    kInt4 = 6,
    kTf32 = 7,
};
const char* precision_name(Precision p);
// Bytes per element in memory (int4 rounds up to 1).
int precision_bytes(Precision p);

}  // namespace rknn::hw
