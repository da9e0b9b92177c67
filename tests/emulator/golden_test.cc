// Hardware ground truth (../shared/golden, see its INDEX.md): the emulator
// must reproduce what real RK3588 NPUs wrote. Skips when the folder is absent.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

#include "npu_harness.h"

namespace {

namespace fs = std::filesystem;
namespace et = rknn::emutest;
namespace f = rknn::hw::field;
namespace r = rknn::hw::reg;

fs::path golden_dir() { return fs::path(RKNN_GOLDEN_DIR); }

#define REQUIRE_GOLDEN(sub)                                                                   \
    if (!fs::exists(golden_dir() / (sub))) {                                                  \
        GTEST_SKIP() << "golden data not found at " << (golden_dir() / (sub)).string()        \
                     << " (the ../shared/golden tree is optional outside the project tree)"; \
    }

std::vector<uint8_t> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Mesa/Teflon int8 depthwise 3x3 (64 channels, 8x8, pad 1) with the cubes
// Mesa handed to the NPU and the output cube the NPU wrote. The task is the
// register program Mesa's rkt_regcmd.c emits for this layer (spec/hw-facts.md
// 3.6, golden/gregordinary-rockchip-npu-notes/depthwise-conv.md for the
// values Mesa computed: OUT_CVT 17675 >> 22, offset 5 - 128, pad 0x7e).
TEST(EmulatorGolden, MesaDepthwiseCaptureIsReproducedByteForByte) {
    const char* kDir = "gregordinary-rocket-userspace/tests/data/teflon-dw-capture";
    REQUIRE_GOLDEN(kDir);
    const fs::path dir = golden_dir() / kDir;
    const auto input = read_file(dir / "mesa-input-000-000.bin");
    const auto weights = read_file(dir / "mesa-weights-000-000.bin");
    const auto biases = read_file(dir / "mesa-biases-000-000.bin");
    const auto expected = read_file(dir / "mesa-output-000-000.bin");
    ASSERT_EQ(input.size(), 8192u);
    ASSERT_EQ(expected.size(), 8192u);
    ASSERT_EQ(biases.size(), 256u);

    constexpr uint32_t kIn = 0x100000, kW = 0x200000, kB = 0x300000, kOut = 0x400000;
    et::TaskEmitter b;
    b.write_fields(r::CNA_CONV_CON1, {{f::CNA_CONV_CON1_CONV_MODE, 3}});
    b.write(r::DPU_S_POINTER, rknn::hw::s_pointer::kPingPong);
    b.write(r::DPU_RDMA_RDMA_S_POINTER, rknn::hw::s_pointer::kPingPong);
    b.write_fields(r::CNA_CONV_CON2, {{f::CNA_CONV_CON2_FEATURE_GRAINS, 52}});
    b.write_fields(r::CNA_CONV_CON3, {{f::CNA_CONV_CON3_CONV_X_STRIDE, 1}, {f::CNA_CONV_CON3_CONV_Y_STRIDE, 1}});
    b.write_fields(r::CNA_DATA_SIZE0, {{f::CNA_DATA_SIZE0_DATAIN_WIDTH, 8}, {f::CNA_DATA_SIZE0_DATAIN_HEIGHT, 8}});
    b.write_fields(r::CNA_DATA_SIZE1, {{f::CNA_DATA_SIZE1_DATAIN_CHANNEL, 64}, {f::CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, 63}});
    b.write(r::CNA_DATA_SIZE2, 8);
    b.write(r::CNA_DATA_SIZE3, 64);
    b.write(r::CNA_WEIGHT_SIZE0, 3 * 3 * 64);
    b.write(r::CNA_WEIGHT_SIZE1, 3 * 3 * 64);
    b.write_fields(r::CNA_WEIGHT_SIZE2, {{f::CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, 3},
                                         {f::CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, 3},
                                         {f::CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, 1}});
    b.write_fields(r::CNA_CVT_CON0, {{f::CNA_CVT_CON0_CVT_BYPASS, 1}, {f::CNA_CVT_CON0_CVT_TYPE, 1},
                                     {f::CNA_CVT_CON0_DATA_SIGN, 1}});
    b.write_fields(r::CNA_PAD_CON0, {{f::CNA_PAD_CON0_PAD_TOP, 1}, {f::CNA_PAD_CON0_PAD_LEFT, 1}});
    b.write(r::CNA_FEATURE_DATA_ADDR, kIn);
    b.write(r::CNA_DMA_CON1, 8 * 4);
    b.write(r::CNA_DMA_CON2, 8 * 4 * (8 / 4 - 1));
    b.write(r::CNA_DCOMP_ADDR0, kW);
    b.write(r::CNA_PAD_CON1, 0xfe - 0x80);  // input zero point 0xfe (Mesa's uint8 view of -2) - 0x80
    b.write_fields(r::CORE_MISC_CFG, {{f::CORE_MISC_CFG_QD_EN, 1}, {f::CORE_MISC_CFG_DW_EN, 1}});
    b.write_fields(r::CORE_DATAOUT_SIZE_0, {{f::CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, 7},
                                            {f::CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, 7}});
    b.write(r::CORE_DATAOUT_SIZE_1, 63);
    b.write(r::CORE_CLIP_TRUNCATE, 0);
    b.write_fields(r::DPU_FEATURE_MODE_CFG, {{f::DPU_FEATURE_MODE_CFG_BURST_LEN, 15},
                                             {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2},
                                             {f::DPU_FEATURE_MODE_CFG_CONV_MODE, 3}});
    b.write(r::DPU_DATA_FORMAT, 0);
    b.write(r::DPU_DST_BASE_ADDR, kOut);
    b.write_fields(r::DPU_DST_SURF_STRIDE, {{f::DPU_DST_SURF_STRIDE_DST_SURF_STRIDE, 64}});
    b.write(r::DPU_DATA_CUBE_WIDTH, 7);
    b.write(r::DPU_DATA_CUBE_HEIGHT, 7);
    b.write_fields(r::DPU_DATA_CUBE_CHANNEL, {{f::DPU_DATA_CUBE_CHANNEL_CHANNEL, 63},
                                              {f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, 63}});
    b.write_fields(r::DPU_BS_CFG, {{f::DPU_BS_CFG_BS_ALU_ALGO, 2}, {f::DPU_BS_CFG_BS_ALU_SRC, 1},
                                   {f::DPU_BS_CFG_BS_RELU_BYPASS, 1}, {f::DPU_BS_CFG_BS_MUL_BYPASS, 1}});
    b.write_fields(r::DPU_BS_OW_CFG, {{f::DPU_BS_OW_CFG_SIZE_E_0, 3}, {f::DPU_BS_OW_CFG_SIZE_E_1, 3},
                                      {f::DPU_BS_OW_CFG_SIZE_E_2, 3}});
    b.write(r::DPU_BS_OW_OP, 0x80 - 0);  // 0x80 - weight zero point
    b.write(r::DPU_BN_CFG, 0x53);
    b.write(r::DPU_EW_CFG, 0x383);
    b.write(r::DPU_OUT_CVT_OFFSET, static_cast<uint32_t>(5 - 0x80));
    b.write(r::DPU_OUT_CVT_SCALE, 17675);
    b.write(r::DPU_OUT_CVT_SHIFT, 22);
    b.write(r::DPU_RDMA_RDMA_DATA_CUBE_WIDTH, 7);
    b.write(r::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, 7);
    b.write(r::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL, 63);
    b.write_fields(r::DPU_RDMA_RDMA_BRDMA_CFG, {{f::DPU_RDMA_RDMA_BRDMA_CFG_BRDMA_DATA_USE, 1}});
    b.write(r::DPU_RDMA_RDMA_BS_BASE_ADDR, kB);
    b.write_fields(r::DPU_RDMA_RDMA_ERDMA_CFG, {{f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1}});
    b.write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1},
                                                      {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE, 3}});
    b.tail(0, 0, 0x1d);
    ASSERT_TRUE(b.finish().is_ok()) << b.finish().message();

    et::Device dev;
    dev.put(kIn, input.data(), input.size());
    dev.put(kW, weights.data(), weights.size());
    dev.put(kB, biases.data(), biases.size());
    uint8_t* out = dev.zeros(kOut, expected.size());
    dev.words(0x10000, b.words());
    const auto result = dev.run(0x10000, static_cast<uint32_t>(b.body_words()));
    ASSERT_TRUE(result.completed) << result.message;
    int differ = 0;
    for (size_t i = 0; i < expected.size(); ++i) differ += out[i] != expected[i];
    EXPECT_EQ(differ, 0) << "bytes differing from the NPU's output cube";
}

