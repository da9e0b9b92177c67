// The regcmd listing format: assembler cases, error messages, the printer's
// exact output for a few words, and print -> assemble round trips on random
// words and on a hand-written convolution task (data/conv3x3_int8.txt).
#include "hw/regcmd_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "hw/regcmd.h"
#include "hw/registers.h"

namespace rknn::hw {
namespace {

std::vector<uint64_t> assemble_ok(const std::string& text) {
    auto words = assemble_listing(text);
    EXPECT_TRUE(words.is_ok()) << words.status().message() << "\nlisting:\n" << text;
    return words.is_ok() ? words.value() : std::vector<uint64_t>{};
}

// The error message for a listing that must not assemble.
std::string assemble_error(const std::string& text) {
    auto words = assemble_listing(text);
    EXPECT_FALSE(words.is_ok()) << "assembled, but should not have:\n" << text;
    if (words.is_ok()) return "";
    EXPECT_EQ(words.status().code(), StatusCode::kInvalidArgument);
    return words.status().message();
}

uint64_t one(const std::string& line) {
    const std::vector<uint64_t> w = assemble_ok(line);
    EXPECT_EQ(w.size(), 1u) << line;
    return w.empty() ? 0 : w[0];
}

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot open " << path;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(RegcmdAssembler, RawValues) {
    const uint64_t expect = encode_write(reg::CNA_CONV_CON1, 0x120);
    EXPECT_EQ(one("CNA.CONV_CON1 = 0x00000120"), expect);
    EXPECT_EQ(one("CNA.CONV_CON1 = 288"), expect);
    EXPECT_EQ(one("CNA.CONV_CON1=0x120"), expect);
    EXPECT_EQ(one("  CNA.CONV_CON1   =   0X120  "), expect);
    EXPECT_EQ(one("CNA.CONV_CON1 = 0b1_0010_0000"), expect);
    EXPECT_EQ(one("CNA_CONV_CON1 = 0x120"), expect);
    EXPECT_EQ(one("cna.conv_con1 = 0x120"), expect);
    EXPECT_EQ(one("Cna_Conv_Con1 = 0x120"), expect);
    // Negative decimal values are 32-bit two's complement.
    EXPECT_EQ(one("DPU.OUT_CVT_OFFSET = -123"), encode_write(reg::DPU_OUT_CVT_OFFSET, 0xffffff85u));
    EXPECT_EQ(one("DPU.OUT_CVT_OFFSET = -2147483648"), encode_write(reg::DPU_OUT_CVT_OFFSET, 0x80000000u));
    EXPECT_EQ(one("DPU.OUT_CVT_OFFSET = 4294967295"), encode_write(reg::DPU_OUT_CVT_OFFSET, 0xffffffffu));
    EXPECT_EQ(one("CNA.FEATURE_DATA_ADDR = 0xFFF7_D000"), encode_write(reg::CNA_FEATURE_DATA_ADDR, 0xfff7d000u));
    // Every stream block, including PC and PPU_RDMA.
    EXPECT_EQ(one("PC.BASE_ADDRESS = 0xfffa0f00"), 0x0101fffa0f000010ull);
    EXPECT_EQ(one("PPU_RDMA.RDMA_SRC_BASE_ADDR = 1"), 0x800100000001701cull);
}

TEST(RegcmdAssembler, UntabledOffsets) {
    EXPECT_EQ(one("DPU.0x40C8 = 5"), encode_write(0x40c8, 5));
    EXPECT_EQ(one("dpu_0x40c8 = 5"), encode_write(0x40c8, 5));
    EXPECT_EQ(one("DPU_RDMA.0x5030 = 1"), encode_write(0x5030, 1));
    EXPECT_EQ(one("DPU_RDMA_0x5030 = 1"), encode_write(0x5030, 1));
    // An offset the table does know is the same register.
    EXPECT_EQ(one("DPU.0x4004 = 0xe"), one("DPU.S_POINTER = 0xe"));
    EXPECT_EQ(one("DPU.0x40C4 = 0"), one("DPU.UNDOC_40C4 = 0"));
    // A register without fields written alone is a write of 0.
    EXPECT_EQ(one("DPU.0x40C8"), encode_write(0x40c8, 0));
}

TEST(RegcmdAssembler, NamedFields) {
    EXPECT_EQ(one("CNA.CONV_CON1 CONV_MODE=3 IN_PRECISION=2"), encode_write(reg::CNA_CONV_CON1, 0x23));
    EXPECT_EQ(one("cna.conv_con1 in_precision=2 conv_mode=3"), encode_write(reg::CNA_CONV_CON1, 0x23));
    EXPECT_EQ(one("CNA.CONV_CON1 PROC_PRECISION=0x2 IN_PRECISION=0b10"), encode_write(reg::CNA_CONV_CON1, 0x120));
    EXPECT_EQ(one("CNA.CONV_CON1"), encode_write(reg::CNA_CONV_CON1, 0));
    EXPECT_EQ(one("CNA.CONV_CON1 NONALIGN_DMA=1 GROUP_LINE_OFF=1 ARGB_IN=8"),
              encode_write(reg::CNA_CONV_CON1, (1u << 30) | (1u << 29) | (8u << 12)));
    // Widest fields at both ends of the range.
    EXPECT_EQ(one("CNA.DMA_CON1 LINE_STRIDE=0xFFFFFFF"), encode_write(reg::CNA_DMA_CON1, 0x0fffffffu));
    EXPECT_EQ(one("CNA.FEATURE_DATA_ADDR FEATURE_BASE_ADDR=0xFFFFFFFF"),
              encode_write(reg::CNA_FEATURE_DATA_ADDR, 0xffffffffu));
    EXPECT_EQ(one("PC.BASE_ADDRESS PC_SOURCE_ADDR=0xfffa0f0"), encode_write(reg::PC_BASE_ADDRESS, 0xfffa0f00u));
}

TEST(RegcmdAssembler, NegativeFields) {
    // CONV_MODE is 4 bits: -1 is 0xF, -8 is 0x8; PAD_VALUE is 32 bits.
    EXPECT_EQ(one("CNA.CONV_CON1 CONV_MODE=-1"), encode_write(reg::CNA_CONV_CON1, 0xf));
    EXPECT_EQ(one("CNA.CONV_CON1 CONV_MODE=-8 IN_PRECISION=1"), encode_write(reg::CNA_CONV_CON1, 0x18));
    EXPECT_EQ(one("CNA.PAD_CON1 PAD_VALUE=-2"), encode_write(reg::CNA_PAD_CON1, 0xfffffffeu));
    EXPECT_EQ(one("CNA.PAD_CON1 PAD_VALUE=-2147483648"), encode_write(reg::CNA_PAD_CON1, 0x80000000u));
    // A negative field stays inside its bits: EW_OP_CVT_SHIFT is [21:16].
    EXPECT_EQ(one("DPU.EW_CVT_SCALE_VALUE EW_OP_CVT_SHIFT=-1 EW_OP_CVT_SCALE=1"),
              encode_write(reg::DPU_EW_CVT_SCALE_VALUE, 0x003f0001u));
    // One-bit field: -1 is 1.
    EXPECT_EQ(one("CNA.CONV_CON1 DECONV=-1"), encode_write(reg::CNA_CONV_CON1, 1u << 16));
}

TEST(RegcmdAssembler, KeywordsCommentsAndBlankLines) {
    const std::string text =
        "# a comment line\n"
        "\n"
        "   \t  \n"
        "nop            # trailing comment\n"
        "NOP\n"
        "arm\n"
        "enable 0x1d\n"
        "ENABLE cna core dpu dpu_rdma\n"
        "enable PPU PPU_RDMA\n"
        "enable 0\n"
        "raw 0x0123456789abcdef\n"
        "RAW 0x0123_4567_89AB_CDEF\n"
        "raw 18446744073709551615\r\n"
        "CNA.CONV_CON1 CONV_MODE=3#no space before the comment\n"
        "# last line without a newline";
    const std::vector<uint64_t> w = assemble_ok(text);
    const std::vector<uint64_t> expect = {0,
                                          0,
                                          0x0041000000000000ull,
                                          0x00810000001d0008ull,
                                          0x00810000001d0008ull,
                                          0x0081000000600008ull,
                                          0x0081000000000008ull,
                                          0x0123456789abcdefull,
                                          0x0123456789abcdefull,
                                          0xffffffffffffffffull,
                                          encode_write(reg::CNA_CONV_CON1, 3)};
    EXPECT_EQ(w, expect);
    EXPECT_TRUE(assemble_ok("").empty());
    EXPECT_TRUE(assemble_ok("# only comments\n\n").empty());
}

TEST(RegcmdAssembler, ErrorsNameTheLine) {
    const std::string prefix = "nop\n# comment\n\n";  // the bad line is line 4
    auto expect_error = [&](const std::string& line, const std::vector<std::string>& parts) {
        const std::string message = assemble_error(prefix + line + "\nnop\n");
        EXPECT_EQ(message.rfind("line 4: ", 0), 0u) << "for '" << line << "': " << message;
        for (const std::string& part : parts) {
            EXPECT_NE(message.find(part), std::string::npos)
                << "for '" << line << "': '" << message << "' lacks '" << part << "'";
        }
    };
    // Unknown register or field.
    expect_error("CNA.NO_SUCH_REG = 1", {"unknown register", "CNA.NO_SUCH_REG"});
    expect_error("CNA.NO_SUCH_REG CONV_MODE=1", {"unknown register", "CNA.NO_SUCH_REG"});
    expect_error("XYZ.CONV_CON1 = 1", {"unknown register", "XYZ.CONV_CON1"});
    expect_error("CNA.CONV_CON1 NO_SUCH_FIELD=1", {"CNA.CONV_CON1", "no field", "NO_SUCH_FIELD", "CONV_MODE"});
    // Values that do not fit.
    expect_error("CNA.CONV_CON1 CONV_MODE=16", {"CNA.CONV_CON1", "CONV_MODE", "16", "4 bits"});
    expect_error("CNA.CONV_CON1 CONV_MODE=-9", {"CNA.CONV_CON1", "CONV_MODE", "-9"});
    expect_error("CNA.CONV_CON1 DECONV=2", {"DECONV"});
    expect_error("CNA.PAD_CON1 PAD_VALUE=0x100000000", {"PAD_VALUE"});
    expect_error("CNA.PAD_CON1 PAD_VALUE=-2147483649", {"PAD_VALUE"});
    expect_error("CNA.CONV_CON1 = 0x100000000", {"does not fit 32 bits"});
    expect_error("CNA.CONV_CON1 = -2147483649", {"does not fit 32 bits"});
    expect_error("enable 0x80", {"outside 0x7f", "raw"});
    // Malformed lines.
    expect_error("garbage", {"unrecognised line", "garbage"});
    expect_error("hello world", {"unknown register", "hello"});
    expect_error("CNA.CONV_CON1 = banana", {"banana"});
    expect_error("CNA.CONV_CON1 = 12abc", {"12abc"});
    expect_error("CNA.CONV_CON1 = 1 2", {"expected one value"});
    expect_error("CNA.CONV_CON1 =", {"missing value"});
    expect_error("CNA.CONV_CON1 CONV_MODE = 3", {"FIELD=value"});
    expect_error("CNA.CONV_CON1 CONV_MODE=", {"FIELD=value"});
    expect_error("CNA.CONV_CON1 CONV_MODE=3 CONV_MODE=1", {"CONV_MODE", "twice"});
    expect_error("CNA.CONV_CON1 CONV_MODE=0x", {"0x"});
    expect_error("CNA.CONV_CON1 CONV_MODE=1__0", {"1__0"});
    expect_error("nop 5", {"no operand"});
    expect_error("arm 0", {"no operand"});
    expect_error("enable", {"bitmap"});
    expect_error("enable CNA BOGUS", {"BOGUS"});
    expect_error("raw", {"raw"});
    expect_error("raw -1", {"-1"});
    expect_error("raw 0x10000000000000000", {"0x10000000000000000"});
    // Offsets must belong to the block, and only stream blocks can be written.
    expect_error("DPU.0x50C4 = 0", {"0x50C4", "DPU_RDMA", "DPU"});
    expect_error("DPU.0x10000 = 0", {"offset"});
    expect_error("FOO.0x4000 = 0", {"unknown block", "FOO"});
    expect_error("DPU.0x40C8 F=1", {"not in the register table", "DPU.0x40C8 = value"});
    expect_error("GLOBAL.OPERATION_ENABLE = 1", {"GLOBAL.OPERATION_ENABLE", "MMIO", "raw"});
    expect_error("DDMA.CFG_OUTSTANDING RD_OS_CNT=1", {"DDMA.CFG_OUTSTANDING", "MMIO"});
    expect_error("SDMA.0x9000 = 1", {"MMIO"});
}

TEST(RegcmdAssembler, LineNumbersCountEveryLine) {
    EXPECT_EQ(assemble_error("CNA.BAD = 1").rfind("line 1: ", 0), 0u);
    EXPECT_EQ(assemble_error("nop\r\nnop\r\nCNA.BAD = 1\r\n").rfind("line 3: ", 0), 0u);
    std::string many;
    for (int i = 0; i < 99; ++i) many += (i % 3 == 0) ? "# c\n" : (i % 3 == 1 ? "\n" : "arm\n");
    EXPECT_EQ(assemble_error(many + "CNA.CONV_CON1 CONV_MODE=99\n").rfind("line 100: ", 0), 0u);
}

TEST(RegcmdPrinter, ExactLines) {
    const ListingOptions opt;
    EXPECT_EQ(print_word(0, opt), "nop");
    EXPECT_EQ(print_word(encode_arm(), opt), "arm");
    EXPECT_EQ(print_word(encode_op_enable(0x1d), opt), "enable 0x1d  # CNA CORE DPU DPU_RDMA");
    EXPECT_EQ(print_word(encode_op_enable(0x60), opt), "enable 0x60  # PPU PPU_RDMA");
    EXPECT_EQ(print_word(encode_op_enable(0), opt), "enable 0x00  # no blocks");
    EXPECT_EQ(print_word(encode_write(reg::CNA_CONV_CON1, 0x120), opt),
              "CNA.CONV_CON1 = 0x00000120                    # IN_PRECISION=2 PROC_PRECISION=2");
    EXPECT_EQ(print_word(encode_write(reg::CNA_FEATURE_DATA_ADDR, 0xfff7d000u), opt),
              "CNA.FEATURE_DATA_ADDR = 0xFFF7D000");
    EXPECT_EQ(print_word(encode_write(reg::CNA_CONV_CON2, 0x40000110u), opt),
              "CNA.CONV_CON2 = 0x40000110                    # FEATURE_GRAINS=17 unnamed bits 0x40000000");
    EXPECT_EQ(print_word(encode_write(0x40c8, 7), opt),
              "DPU.0x40C8 = 0x00000007                       # invalid: not in the register table");
    ListingOptions permissive;
    permissive.rules.require_known_register = false;
    EXPECT_EQ(print_word(encode_write(0x40c8, 7), permissive),
              "DPU.0x40C8 = 0x00000007                       # not in the register table");
    ListingOptions bare;
    bare.field_comments = false;
    EXPECT_EQ(print_word(encode_write(reg::CNA_CONV_CON1, 0x120), bare), "CNA.CONV_CON1 = 0x00000120");
    // Words with no symbolic form say why.
    EXPECT_EQ(print_word(0x0001000000001234ull, opt),
              "raw 0x0001000000001234  # invalid: op field is neither a no-op, a marker nor a one-hot block select");
    EXPECT_EQ(print_word(0x0000000000000001ull, opt), "raw 0x0000000000000001  # no-op (op 0x0000) with a nonzero payload");
    EXPECT_EQ(print_word(0x0041000000000008ull, opt),
              "raw 0x0041000000000008  # arm marker (op 0x0041) with a nonzero payload");
    EXPECT_EQ(print_word(0x0081000000800008ull, opt).rfind("raw 0x0081000000800008  # invalid: ", 0), 0u);
    EXPECT_EQ(print_word(0x040100000000802cull, opt).rfind("raw 0x040100000000802c  # invalid: block select", 0), 0u);
    ListingOptions rv1103;  // no block/offset check: valid there, still raw here
    rv1103.rules.check_block_offset = false;
    rv1103.rules.require_known_register = false;
    EXPECT_EQ(print_word(0x040100000000802cull, rv1103),
              "raw 0x040100000000802c  # CMAC select with register 0x802C (DDMA); only raw keeps the select");
}

TEST(RegcmdPrinter, TaskMarkers) {
    const std::vector<uint64_t> words = {encode_write(reg::DPU_S_POINTER, 0xe), 0, encode_arm(),
                                         encode_op_enable(0x18), encode_arm(), encode_op_enable(0x60)};
    ListingOptions opt;
    opt.first_task = 4;
    const std::string text = print_listing(words, opt);
    EXPECT_NE(text.find("enable 0x18  # DPU DPU_RDMA\n# --- task 4 ends\n\narm\n"), std::string::npos) << text;
    EXPECT_NE(text.find("# --- task 5 ends\n"), std::string::npos) << text;
    opt.task_markers = false;
    EXPECT_EQ(print_listing(words, opt).find("task"), std::string::npos);
    EXPECT_EQ(assemble_ok(text), words);
}

TEST(RegcmdPrinter, OpEnableBlockNames) {
    EXPECT_EQ(op_enable_blocks(0x7f), "CNA bit1 CORE DPU DPU_RDMA PPU PPU_RDMA");
    EXPECT_EQ(op_enable_blocks(0x0d), "CNA CORE DPU");
    EXPECT_EQ(op_enable_blocks(0x100), "bit8");
    EXPECT_EQ(op_enable_blocks(0), "");
}

// Random words biased towards the interesting shapes: every op kind, table
// and untabled offsets, matching and mismatching blocks, odd payloads.
std::vector<uint64_t> random_words(uint32_t seed, size_t count) {
    std::mt19937_64 rng(seed);
    size_t table_size = 0;
    const RegisterInfo* table = register_table(&table_size);
    const uint16_t ops[] = {0x0000, 0x0041, 0x0081, 0x0101, 0x0201, 0x0401, 0x0801, 0x1001, 0x2001,
                            0x4001, 0x8001, 0x0001, 0x0301, 0x0100, 0x00c1, 0xffff};
    std::vector<uint64_t> words;
    words.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const uint64_t r = rng();
        uint16_t op = ops[r % (sizeof(ops) / sizeof(ops[0]))];
        uint16_t reg = 0;
        uint32_t value = static_cast<uint32_t>(rng());
        switch ((r >> 8) % 8) {
        case 0: words.push_back(rng()); continue;                        // anything at all
        case 1: reg = static_cast<uint16_t>(rng()); break;                // any offset
        case 2: reg = static_cast<uint16_t>((rng() % 8) << 12 | (rng() & 0xffc)); break;
        case 3:                                                            // small values, enables
            value = static_cast<uint32_t>(rng() % 0x100);
            if (rng() % 2) op = kOpOpEnable;
            break;
        default: {                                                         // a table register, matching op
            const RegisterInfo& info = table[rng() % table_size];
            reg = info.offset;
            if ((r >> 16) % 4 != 0) op = op_for_block(info.block);
        }
        }
        if (op == kOpOpEnable && (r >> 20) % 2) reg = kOpEnableReg;
        if ((op == kOpNop || op == kOpArm) && (r >> 24) % 2) {
            value = 0;
            reg = 0;
        }
        words.push_back(encode_word(op, value, reg));
    }
    return words;
}

