// Regcmd words: the 64-bit commands the NPU's program controller fetches.
//
//   bits 63..48  op: 0x0000 no-op; 0x0001 | (1 << (8 + block)) register write;
//                0x0041 the "arm" marker; 0x0081 operation enable
//   bits 47..16  the 32-bit value
//   bits 15..0   the register offset inside the core window
//
// A task's stream ends with a four-word tail (hw-facts 3.3): the link to the
// next task (PC BASE_ADDRESS write, or a no-op), its fetch amount (PC
// REGISTER_AMOUNTS write), the arm marker, and the operation-enable word.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "hw/registers.h"

namespace rknn::hw {

constexpr uint16_t kOpNop = 0x0000;
constexpr uint16_t kOpArm = 0x0041;
constexpr uint16_t kOpOpEnable = 0x0081;
constexpr uint16_t kOpEnableReg = 0x0008;
constexpr int kTailWords = 4;  // RKNPU_PC_DATA_EXTRA_AMOUNT

constexpr uint16_t op_for_block(Block block) {
    return static_cast<uint16_t>(0x0001u | (0x100u << static_cast<unsigned>(block)));
}

uint64_t encode_word(uint16_t op, uint32_t value, uint16_t reg);
// A register write; the block select comes from the offset.
uint64_t encode_write(uint16_t reg, uint32_t value);
uint64_t encode_arm();
uint64_t encode_op_enable(uint32_t block_mask);

enum class WordKind { kNop, kWrite, kArm, kOpEnable, kInvalid };

struct DecodedWord {
    WordKind kind = WordKind::kInvalid;
    uint16_t op = 0;
    uint16_t reg = 0;
    uint32_t value = 0;
    Block block = Block::kPc;      // for kWrite
    const char* problem = nullptr; // for kInvalid: why
};

struct DecodeRules {
    // RK3588-style SoCs: a write's block select must match offset >> 12.
    bool check_block_offset = true;
    // Reject writes to offsets the register table does not name.
    bool require_known_register = true;
};

DecodedWord decode_word(uint64_t word, const DecodeRules& rules);
const char* word_kind_name(WordKind kind);

// What the vendor driver writes to PC REGISTER_AMOUNTS for a stream of
// `body_words` register words (tail excluded): fetch units minus one.
uint32_t pc_data_amount(uint32_t body_words, uint32_t amount_scale);
// The inverse used by the emulator: words fetched for an amount value.
uint32_t pc_fetch_words(uint32_t amount, uint32_t amount_scale);

// Builds one task's stream. Field overflows are remembered and reported by
// finish(), so a code generator can write straight-line emission code.
class RegcmdBuilder {
public:
    void write(uint16_t reg, uint32_t value);
    // Writes a register assembled from fields; each value must fit its field.
    void write_fields(uint16_t reg, std::initializer_list<std::pair<Field, uint32_t>> fields);
    // Rewrites the offset of every register write through `map` (a SoC's
    // register dialect, e.g. rk356x::wire_offset); an offset `map` refuses is
    // reported by finish(). Call before tail().
    void remap_registers(bool (*map)(uint16_t from, uint16_t* to));
    // Appends the four-word tail. next_addr 0 means "last task": the link is a no-op word.
    void tail(uint32_t next_addr, uint32_t next_amount, uint32_t op_enable_mask);

    size_t size() const { return words_.size(); }
    size_t body_words() const { return words_.size() >= kTailWords ? words_.size() - kTailWords : 0; }
    const std::vector<uint64_t>& words() const { return words_; }
    // OK, or the first field overflow / misuse with the register named.
    Status finish() const { return error_; }

private:
    std::vector<uint64_t> words_;
    Status error_;
};

// "CNA.CONV_CON1 = 0x00000120 (CONV_MODE=0 IN_PRECISION=2 PROC_PRECISION=2)"
std::string describe_write(uint16_t reg, uint32_t value);

}  // namespace rknn::hw
