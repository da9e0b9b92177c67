// A text form of regcmd streams ("listings"): a printer that turns words
// into lines and an assembler that turns lines back into words. The
// emulator's tests write hand-assembled streams in this form, and
// rknn_regdump --listing prints captured streams in it. docs/regcmd-text.md
// describes the format; in short, one item per line, `#` starts a comment:
//
//   CNA.CONV_CON1 = 0x00000120            a write with a raw 32-bit value
//   CNA.CONV_CON1 CONV_MODE=3 IN_PRECISION=2   a write built from named fields
//   DPU.0x40C8 = 0                        a write to an offset the table lacks
//   nop                                   the all-zero word
//   arm                                   the 0x0041 marker
//   enable 0x1d                           the 0x0081 operation-enable word
//   raw 0x0123456789abcdef                any 64-bit word, as is
//
// The printer's output always assembles back to the identical words,
// whatever they are: a word that has no exact symbolic form (undecodable,
// or a marker with a nonzero payload) is printed as `raw` with a comment
// that says why.
//
// Usage:
//   auto words = hw::assemble_listing(text);          // StatusOr<vector<u64>>
//   if (!words.is_ok()) ... words.status().message() == "line 3: unknown register 'CNA.FOO'"
//   std::string text = hw::print_listing(words.value(), {});
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "hw/regcmd.h"

namespace rknn::hw {

// Assembles a listing. Errors are InvalidArgument with the message
// "line N: ..." (N counted from 1) and stop at the first bad line.
StatusOr<std::vector<uint64_t>> assemble_listing(std::string_view text);

struct ListingOptions {
    // Only used for comments: which words the printer marks as invalid. The
    // printed form itself never depends on the rules.
    DecodeRules rules;
    // Append "# FIELD=v ..." to writes (the nonzero fields).
    bool field_comments = true;
    // After each operation-enable word, a "# --- task N ends" comment and a
    // blank line. Tasks are numbered from first_task.
    bool task_markers = true;
    int first_task = 0;
};

// One word as one listing line, without a trailing newline.
std::string print_word(uint64_t word, const ListingOptions& options);
// Many words, one line each, each line ending in '\n'.
std::string print_listing(const std::vector<uint64_t>& words, const ListingOptions& options);

// "CNA CORE DPU DPU_RDMA" for 0x1d; unnamed bits as "bit1", "bit9".
std::string op_enable_blocks(uint32_t bitmap);

// Parses an integer the way listings write them: decimal, 0x hex or 0b
// binary, '_' allowed between digits, an optional leading '-' or '+'.
// False on anything else or when the magnitude overflows 64 bits.
bool parse_listing_integer(std::string_view text, bool* out_negative, uint64_t* out_magnitude);

}  // namespace rknn::hw
