// rknn_regdump: prints a regcmd stream (the 64-bit words the NPU's program
// controller fetches) and assembles listings back into streams.
//
//   rknn_regdump stream.bin                 one line per word, decoded
//   rknn_regdump --listing stream.bin       the assembler-ready text form
//   rknn_regdump --assemble in.txt -o out.bin
//
// Exit status: 0 fine; 1 invalid words (strict mode) or a listing that does
// not assemble; 2 bad arguments or unreadable / malformed files.
// docs/regcmd-text.md describes the listing format.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hw/regcmd.h"
#include "hw/regcmd_text.h"
#include "hw/rk356x_dialect.h"
#include "hw/soc_profile.h"

namespace {

constexpr int kExitInvalid = 1;
constexpr int kExitUsage = 2;

const char kUsage[] =
    "usage: rknn_regdump [options] stream.bin\n"
    "       rknn_regdump --assemble listing.txt -o out.bin\n"
    "\n"
    "Prints a regcmd stream, read as little-endian 64-bit words: one line per word\n"
    "with its index, the word in hex and its meaning, and a marker after every\n"
    "operation-enable word, which ends a task. A summary ends the output.\n"
    "\n"
    "options:\n"
    "  --soc NAME         SoC whose decoding rules apply (default rk3588). The register\n"
    "                     table is RK3588's for every SoC; rk3566/rk3568 streams are read\n"
    "                     in their dialect (CORE registers one slot lower) and named by it.\n"
    "  --offset WORDS     start at this word (default 0); printed indices stay absolute\n"
    "  --count WORDS      print at most this many words (default: to the end)\n"
    "  --tasks N          stop after N tasks (N operation-enable words)\n"
    "  --permissive       undecodable words and writes to registers the table does not\n"
    "                     know are warnings (exit 0); by default they are errors (exit 1)\n"
    "  --listing          print the assembler-ready text form instead of the dump\n"
    "  --assemble FILE    assemble the listing FILE into a stream; needs -o\n"
    "  -o, --output FILE  where --assemble writes the stream\n"
    "  -h, --help         this text\n"
    "\n"
    "Numbers may be decimal or 0x hex. Exit status: 0 success; 1 invalid words in\n"
    "strict mode, or a listing that does not assemble; 2 bad arguments or files.\n"
    "Listing format: docs/regcmd-text.md.\n";

struct Options {
    std::string soc = "rk3588";
    uint64_t offset = 0;
    uint64_t count = UINT64_MAX;
    uint64_t tasks = UINT64_MAX;
    bool permissive = false;
    bool listing = false;
    std::string assemble;  // listing to assemble
    std::string output;
    std::string stream;
    std::vector<std::string> dump_only;  // dump options given, to reject them with --assemble
};

int usage_error(const std::string& message) {
    std::fprintf(stderr, "rknn_regdump: %s\n(rknn_regdump --help lists the options)\n", message.c_str());
    return kExitUsage;
}

bool parse_count(const std::string& text, uint64_t* out) {
    bool negative = false;
    return rknn::hw::parse_listing_integer(text, &negative, out) && !negative;
}

// Returns -1 when the arguments are fine, else the exit status.
int parse_args(int argc, char** argv, Options* opt) {
    std::vector<std::string> positional;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool has_value = false;
        const size_t eq = arg.find('=');
        if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            has_value = true;
        }
        const bool takes_value = arg == "--soc" || arg == "--offset" || arg == "--count" || arg == "--tasks" ||
                                 arg == "--assemble" || arg == "-o" || arg == "--output";
        if (takes_value && !has_value) {
            if (i + 1 >= argc) return usage_error(arg + " needs a value");
            value = argv[++i];
        } else if (!takes_value && has_value) {
            return usage_error(arg + " takes no value");
        }
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (arg == "--soc") {
            opt->soc = value;
        } else if (arg == "--offset" || arg == "--count" || arg == "--tasks") {
            uint64_t* target = arg == "--offset" ? &opt->offset : arg == "--count" ? &opt->count : &opt->tasks;
            if (!parse_count(value, target)) return usage_error(arg + ": not a count: '" + value + "'");
            opt->dump_only.push_back(arg);
        } else if (arg == "--permissive" || arg == "--listing") {
            (arg == "--permissive" ? opt->permissive : opt->listing) = true;
            opt->dump_only.push_back(arg);
        } else if (arg == "--assemble") {
            opt->assemble = value;
        } else if (arg == "-o" || arg == "--output") {
            opt->output = value;
        } else if (arg.size() > 1 && arg[0] == '-') {
            return usage_error("unknown option " + arg);
        } else {
            positional.push_back(arg);
        }
    }
    if (!opt->assemble.empty()) {
        if (!positional.empty()) return usage_error("--assemble takes no stream file ('" + positional[0] + "')");
        if (!opt->dump_only.empty()) return usage_error(opt->dump_only[0] + " has no meaning with --assemble");
        if (opt->output.empty()) return usage_error("--assemble needs -o FILE");
        return -1;
    }
    if (!opt->output.empty()) return usage_error("-o is only used with --assemble");
    if (positional.size() != 1) {
        return usage_error(positional.empty() ? "no stream file given" : "more than one stream file given");
    }
    opt->stream = positional[0];
    return -1;
}