TEST(RegcmdRoundTrip, RandomWords) {
    constexpr uint32_t kSeed = 20261121;
    constexpr size_t kWords = 20000;
    std::printf("random words: seed %u, %zu words\n", kSeed, kWords);
    const std::vector<uint64_t> words = random_words(kSeed, kWords);
    size_t counts[5] = {};
    for (uint64_t w : words) ++counts[static_cast<int>(decode_word(w, {}).kind)];
    std::printf("kinds (strict rules): nop %zu, write %zu, arm %zu, op_enable %zu, invalid %zu\n", counts[0],
                counts[1], counts[2], counts[3], counts[4]);
    EXPECT_GT(counts[static_cast<int>(WordKind::kInvalid)], kWords / 10);
    EXPECT_GT(counts[static_cast<int>(WordKind::kWrite)], kWords / 5);
    EXPECT_GT(counts[static_cast<int>(WordKind::kOpEnable)], 50u);

    ListingOptions strict;
    ListingOptions relaxed;
    relaxed.rules.check_block_offset = false;
    relaxed.rules.require_known_register = false;
    relaxed.field_comments = false;
    for (const ListingOptions* opt : {&strict, &relaxed}) {
        const std::string text = print_listing(words, *opt);
        auto back = assemble_listing(text);
        ASSERT_TRUE(back.is_ok()) << back.status().message();
        ASSERT_EQ(back->size(), words.size());
        for (size_t i = 0; i < words.size(); ++i) {
            ASSERT_EQ(back.value()[i], words[i]) << "word " << i << " printed as: " << print_word(words[i], *opt);
        }
        // Printing is a fixed point: the listing of the listing is the same text.
        EXPECT_EQ(print_listing(back.value(), *opt), text);
    }
}

