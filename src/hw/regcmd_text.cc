#include "hw/regcmd_text.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <string>

namespace rknn::hw {

namespace {

constexpr size_t kCommentColumn = 44;  // writes line up their field comments here

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

std::vector<std::string_view> split_words(std::string_view s) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i])) ++i;
        size_t start = i;
        while (i < s.size() && !is_space(s[i])) ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

Status error(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

// A 32-bit register value: 0..0xFFFFFFFF, or a negative number down to
// -2^31 stored as two's complement.
StatusOr<uint32_t> parse_value32(std::string_view token) {
    bool negative = false;
    uint64_t magnitude = 0;
    if (!parse_listing_integer(token, &negative, &magnitude)) {
        return error("cannot read " + quoted(token) + " as a number");
    }
    if (!negative && magnitude <= 0xffffffffu) return static_cast<uint32_t>(magnitude);
    if (negative && magnitude <= 0x80000000u) return static_cast<uint32_t>(0u - static_cast<uint32_t>(magnitude));
    return error("value " + std::string(token) + " does not fit 32 bits");
}

// A register as named on a line: its offset, its table entry (nullptr for
// an offset the table lacks) and the canonical "BLOCK.NAME" spelling.
struct Target {
    uint16_t offset = 0;
    const RegisterInfo* info = nullptr;
    std::string name;
};

std::string canonical_name(uint16_t offset, const RegisterInfo* info) {
    char buf[64];
    if (info != nullptr) {
        std::snprintf(buf, sizeof(buf), "%s.%s", block_name(info->block), info->name);
    } else {
        std::snprintf(buf, sizeof(buf), "%s.0x%04X", block_name(block_of(offset)), offset);
    }
    return buf;
}

// "DPU.0x40C8" or "DPU_0x40C8": an offset written under its block.
StatusOr<Target> resolve_offset(std::string_view token, std::string_view block_part,
                                std::string_view offset_part) {
    Block block = Block::kPc;
    if (!block_from_name(block_part, &block)) {
        return error("unknown block " + quoted(block_part) + " in " + quoted(token));
    }
    bool negative = false;
    uint64_t offset = 0;
    if (!parse_listing_integer(offset_part, &negative, &offset) || negative || offset > 0xffff) {
        return error("bad register offset " + quoted(offset_part) + " in " + quoted(token));
    }
    if (block_of(static_cast<uint32_t>(offset)) != block) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "offset 0x%04X belongs to block %s, not %s (in '%.40s')",
                      static_cast<unsigned>(offset), block_name(block_of(static_cast<uint32_t>(offset))),
                      block_name(block), std::string(token).c_str());
        return error(buf);
    }
    Target t;
    t.offset = static_cast<uint16_t>(offset);
    t.info = find_register(t.offset);
    t.name = canonical_name(t.offset, t.info);
    return t;
}

bool looks_like_number(std::string_view s) { return !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])); }

StatusOr<Target> resolve_register(std::string_view token) {
    StatusOr<Target> result = error("unknown register " + quoted(token));
    const size_t dot = token.find('.');
    if (dot != std::string_view::npos && looks_like_number(token.substr(dot + 1))) {
        result = resolve_offset(token, token.substr(0, dot), token.substr(dot + 1));
    } else if (const size_t hex = upper(token).find("_0X"); dot == std::string_view::npos && hex != std::string::npos) {
        result = resolve_offset(token, token.substr(0, hex), token.substr(hex + 1));
    } else if (const RegisterInfo* info = find_register(token); info != nullptr) {
        Target t;
        t.offset = info->offset;
        t.info = info;
        t.name = canonical_name(t.offset, info);
        result = t;
    }
    if (!result.is_ok()) return result;
    // Only PC..PPU_RDMA have a block select bit in the op field (hw-facts 3.2).
    if (static_cast<int>(block_of(result->offset)) >= kNumStreamBlocks) {
        char buf[200];
        std::snprintf(buf, sizeof(buf),
                      "%s (0x%04X) is reachable only through MMIO: no regcmd op selects block %s "
                      "(write the word with 'raw' if you really mean it)",
                      result->name.c_str(), result->offset, block_name(block_of(result->offset)));
        return error(buf);
    }
    return result;
}