// Reads a whole regular file; false with a message on any failure.
bool read_file(const std::string& path, std::string* out, std::string* why) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        *why = std::strerror(errno);
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        return false;
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
        *why = std::strerror(errno);
        return false;
    }
    out->clear();
    char buf[65536];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) *why = "read error";
    return !failed;
}

int assemble(const Options& opt) {
    std::string text;
    std::string why;
    if (!read_file(opt.assemble, &text, &why)) {
        std::fprintf(stderr, "rknn_regdump: cannot read %s: %s\n", opt.assemble.c_str(), why.c_str());
        return kExitUsage;
    }
    auto words = rknn::hw::assemble_listing(text);
    if (!words.is_ok()) {
        std::fprintf(stderr, "rknn_regdump: %s: %s\n", opt.assemble.c_str(), words.status().message().c_str());
        return kExitInvalid;
    }
    std::string bytes;
    bytes.reserve(words->size() * 8);
    for (uint64_t w : words.value()) {
        for (int b = 0; b < 8; ++b) bytes.push_back(static_cast<char>(w >> (8 * b)));
    }
    std::FILE* f = std::fopen(opt.output.c_str(), "wb");
    const bool ok = f != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    const int saved_errno = errno;
    if (f != nullptr && std::fclose(f) != 0) {
        std::fprintf(stderr, "rknn_regdump: cannot write %s: %s\n", opt.output.c_str(), std::strerror(errno));
        return kExitUsage;
    }
    if (!ok) {
        std::fprintf(stderr, "rknn_regdump: cannot write %s: %s\n", opt.output.c_str(), std::strerror(saved_errno));
        return kExitUsage;
    }
    int tasks = 0;
    for (uint64_t w : words.value()) tasks += rknn::hw::decode_word(w, {}).kind == rknn::hw::WordKind::kOpEnable;
    std::printf("assembled %zu words (%d tasks) into %s\n", words->size(), tasks, opt.output.c_str());
    return 0;
}

std::string describe(const rknn::hw::DecodedWord& d, uint64_t word) {
    using rknn::hw::WordKind;
    char buf[64];
    switch (d.kind) {
    case WordKind::kNop: return word == 0 ? "nop" : "nop (nonzero payload)";
    case WordKind::kArm: return word == rknn::hw::encode_arm() ? "arm" : "arm (nonzero payload)";
    case WordKind::kOpEnable:
        std::snprintf(buf, sizeof(buf), "enable 0x%02x", d.value);
        return std::string(buf) + " (" + rknn::hw::op_enable_blocks(d.value) + ")";
    case WordKind::kWrite: {
        std::string s = rknn::hw::describe_write(d.reg, d.value);
        if (const rknn::hw::RegisterInfo* info = rknn::hw::find_register(d.reg); info != nullptr) {
            uint32_t covered = 0;
            for (size_t i = 0; i < info->field_count; ++i) covered |= info->fields[i].field.mask();
            if (d.value & ~covered) {
                std::snprintf(buf, sizeof(buf), " [unnamed bits 0x%08X]", d.value & ~covered);
                s += buf;
            }
        }
        if (d.block != rknn::hw::block_of(d.reg)) s += std::string(" [select ") + rknn::hw::block_name(d.block) + "]";
        return s;
    }
    case WordKind::kInvalid: return std::string("INVALID: ") + d.problem;
    }
    return "?";
}

struct Scan {
    size_t end = 0;  // one past the last word to print
    size_t tasks = 0;
    size_t invalid = 0;
    size_t first_invalid = 0;
    const char* first_problem = nullptr;
    size_t after_last_task = 0;  // words after the last operation-enable
    size_t missing_arm = 0;      // enables with no arm marker since the previous task
};

// One word as `soc` reads it (RK356x: in its dialect, given the table's offsets).
rknn::hw::DecodedWord decode_as(const rknn::hw::SocProfile& soc, uint64_t word, const rknn::hw::DecodeRules& rules) {
    return soc.arch == rknn::hw::NpuArch::kRk356x ? rknn::hw::rk356x::decode_word(word, rules)
                                                  : rknn::hw::decode_word(word, rules);
}

Scan scan(const std::vector<uint64_t>& words, size_t begin, size_t end, uint64_t max_tasks,
          const rknn::hw::DecodeRules& rules, const rknn::hw::SocProfile& soc) {
    Scan s;
    s.end = end;
    bool armed = false;
    size_t last_enable = begin;
    for (size_t i = begin; i < end; ++i) {
        const rknn::hw::DecodedWord d = decode_as(soc, words[i], rules);
        if (d.kind == rknn::hw::WordKind::kInvalid && s.invalid++ == 0) {
            s.first_invalid = i;
            s.first_problem = d.problem;
        }
        if (d.kind == rknn::hw::WordKind::kArm) armed = true;
        if (d.kind == rknn::hw::WordKind::kOpEnable) {
            s.missing_arm += !armed;
            armed = false;
            last_enable = i + 1;
            if (++s.tasks == max_tasks) {
                s.end = i + 1;
                break;
            }
        }
    }
    s.after_last_task = s.end - last_enable;
    return s;
}