// Parses the integer rows after a "## <title>" heading of notes-mtx512.md.
std::vector<std::vector<int>> matrix_after(const std::string& text, const std::string& heading) {
    std::vector<std::vector<int>> rows;
    const size_t at = text.find(heading);
    if (at == std::string::npos) return rows;
    std::istringstream lines(text.substr(text.find('\n', at) + 1));
    std::string line;
    while (std::getline(lines, line) && !line.empty() && line[0] != '#') {
        std::istringstream nums(line);
        std::vector<int> row;
        int v;
        while (nums >> v) row.push_back(v);
        if (!row.empty()) rows.push_back(row);
    }
    return rows;
}

// mtx512's fp16 matmul 4x36x16 (fp32 output), whose result an RK3588 printed:
// small integers, so the products and sums are exact and so must we be.
TEST(EmulatorGolden, Fp16MatmulIsExact) {
    REQUIRE_GOLDEN("notes-mtx512.md");
    std::ifstream in(golden_dir() / "notes-mtx512.md");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto a = matrix_after(text, "## A (4 x 36)");
    const auto bm = matrix_after(text, "## B (16 x 36)");
    const auto c = matrix_after(text, "## C = A times B-transposed");
    ASSERT_EQ(a.size(), 4u);
    ASSERT_EQ(bm.size(), 16u);
    ASSERT_EQ(c.size(), 4u);
    constexpr int kM = 4, kK = 36, kN = 16, kKPadded = 64;
    // Input: K channels x M rows x 1 column; weights: N kernels of K channels (1x1).
    std::vector<float> input(static_cast<size_t>(kK) * kM), weights(static_cast<size_t>(kN) * kK);
    for (int m = 0; m < kM; ++m)
        for (int k = 0; k < kK; ++k) input[static_cast<size_t>(k) * kM + m] = static_cast<float>(a[m][k]);
    for (int n = 0; n < kN; ++n)
        for (int k = 0; k < kK; ++k) weights[static_cast<size_t>(n) * kK + k] = static_cast<float>(bm[n][k]);

    et::ConvGeometry g;
    g.in_c = kK;
    g.in_h = kM;
    g.in_w = 1;
    g.out_c = kN;
    g.fp16 = true;
    constexpr uint32_t kIn = 0x100000, kW = 0x200000, kOut = 0x400000;
    et::Device dev;
    const auto cube = et::pack_fp16_cube(input.data(), kK, kM, 1, kKPadded);
    dev.put(kIn, cube.data(), cube.size());
    const auto packed = et::pack_conv_weights_fp16(weights.data(), kN, kK, 1, 1, kKPadded);
    dev.put(kW, packed.data(), packed.size() * 2);
    uint8_t* out = dev.zeros(kOut, kN / 4 * kM * 16);
    et::TaskEmitter b;
    g.in_c = kKPadded;  // the padded channels are zeros in the cube and the weights
    et::emit_conv_fp16(&b, g, {kIn, kW, 0, kOut}, true);
    b.tail(0, 0, 0x0d);
    ASSERT_TRUE(b.finish().is_ok()) << b.finish().message();
    dev.words(0x10000, b.words());
    const auto result = dev.run(0x10000, static_cast<uint32_t>(b.body_words()));
    ASSERT_TRUE(result.completed) << result.message;
    const auto got = et::unpack_fp32_cube(out, kN, kM, 1, kM * 16);
    for (int m = 0; m < kM; ++m)
        for (int n = 0; n < kN; ++n)
            EXPECT_EQ(got[static_cast<size_t>(n) * kM + m], static_cast<float>(c[m][n])) << "C[" << m << "][" << n << "]";
}