std::string field_list(const RegisterInfo& info) {
    std::string out;
    for (size_t i = 0; i < info.field_count; ++i) {
        if (i) out += ' ';
        out += info.fields[i].name;
    }
    return out;
}

// A field value: unsigned up to the field's maximum, or negative down to
// -2^(width-1), stored as two's complement in the field's width.
StatusOr<uint32_t> parse_field_value(std::string_view token, const Target& target, const FieldInfo& f) {
    bool negative = false;
    uint64_t magnitude = 0;
    if (!parse_listing_integer(token, &negative, &magnitude)) {
        return error("cannot read " + quoted(token) + " as a number (field " + f.name + " of " +
                     target.name + ")");
    }
    const uint32_t width = f.field.width();
    const uint64_t max = f.field.max_value();
    const uint64_t min_magnitude = uint64_t{1} << (width - 1);  // |most negative value|
    if (!negative && magnitude <= max) return static_cast<uint32_t>(magnitude);
    if (negative && magnitude <= min_magnitude) {
        return static_cast<uint32_t>((0u - static_cast<uint32_t>(magnitude)) & f.field.max_value());
    }
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "value %.40s does not fit field %s of %s (%u bits: 0..%" PRIu64 ", or -%" PRIu64
                  "..-1 as two's complement)",
                  std::string(token).c_str(), f.name, target.name.c_str(), width, max, min_magnitude);
    return error(buf);
}

StatusOr<uint64_t> assemble_fields(const Target& target, const std::vector<std::string_view>& words) {
    if (target.info == nullptr && words.size() > 1) {
        return error(target.name + " is not in the register table, so it has no named fields; write '" +
                     target.name + " = value'");
    }
    uint32_t value = 0;
    uint32_t assigned = 0;  // bits of the fields already given, to catch repeats
    for (size_t i = 1; i < words.size(); ++i) {
        const std::string_view item = words[i];
        const size_t eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
            return error("expected FIELD=value after " + target.name + " (no spaces around '='), got " +
                         quoted(item));
        }
        const std::string_view name = item.substr(0, eq);
        const FieldInfo* f = find_field(*target.info, name);
        if (f == nullptr) {
            return error(target.name + " has no field " + quoted(name) + " (fields: " + field_list(*target.info) +
                         ")");
        }
        if (assigned & f->field.mask()) {
            return error("field " + std::string(f->name) + " of " + target.name + " is given twice");
        }
        RKNN_ASSIGN_OR_RETURN(const uint32_t v, parse_field_value(item.substr(eq + 1), target, *f));
        assigned |= f->field.mask();
        value |= f->field.put(v);
    }
    return encode_write(target.offset, value);
}

// "enable 0x1d" or "enable CNA CORE DPU DPU_RDMA".
StatusOr<uint64_t> assemble_enable(const std::vector<std::string_view>& words) {
    if (words.size() < 2) return error("'enable' needs a block bitmap, e.g. 'enable 0x1d' or 'enable CNA CORE DPU'");
    uint32_t bitmap = 0;
    if (words.size() == 2 && looks_like_number(words[1])) {
        bool negative = false;
        uint64_t v = 0;
        if (!parse_listing_integer(words[1], &negative, &v) || negative) {
            return error("cannot read " + quoted(words[1]) + " as a block bitmap");
        }
        if (v > op_enable::kAll) {
            return error("enable bitmap " + std::string(words[1]) +
                         " has bits outside 0x7f; write such a word with 'raw'");
        }
        bitmap = static_cast<uint32_t>(v);
    } else {
        for (size_t i = 1; i < words.size(); ++i) {
            const std::string name = upper(words[i]);
            uint32_t bit = 0;
            for (uint32_t b = 0; b < 7; ++b) {
                if (upper(op_enable_blocks(1u << b)) == name) bit = 1u << b;
            }
            if (bit == 0) {
                return error("unknown block " + quoted(words[i]) +
                             " in 'enable' (CNA bit1 CORE DPU DPU_RDMA PPU PPU_RDMA, or a number)");
            }
            bitmap |= bit;
        }
    }
    return encode_op_enable(bitmap);
}