TEST(RegcmdRoundTrip, EveryTableRegisterAndFieldExtreme) {
    size_t n = 0;
    const RegisterInfo* table = register_table(&n);
    std::vector<uint64_t> words;
    for (size_t i = 0; i < n; ++i) {
        const RegisterInfo& r = table[i];
        if (static_cast<int>(r.block) >= kNumStreamBlocks) continue;
        for (uint32_t v : {0u, 1u, 0x80000000u, 0xffffffffu}) words.push_back(encode_write(r.offset, v));
        for (size_t f = 0; f < r.field_count; ++f) words.push_back(encode_write(r.offset, r.fields[f].field.mask()));
    }
    EXPECT_EQ(assemble_ok(print_listing(words, {})), words);
}

TEST(RegcmdRoundTrip, HandWrittenConvTask) {
    const std::string text = read_text(std::string(RKNN_HW_TEST_DATA_DIR) + "/conv3x3_int8.txt");
    const std::vector<uint64_t> words = assemble_ok(text);
    ASSERT_EQ(words.size(), 126u);
    // Every word decodes under the strict RK3588 rules.
    for (size_t i = 0; i < words.size(); ++i) {
        EXPECT_NE(decode_word(words[i], {}).kind, WordKind::kInvalid) << "word " << i;
    }
    // Spot checks of words written in each syntax.
    EXPECT_EQ(words[0], encode_write(reg::CNA_CBUF_CON0, 0xb1));
    EXPECT_EQ(words[4], encode_write(reg::DPU_S_POINTER, s_pointer::kPingPong));
    EXPECT_EQ(words[5], encode_write(reg::DPU_RDMA_RDMA_S_POINTER, s_pointer::kPingPong));
    EXPECT_EQ(words[7], encode_write(reg::CNA_CONV_CON3, 0x9));
    auto find = [&](uint16_t reg) {
        for (uint64_t w : words) {
            if (static_cast<uint16_t>(w) == reg && (w >> 48) != 0) return static_cast<uint32_t>(w >> 16);
        }
        ADD_FAILURE() << "no write to " << reg;
        return 0u;
    };
    EXPECT_EQ(find(reg::CNA_PAD_CON1), 0xfffffffeu);
    EXPECT_EQ(find(reg::DPU_OUT_CVT_OFFSET), 0xffffff85u);
    EXPECT_EQ(find(reg::CNA_FEATURE_DATA_ADDR), 0x10000000u);
    EXPECT_EQ(find(reg::CNA_DMA_CON0), 0x000f000fu);
    EXPECT_EQ(find(reg::DPU_BS_CFG), 0x00020150u);
    EXPECT_EQ(find(reg::DPU_RDMA_RDMA_WEIGHT), 0x01010101u);
    // The tail (hw-facts 3.3).
    const size_t n = words.size();
    EXPECT_EQ(words[n - 4], 0u);
    EXPECT_EQ(words[n - 3], encode_write(reg::PC_REGISTER_AMOUNTS, 0));
    EXPECT_EQ(words[n - 2], encode_arm());
    EXPECT_EQ(words[n - 1], encode_op_enable(0x1d));

    const std::string printed = print_listing(words, {});
    EXPECT_EQ(assemble_ok(printed), words);
    EXPECT_NE(printed.find("CNA.PAD_CON1 = 0xFFFFFFFE\n"), std::string::npos) << printed;
    EXPECT_NE(printed.find("CORE.UNDOC_3030 = 0x00000000\n"), std::string::npos);
    EXPECT_NE(printed.find("enable 0x1d  # CNA CORE DPU DPU_RDMA\n# --- task 0 ends\n"), std::string::npos);
}

TEST(ListingInteger, Forms) {
    bool neg = false;
    uint64_t v = 0;
    EXPECT_TRUE(parse_listing_integer("0", &neg, &v));
    EXPECT_EQ(v, 0u);
    EXPECT_TRUE(parse_listing_integer("0120", &neg, &v));  // decimal, not octal
    EXPECT_EQ(v, 120u);
    EXPECT_TRUE(parse_listing_integer("-0x10", &neg, &v));
    EXPECT_TRUE(neg);
    EXPECT_EQ(v, 16u);
    EXPECT_TRUE(parse_listing_integer("+0b101", &neg, &v));
    EXPECT_FALSE(neg);
    EXPECT_EQ(v, 5u);
    EXPECT_TRUE(parse_listing_integer("0xffff_ffff_ffff_ffff", &neg, &v));
    EXPECT_EQ(v, UINT64_MAX);
    for (const char* bad : {"", "-", "0x", "0b2", "_1", "1_", "1__2", "0x_1", "12a", "18446744073709551616",
                            "0x1_0000_0000_0000_0000", " 1", "--1"}) {
        EXPECT_FALSE(parse_listing_integer(bad, &neg, &v)) << "'" << bad << "'";
    }
}

}  // namespace
}  // namespace rknn::hw