namespace phhusson {

struct Task {
    uint32_t enable_mask, int_mask, regcfg_amount;
    uint64_t regcmd_addr;
};

struct Dump {
    std::vector<uint8_t> gem[7];  // 1 weights, 2 regcmd, 3 tasks, 4 internal, 5 input, 6 output
    std::vector<Task> tasks;
};

bool load(const fs::path& dir, const std::string& name, Dump* d) {
    const char* roles[] = {"", "gem1_weights", "gem2_regcmd", "gem3_tasks", "gem4_internal", "gem5_input", "gem6_output"};
    for (int i = 1; i <= 6; ++i) {
        d->gem[i] = read_file(dir / (name + "." + roles[i] + ".bin"));
        if (d->gem[i].empty()) return false;
    }
    for (size_t off = 0; off + 40 <= d->gem[3].size(); off += 40) {
        uint32_t w[6];
        uint64_t addr;
        std::memcpy(w, d->gem[3].data() + off + 8, sizeof(w));
        std::memcpy(&addr, d->gem[3].data() + off + 32, 8);
        if (w[0] == 0) continue;  // unused slot
        d->tasks.push_back({w[0], w[1], w[4], addr});
    }
    return !d->tasks.empty();
}

// The words of task i and the value of every write in it, keyed by register.
std::map<uint16_t, uint32_t> writes_of(const Dump& d, const Task& t) {
    std::map<uint16_t, uint32_t> regs;
    const uint64_t first = (t.regcmd_addr - d.tasks[0].regcmd_addr) / 8;
    for (uint64_t i = first; i < first + t.regcfg_amount + 4 && (i + 1) * 8 <= d.gem[2].size(); ++i) {
        uint64_t w;
        std::memcpy(&w, d.gem[2].data() + i * 8, 8);
        const auto dw = rknn::hw::decode_word(w, rknn::hw::DecodeRules{});
        if (dw.kind == rknn::hw::WordKind::kWrite) regs[dw.reg] = dw.value;
    }
    return regs;
}

}  // namespace phhusson