StatusOr<uint64_t> assemble_keyword(const std::string& keyword, const std::vector<std::string_view>& words) {
    if (keyword == "ENABLE") return assemble_enable(words);
    if (keyword == "RAW") {
        if (words.size() != 2) return error("'raw' takes exactly one 64-bit value");
        bool negative = false;
        uint64_t v = 0;
        if (!parse_listing_integer(words[1], &negative, &v) || negative) {
            return error("cannot read " + quoted(words[1]) + " as an unsigned 64-bit word");
        }
        return v;
    }
    // nop, arm
    if (words.size() != 1) return error("'" + std::string(words[0]) + "' takes no operand");
    return keyword == "NOP" ? encode_word(kOpNop, 0, 0) : encode_arm();
}

StatusOr<uint64_t> assemble_line(std::string_view line) {
    const std::vector<std::string_view> words = split_words(line);
    const std::string keyword = upper(words[0]);
    if (keyword == "NOP" || keyword == "ARM" || keyword == "ENABLE" || keyword == "RAW") {
        return assemble_keyword(keyword, words);
    }
    // "REG = value" when the text before the first '=' is a single word;
    // otherwise "REG FIELD=value ...".
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos && split_words(line.substr(0, eq)).size() == 1) {
        const std::string_view reg_token = trim(line.substr(0, eq));
        const std::string_view value_token = trim(line.substr(eq + 1));
        RKNN_ASSIGN_OR_RETURN(const Target target, resolve_register(reg_token));
        if (value_token.empty()) return error("missing value after '" + target.name + " ='");
        if (split_words(value_token).size() != 1) {
            return error("expected one value after '" + target.name + " =', got " + quoted(value_token));
        }
        RKNN_ASSIGN_OR_RETURN(const uint32_t value, parse_value32(value_token));
        return encode_write(target.offset, value);
    }
    if (eq == std::string_view::npos && words.size() == 1 && words[0].find('.') == std::string_view::npos &&
        find_register(words[0]) == nullptr && upper(words[0]).find("_0X") == std::string::npos) {
        return error("unrecognised line " + quoted(line) +
                     " (expected a register write, nop, arm, enable or raw)");
    }
    RKNN_ASSIGN_OR_RETURN(const Target target, resolve_register(words[0]));
    return assemble_fields(target, words);
}

std::string hex64(uint64_t word) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, word);
    return buf;
}

std::string raw_line(uint64_t word, const std::string& why) { return "raw " + hex64(word) + "  # " + why; }

// "CONV_MODE=3 IN_PRECISION=2", plus bits no field covers.
std::string field_comment(const RegisterInfo& info, uint32_t value) {
    std::string out;
    uint32_t covered = 0;
    for (size_t i = 0; i < info.field_count; ++i) covered |= info.fields[i].field.mask();
    const bool single_word_field = info.field_count == 1 && info.fields[0].field.width() == 32;
    if (!single_word_field) {
        for (size_t i = 0; i < info.field_count; ++i) {
            const FieldInfo& f = info.fields[i];
            const uint32_t v = f.field.get(value);
            if (v == 0) continue;
            char item[80];
            std::snprintf(item, sizeof(item), "%s%s=%u", out.empty() ? "" : " ", f.name, v);
            out += item;
        }
    }
    if (value & ~covered) {
        char item[64];
        std::snprintf(item, sizeof(item), "%sunnamed bits 0x%08X", out.empty() ? "" : " ", value & ~covered);
        out += item;
    }
    return out;
}

std::string write_line(uint16_t reg, uint32_t value, const ListingOptions& options) {
    const RegisterInfo* info = find_register(reg);
    char head[96];
    std::snprintf(head, sizeof(head), "%s = 0x%08X", canonical_name(reg, info).c_str(), value);
    std::string line = head;
    std::string comment;
    if (info == nullptr) {
        comment = options.rules.require_known_register ? "invalid: not in the register table"
                                                       : "not in the register table";
    } else if (options.field_comments) {
        comment = field_comment(*info, value);
    }
    if (!comment.empty()) {
        if (line.size() < kCommentColumn) line.resize(kCommentColumn, ' ');
        line += "  # " + comment;
    }
    return line;
}

}  // namespace