void print_dump(const std::vector<uint64_t>& words, size_t begin, size_t end, const rknn::hw::DecodeRules& rules,
                const rknn::hw::SocProfile& soc) {
    int task = 0;
    bool armed = false;
    for (size_t i = begin; i < end; ++i) {
        const rknn::hw::DecodedWord d = decode_as(soc, words[i], rules);
        std::string text = describe(d, words[i]);
        if (d.kind == rknn::hw::WordKind::kArm) armed = true;
        if (d.kind == rknn::hw::WordKind::kOpEnable && !armed) text += "  (warning: no arm marker before it)";
        std::printf("%6zu  0x%016" PRIx64 "  %s\n", i, words[i], text.c_str());
        if (d.kind == rknn::hw::WordKind::kOpEnable) {
            std::printf("--- task %d ends: %s\n", task++, describe(d, words[i]).c_str());
            armed = false;
        }
    }
}

int dump(const Options& opt) {
    const rknn::hw::SocProfile* soc = rknn::hw::find_soc(opt.soc);
    if (soc == nullptr) {
        std::string names;
        for (const std::string& n : rknn::hw::soc_names()) names += " " + n;
        return usage_error("unknown SoC '" + opt.soc + "' (known:" + names + ")");
    }
    if (soc->arch == rknn::hw::NpuArch::kRk356x) {
        std::fprintf(stderr, "rknn_regdump: note: %s streams are read in the RK356x dialect (docs/rk3568.md, "
                     "third-party facts); --listing keeps their wire offsets\n", soc->name);
    } else if (!soc->layout_verified) {
        std::fprintf(stderr, "rknn_regdump: note: names come from the RK3588 register table; %s's layout is unverified\n",
                     soc->name);
    }
    std::string bytes;
    std::string why;
    if (!read_file(opt.stream, &bytes, &why)) {
        std::fprintf(stderr, "rknn_regdump: cannot read %s: %s\n", opt.stream.c_str(), why.c_str());
        return kExitUsage;
    }
    if (bytes.size() % 8 != 0) {
        std::fprintf(stderr, "rknn_regdump: %s: size %zu is not a multiple of 8 (a stream is 64-bit words)\n",
                     opt.stream.c_str(), bytes.size());
        return kExitUsage;
    }
    std::vector<uint64_t> words(bytes.size() / 8);
    for (size_t i = 0; i < words.size(); ++i) {
        uint64_t w = 0;
        for (int b = 7; b >= 0; --b) w = (w << 8) | static_cast<unsigned char>(bytes[i * 8 + static_cast<size_t>(b)]);
        words[i] = w;
    }
    if (opt.offset > words.size()) {
        return usage_error("--offset " + std::to_string(opt.offset) + " is past the end of " + opt.stream + " (" +
                           std::to_string(words.size()) + " words)");
    }
    const size_t begin = static_cast<size_t>(opt.offset);
    const size_t end = begin + static_cast<size_t>(std::min<uint64_t>(opt.count, words.size() - begin));

    rknn::hw::DecodeRules rules;
    rules.check_block_offset = soc->check_block_offset;
    rules.require_known_register = !opt.permissive;
    const Scan s = scan(words, begin, end, opt.tasks, rules, *soc);

    const char* prefix = opt.listing ? "# " : "";
    if (opt.listing) {
        std::printf("# rknn_regdump --listing %s: words %zu..%zu of %zu\n", opt.stream.c_str(), begin,
                    s.end == begin ? begin : s.end - 1, words.size());
        rknn::hw::ListingOptions lo;
        lo.rules = rules;
        std::vector<uint64_t> slice(words.begin() + static_cast<std::ptrdiff_t>(begin),
                                    words.begin() + static_cast<std::ptrdiff_t>(s.end));
        std::fputs(rknn::hw::print_listing(slice, lo).c_str(), stdout);
    } else {
        print_dump(words, begin, s.end, rules, *soc);
    }
    std::printf("%ssummary: %zu words, %zu tasks, %zu invalid words, %zu words after the last task\n", prefix,
                s.end - begin, s.tasks, s.invalid, s.after_last_task);
    if (s.missing_arm) std::printf("%swarning: %zu enables without an arm marker\n", prefix, s.missing_arm);
    if (s.invalid) {
        std::fprintf(stderr, "rknn_regdump: %s: %s: %zu invalid words; the first is word %zu: %s\n",
                     opt.permissive ? "warning" : "error", opt.stream.c_str(), s.invalid, s.first_invalid,
                     s.first_problem);
        if (!opt.permissive) return kExitInvalid;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options opt;
    const int parsed = parse_args(argc, argv, &opt);
    if (parsed >= 0) return parsed;
    return opt.assemble.empty() ? dump(opt) : assemble(opt);
}