// Vendor-compiled fp16 graphs with every GEM dumped after the run on an
// RK3588. Each graph is chains of a conv (1 channel -> 16, fp16), an
// element-wise task (x2 or +2 in the DPU) writing the output GEM, then
// layout conversions in the DPU's transpose mode (TP_EN), which the
// emulator does not model yet: they round-trip the data, so the output GEM
// already holds its final bytes after the first two tasks. We replay each
// chain up to its first transpose task and compare the output GEM and the
// internal GEM (the intermediates the NPU left there) byte for byte.
TEST(EmulatorGolden, VendorFp16GraphsReproduceTheDumpedOutputs) {
    const char* kDir = "phhusson-rknpu-reverse-engineering/derived";
    REQUIRE_GOLDEN(kDir);
    for (const char* name : {"dump-x2", "dump-+2", "dump-dumb", "dump-+2-0x54"}) {
        SCOPED_TRACE(name);
        phhusson::Dump d;
        ASSERT_TRUE(phhusson::load(golden_dir() / kDir, name, &d));
        // The dumps do not print GEM addresses: place each GEM where the
        // programs' address registers point (notes-phhusson.md).
        uint64_t input = ~0ull, weights = ~0ull;
        std::vector<bool> transpose(d.tasks.size(), false), linked(d.tasks.size(), false);
        for (size_t i = 0; i < d.tasks.size(); ++i) {
            const auto w = phhusson::writes_of(d, d.tasks[i]);
            if (w.count(r::CNA_FEATURE_DATA_ADDR)) input = std::min<uint64_t>(input, w.at(r::CNA_FEATURE_DATA_ADDR));
            if (w.count(r::CNA_DCOMP_ADDR0)) weights = std::min<uint64_t>(weights, w.at(r::CNA_DCOMP_ADDR0));
            transpose[i] = w.count(r::DPU_FEATURE_MODE_CFG) && f::DPU_FEATURE_MODE_CFG_TP_EN.get(w.at(r::DPU_FEATURE_MODE_CFG));
            linked[i] = w.count(r::PC_BASE_ADDRESS) != 0;
        }
        input &= ~uint64_t{0xfff};
        weights &= ~uint64_t{0xfff};
        // Chains (tasks linked in-stream), cut before their first transpose task.
        struct Run {
            size_t first;
            uint32_t count;
        };
        std::vector<Run> runs;
        size_t skipped = 0;
        for (size_t i = 0; i < d.tasks.size();) {
            size_t j = i;
            while (linked[j] && j + 1 < d.tasks.size()) ++j;
            size_t k = i;
            while (k <= j && !transpose[k]) ++k;
            if (k > i) runs.push_back({i, static_cast<uint32_t>(k - i)});
            skipped += j + 1 - k;
            i = j + 1;
        }
        ASSERT_FALSE(runs.empty());
        const auto second = phhusson::writes_of(d, d.tasks[runs[0].first + runs[0].count - 1]);
        const uint64_t output = second.at(r::DPU_DST_BASE_ADDR) & ~uint64_t{0xfff};
        uint64_t internal = ~0ull;
        for (const auto& t : d.tasks) {
            const auto w = phhusson::writes_of(d, t);
            for (uint16_t reg : {r::DPU_DST_BASE_ADDR, r::DPU_RDMA_RDMA_SRC_BASE_ADDR}) {
                if (!w.count(reg) || w.at(reg) == 0) continue;
                const uint64_t a = w.at(reg);
                if (a >= output && a < output + d.gem[6].size()) continue;
                internal = std::min<uint64_t>(internal, a & ~uint64_t{0xfff});
            }
        }
        et::Device dev;
        dev.put(d.tasks[0].regcmd_addr, d.gem[2].data(), d.gem[2].size());
        dev.put(input, d.gem[5].data(), d.gem[5].size());
        dev.put(weights, d.gem[1].data(), d.gem[1].size());
        uint8_t* out = dev.zeros(output, d.gem[6].size());
        ASSERT_NE(out, nullptr);
        uint8_t* scratch = dev.zeros(internal, d.gem[4].size());
        ASSERT_NE(scratch, nullptr);
        size_t ran = 0;
        for (const Run& run : runs) {
            // The vendor streams name their core in CNA S_POINTER (bits 28-29).
            const auto w = phhusson::writes_of(d, d.tasks[run.first]);
            const int core = w.count(r::CNA_S_POINTER) ? static_cast<int>((w.at(r::CNA_S_POINTER) >> 28) & 3) : 0;
            dev.use_core(core);
            const auto res = dev.run(d.tasks[run.first].regcmd_addr, d.tasks[run.first].regcfg_amount, run.count);
            ASSERT_TRUE(res.completed) << "chain from task " << run.first << ": " << res.message;
            ran += run.count;
        }
        int differ = 0;
        for (size_t i = 0; i < d.gem[6].size(); ++i) differ += out[i] != d.gem[6][i];
        EXPECT_EQ(differ, 0) << "output bytes differing from what the NPU wrote";
        // The internal GEM holds the intermediates as the NPU left them: the
        // conv output (1.0 in lane 0 of every pixel) and zeros elsewhere.
        int internal_differ = 0;
        for (size_t i = 0; i < d.gem[4].size(); ++i) internal_differ += scratch[i] != d.gem[4][i];
        EXPECT_EQ(internal_differ, 0) << "intermediate bytes differing from what the NPU left in the internal GEM";
        std::printf("%s: %zu tasks; replayed %zu (conv + element-wise), %zu from a transpose task on not replayed; "
                    "output GEM (%zu bytes) and internal GEM (%zu bytes) compared\n",
                    name, d.tasks.size(), ran, skipped, d.gem[6].size(), d.gem[4].size());
    }
}

}  // namespace