bool parse_listing_integer(std::string_view text, bool* out_negative, uint64_t* out_magnitude) {
    *out_negative = false;
    *out_magnitude = 0;
    std::string_view s = text;
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
        *out_negative = s[0] == '-';
        s.remove_prefix(1);
    }
    unsigned base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
        base = 2;
        s.remove_prefix(2);
    }
    if (s.empty() || s.front() == '_' || s.back() == '_') return false;
    uint64_t v = 0;
    char previous = 0;
    for (char c : s) {
        if (c == '_') {
            if (previous == '_') return false;
            previous = c;
            continue;
        }
        previous = c;
        const int d = digit_value(c);
        if (d >= static_cast<int>(base)) return false;
        if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / base) return false;
        v = v * base + static_cast<uint64_t>(d);
    }
    *out_magnitude = v;
    return true;
}

StatusOr<std::vector<uint64_t>> assemble_listing(std::string_view text) {
    std::vector<uint64_t> words;
    int line_number = 0;
    while (!text.empty()) {
        ++line_number;
        const size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        line = trim(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        StatusOr<uint64_t> word = assemble_line(line);
        if (!word.is_ok()) return word.status().with_context("line " + std::to_string(line_number));
        words.push_back(word.value());
    }
    return words;
}

std::string op_enable_blocks(uint32_t bitmap) {
    // GLOBAL OPERATION_ENABLE bit order (hw-facts 3.2); bit 1 has no name.
    static constexpr const char* kNames[7] = {"CNA", "bit1", "CORE", "DPU", "DPU_RDMA", "PPU", "PPU_RDMA"};
    std::string out;
    for (uint32_t bit = 0; bit < 32; ++bit) {
        if (!(bitmap & (1u << bit))) continue;
        if (!out.empty()) out += ' ';
        out += bit < 7 ? std::string(kNames[bit]) : "bit" + std::to_string(bit);
    }
    return out;
}

std::string print_word(uint64_t word, const ListingOptions& options) {
    const uint16_t op = static_cast<uint16_t>(word >> 48);
    const uint32_t value = static_cast<uint32_t>(word >> 16);
    const uint16_t reg = static_cast<uint16_t>(word);
    if (word == 0) return "nop";
    if (op == kOpNop) return raw_line(word, "no-op (op 0x0000) with a nonzero payload");
    if (op == kOpArm) return word == encode_arm() ? "arm" : raw_line(word, "arm marker (op 0x0041) with a nonzero payload");
    if (op == kOpOpEnable && reg == kOpEnableReg && value <= op_enable::kAll) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "enable 0x%02x", value);
        return std::string(buf) + "  # " + (value ? op_enable_blocks(value) : "no blocks");
    }
    const uint16_t select = op >> 8;
    const bool one_hot = (op & 0xff) == 0x01 && select != 0 && (select & (select - 1)) == 0;
    if (one_hot && op == op_for_block(block_of(reg))) return write_line(reg, value, options);

    const DecodedWord d = decode_word(word, options.rules);
    if (d.kind == WordKind::kInvalid) return raw_line(word, std::string("invalid: ") + d.problem);
    // Valid under relaxed rules (no block/offset check) but with no symbolic
    // form: the assembler derives the select from the offset.
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%s select with register 0x%04X (%s); only raw keeps the select",
                  block_name(d.block), reg, block_name(block_of(reg)));
    return raw_line(word, buf);
}

std::string print_listing(const std::vector<uint64_t>& words, const ListingOptions& options) {
    std::string out;
    int task = options.first_task;
    for (uint64_t word : words) {
        out += print_word(word, options);
        out += '\n';
        const DecodedWord d = decode_word(word, options.rules);
        if (options.task_markers && d.kind == WordKind::kOpEnable) {
            out += "# --- task " + std::to_string(task++) + " ends\n\n";
        }
    }
    return out;
}

}  // namespace rknn::hw
