// RK3566/RK3568 int8 convolutions (docs/rk3568.md): lowered in that core's
// register dialect, run on an emulated RK3568 through the vendor back-end and
// the mock kernel, and compared bit for bit with the int8 reference; the
// register values iav's board-verified recipe gives are checked field by
// field against a table of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "cpu/int8/lut_stage.h"
#include "hw/regcmd.h"
#include "hw/soc_profile.h"
#include "npu/conv_lowering.h"
#include "npu/native_layout.h"
#include "npu_runner.h"
#include "random_conv_spec.h"

namespace {

using rknn::graph::OpType;
using rknn::testing::QuantConvCase;
using rknn::testing::QuantConvSpec;
namespace npu = rknn::npu;

enum : int32_t { kInput, kWeights, kRecords, kOutput, kResidual };

// What the RK356x path builds so far: no LUT activations (they become a
// ReLU after a residual add, else a clip, or none).
QuantConvSpec buildable(QuantConvSpec s) {
    if (rknn::cpu::int8::needs_lut(s.activation))
        s.activation = s.residual ? OpType::kRelu : (s.activation == OpType::kTanh ? OpType::kIdentity : OpType::kClip);
    return s;
}

npu::Int8ConvLayer lowered_layer(const QuantConvCase& layer) {
    const QuantConvSpec& s = layer.spec;
    npu::Int8ConvLayer lowered;
    lowered.geometry = rknn::testing::conv_geometry(s);
    lowered.input_zp = static_cast<int8_t>(s.input_zp);
    lowered.epilogue = npu::epilogue_regs(layer.epilogue, layer.weights.data(), s.out_c(), s.taps_per_kernel(), s.input_zp);
    lowered.addresses = {npu::BufferRef(kInput, 0), npu::BufferRef(kWeights, 0), npu::BufferRef(kRecords, 0),
                         npu::BufferRef(kOutput, 0)};
    lowered.epilogue.residual_addr = npu::BufferRef(kResidual, 0);
    return lowered;
}

struct Rk356xRun {
    std::vector<int8_t> output;  // NCHW
    npu::Program program;
};

// The input as an ARGB image: NHWC rows align(W, 8) pixels apart, each byte
// the int8 value + 128 (what the CNA's converter takes back off).
std::vector<uint8_t> argb_image(const QuantConvCase& layer) {
    const QuantConvSpec& s = layer.spec;
    const int pitch = npu::rk356x_image_row_pixels(s.w);
    auto image = npu::pack_nhwc_image(layer.input.data<int8_t>(), s.c_in, s.h, s.w, pitch, 1);
    for (uint8_t& b : image) b ^= 0x80u;
    return image;
}

// `image`: the input is read as an ARGB image (three channels) instead of a cube.
::testing::AssertionResult run_rk356x(const QuantConvCase& layer, Rk356xRun* out, bool image = false) {
    const QuantConvSpec& s = layer.spec;
    const int oc = s.out_c(), oh = s.out_h(), ow = s.out_w();
    npu::Int8ConvLayer lowered = lowered_layer(layer);
    if (image) lowered.geometry.packed_row_pixels = npu::rk356x_image_row_pixels(s.w);
    npu::testing::NpuRunner runner("rk3568");
    if (!runner.ready()) return ::testing::AssertionFailure() << "could not open the rknpu back-end on the mock RK3568";
    const auto cube = image ? argb_image(layer)
                            : npu::pack_int8_cube_rk356x(layer.input.data<int8_t>(), s.c_in, s.h, s.w,
                                                         static_cast<int8_t>(s.input_zp));
    const auto weights = s.depthwise ? npu::pack_dw_weights_int8_rk356x(layer.weights.data(), oc, s.kh, s.kw)
                         : image      ? npu::pack_image_weights_int8_rk356x(layer.weights.data(), oc, s.c_in, s.kh, s.kw)
                                      : npu::pack_conv_weights_int8_rk356x(layer.weights.data(), oc, s.c_in, s.kh, s.kw);
    const auto records = npu::bs_records_rk356x(lowered.epilogue);
    // Each depthwise group task writes 32 channels.
    const uint64_t out_bytes = npu::rk356x_cube_bytes(s.depthwise ? npu::align_up(oc, 32) : oc, oh, ow);
    // The residual is read like the output: 32 channels per depthwise group.
    std::vector<uint8_t> residual(out_bytes, 0);
    if (s.residual) {
        const auto packed = npu::pack_int8_cube_rk356x(layer.residual.data<int8_t>(), oc, oh, ow, 0);
        std::copy(packed.begin(), packed.end(), residual.begin());
    }
    if (runner.add(cube.data(), cube.size()) != kInput || runner.add(weights.data(), weights.size()) != kWeights ||
        runner.add(records.data(), records.size()) != kRecords || runner.zeros(out_bytes) != kOutput ||
        runner.add(residual.data(), residual.size()) != kResidual)
        return ::testing::AssertionFailure() << "buffer creation failed";
    npu::ProgramBuilder builder(runner.soc());
    const rknn::Status lowered_ok = npu::lower_conv_int8(lowered, runner.soc(), 0, &builder);
    if (!lowered_ok.is_ok()) return ::testing::AssertionFailure() << "lowering: " << lowered_ok.message();
    out->program = builder.finish();
    uint32_t done = 0;
    const rknn::Status ran = runner.run(out->program, &done);
    if (!ran.is_ok()) return ::testing::AssertionFailure() << "submit: " << ran.message();
    if (done != out->program.tasks.size())
        return ::testing::AssertionFailure() << done << " of " << out->program.tasks.size() << " tasks completed";
    out->output = npu::unpack_int8_cube_rk356x(runner.data(kOutput), oc, oh, ow);
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult matches_reference(const QuantConvSpec& spec, uint32_t seed, Rk356xRun* run,
                                             bool image = false) {
    QuantConvCase layer;
    const rknn::Status made = rknn::testing::make_quant_conv(spec, seed, &layer);
    if (!made.is_ok()) return ::testing::AssertionFailure() << spec.describe() << ": reference: " << made.message();
    auto ok = run_rk356x(layer, run, image);
    if (!ok) return ok << " (" << spec.describe() << ")";
    const int8_t* ref = layer.reference.data<int8_t>();
    int differ = 0;
    for (size_t i = 0; i < run->output.size(); ++i) differ += run->output[i] != ref[i];
    if (differ != 0)
        return ::testing::AssertionFailure() << spec.describe() << ": " << differ << " of " << run->output.size()
                                             << " outputs differ";
    return ::testing::AssertionSuccess();
}

// CNA CBUF_CON0 of every task in order (the bank split and WEIGHT_REUSE).
std::vector<uint32_t> cbuf_con0_values(const npu::Program& p) {
    std::vector<uint32_t> values;
    for (const auto& task : p.tasks)
        for (uint32_t i = 0; i < task.body_words; ++i) {
            const uint64_t w = p.words[task.first_word + i];
            if ((w & 0xffff) == rknn::hw::reg::CNA_CBUF_CON0) values.push_back(static_cast<uint32_t>(w >> 16));
        }
    return values;
}

QuantConvSpec square_dw_residual(int c) {
    QuantConvSpec s;
    s.c_in = s.c_out = c;
    s.h = s.w = 9;
    s.kh = s.kw = 3;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
    s.depthwise = true;
    s.residual = true;
    s.activation = OpType::kRelu;
    s.input_zp = 11;
    return s;
}

void check_random(const char* kind, int cases, uint32_t seed, bool depthwise, bool fully_connected) {
    std::mt19937 rng(seed);
    int failures = 0;
    for (int i = 0; i < cases; ++i) {
        const QuantConvSpec spec = buildable(rknn::testing::random_conv_spec(rng, depthwise, fully_connected));
        Rk356xRun run;
        const auto ok = matches_reference(spec, seed * 1000u + static_cast<uint32_t>(i), &run);
        if (!ok) {
            ADD_FAILURE() << kind << " case " << i << ": " << ok.message();
            if (++failures >= 5) return;
        }
    }
}

TEST(Rk356xConv, RandomDirectConvolutionsAreBitExact) { check_random("conv", 200, 101, false, false); }

// Channels up to 72: up to three 32-channel group tasks, the last one partial.
TEST(Rk356xConv, RandomDepthwiseConvolutionsAreBitExact) { check_random("depthwise", 120, 103, true, false); }

TEST(Rk356xConv, RandomFullyConnectedLayersAreBitExact) { check_random("fc", 100, 107, false, true); }

// First layers reading a 3-channel image in ARGB mode: every kernel, stride
// and padding of the random direct cases, on images up to 96 pixels across.
TEST(Rk356xConv, RandomArgbFirstLayersAreBitExact) {
    std::mt19937 rng(109);
    int failures = 0, cases = 0;
    while (cases < 120) {
        QuantConvSpec spec = buildable(rknn::testing::random_conv_spec(rng, false, false));
        spec.c_in = 3;
        if (rng() % 2 == 0) {  // wider images, rows of several 8-byte units and pitches past the width
            spec.w = spec.w * 5 + static_cast<int>(rng() % 7);
            spec.h = spec.h * 3;
        }
        if (spec.h * spec.w <= 1) continue;  // a one-pixel input is an FC task
        Rk356xRun run;
        const auto ok = matches_reference(spec, 109000u + static_cast<uint32_t>(cases), &run, true);
        ++cases;
        if (!ok) {
            ADD_FAILURE() << "ARGB case " << cases << ": " << ok.message();
            if (++failures >= 5) return;
        }
    }
}

// A fused residual after a depthwise layer: each 32-channel group's EW stage
// reads its own 32 channels of the residual.
TEST(Rk356xConv, DepthwiseWithAResidualIsBitExact) {
    for (int c : {16, 40, 72}) {
        QuantConvSpec s = square_dw_residual(c);
        Rk356xRun run;
        EXPECT_TRUE(matches_reference(s, static_cast<uint32_t>(c), &run));
    }
}

// ---- the CBUF: 8 banks of 1024 32-byte entries -------------------------------

TEST(Rk356xConv, BandsKeepResidentWeightsAndMatchTheReference) {
    QuantConvSpec s;
    s.c_in = 32;
    s.c_out = 24;
    s.h = 120;
    s.w = 100;  // 100 entries per row, 12000 for the image: more than 8 banks
    s.kh = s.kw = 3;
    s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 1;
    s.input_zp = -3;
    s.activation = OpType::kRelu;
    s.residual = true;  // the second band reads the residual at its rows
    Rk356xRun run;
    ASSERT_TRUE(matches_reference(s, 7, &run));
    ASSERT_EQ(run.program.tasks.size(), 2u) << "71 input rows per band (7 banks of 1024 entries / 100)";
    // 7 data banks + 1 weight bank, the second band reusing the weights: the
    // vendor's 0x17 / 0x2017 (docs/rk3568.md 4, iav Test 32/44).
    EXPECT_EQ(cbuf_con0_values(run.program), (std::vector<uint32_t>{0x17, 0x2017}));
}

TEST(Rk356xConv, WeightsLargerThanTheSpareBanksStreamThroughOne) {
    npu::ConvGeometry g;
    g.in_c = 128;
    g.out_c = 224;
    g.in_h = 160;
    g.in_w = 12;
    g.kh = g.kw = 3;  // 258048 weight bytes: 8064 entries, 8 banks
    const rknn::hw::SocProfile& soc = *rknn::hw::find_soc("rk3568");
    auto plan = npu::plan_conv(g, soc, 0);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    const auto& tiles = plan.value().per_core[0];
    ASSERT_GT(tiles.size(), 1u);
    for (const auto& t : tiles) {
        EXPECT_EQ(t.data_banks, 7);
        EXPECT_EQ(t.weight_banks, 1);
        EXPECT_FALSE(t.reuse_weights) << "streamed weights are read again by every band";
        EXPECT_EQ(t.kernels, 224) << "no kernel groups on RK356x";
    }
    g.fp16 = true;
    EXPECT_EQ(npu::plan_conv(g, soc, 0).status().code(), rknn::StatusCode::kUnimplemented);
}

// ---- register values against iav's recipe --------------------------------------

// One task's register writes by wire offset (the last write wins).
std::map<uint16_t, uint32_t> task_writes(const npu::Program& p, size_t task) {
    std::map<uint16_t, uint32_t> writes;
    const npu::ProgramTask& t = p.tasks[task];
    for (uint32_t i = 0; i < t.body_words; ++i) {
        const uint64_t w = p.words[t.first_word + i];
        writes[static_cast<uint16_t>(w & 0xffff)] = static_cast<uint32_t>(w >> 16);
    }
    return writes;
}

// The relocation offset of the word that writes `reg` in `task`.
int64_t relocated_offset(const npu::Program& p, size_t task, uint16_t reg) {
    const npu::ProgramTask& t = p.tasks[task];
    for (const npu::Relocation& r : p.relocations)
        if (r.word >= t.first_word && r.word < t.first_word + t.body_words && (p.words[r.word] & 0xffff) == reg)
            return static_cast<int64_t>(r.offset);
    return -1;
}

struct Expected {
    uint16_t wire;
    uint32_t value;
    const char* fact;  // docs/rk3568.md and iav's source
};

struct RecipeCase {
    const char* name;
    QuantConvSpec spec;
    size_t tasks;
    std::vector<Expected> first_task;
    bool image = false;  // the input read as an ARGB image
};

QuantConvSpec square_layer(int c_in, int c_out, int h, int w, int k, int stride, int pad, bool depthwise) {
    QuantConvSpec s;
    s.c_in = c_in;
    s.c_out = c_out;
    s.h = h;
    s.w = w;
    s.kh = s.kw = k;
    s.stride_h = s.stride_w = stride;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = pad;
    s.depthwise = depthwise;
    s.input_zp = -128;  // a uint8 zero point of 0
    return s;
}

// mobilenet_v1's first layer: 224x224 RGB (uint8 zero point 128), 3x3 stride 2, SAME.
QuantConvSpec rgb_stem() {
    QuantConvSpec s = square_layer(3, 32, 224, 224, 3, 2, 0, false);
    s.pad_bottom = s.pad_right = 1;
    s.input_zp = 0;
    return s;
}

std::vector<RecipeCase> recipe_cases() {
    return {
        {"3x3 conv 112x112x32 -> 64",
         square_layer(32, 64, 112, 112, 3, 1, 1, false),
         2,
         {{0x2004, 0xe, "CMAC S_POINTER 0xE (1.2, RC)"},
          {0x200c, 1, "CMAC MISC_CFG QD_EN (1.2, LOG T23/28)"},
          {0x300c, 0, "CORE MISC_CFG one slot lower, 0 for a convolution (1.2, LOG T29)"},
          {0x3010, (62u << 16) | 111u, "CORE DATAOUT_SIZE_0 (H-1)<<16 | (W-1) at 0x3010; 63 rows in band 1"},
          {0x3014, 63, "CORE DATAOUT_SIZE_1 = announced channels - 1 (align(max(C,16),16))"},
          {0x302c, 0, "0x302C = 0 (1.2)"},
          {0x1078, 0x00171c07, "DMA_CON0 verbatim (1.3, PT 07/44)"},
          {0x1018, 0, "CONV_CON4 RGB_BYTELENGTH 0 outside ARGB, written as iav's port does (1.3)"},
          {0x104c, 0xa, "CVT_CON0 DATA_SIGN | CVT_TYPE, bit 0 clear: the converter off (1.3)"},
          {0x1068, 0xff800011, "PAD_CON0: pad value 0xFF80 for zp 0 in [31:16], top 1, left 1 (1.2, LOG T31)"},
          {0x1010, 4u << 4, "FEATURE_GRAINS = kh + sy (output 112 wide), KERNEL_GROUP 0 (1.3)"},
          {0x1044, (112u << 16) | 112u, "CBUF_CON1: width in [31:16], DATA_ENTRIES ceil(W ceil(C/8) / 4) (1.2, 4)"},
          {0x1040, 0x17, "7 data banks + 1 weight bank (4, LOG T32/44)"},
          {0x107c, 112, "LINE_STRIDE = W in 8-byte units (2, TK)"},
          {0x1080, 12544, "SURF_STRIDE = align(W H, 4) of the whole cube (2, LOG T28/57)"},
          {0x4024, 12544 * 8, "DST_SURF_STRIDE raw bytes align(W H, 4) x 8 (2, LOG T52)"},
          {0x40c0, 0x31000, "SURFACE_ADD of a 112x112 output, the vendor's live value (1.1, LOG T27)"},
          {0x400c, 0x108, "DPU FEATURE_MODE_CFG as the vendor writes it for a convolution (1.2, LOG T30)"},
          {0x5024, 63, "BS stream length in 8-byte words - 1, per-channel records (3, LOG T71)"},
          {0x5044, 0x4000, "DPU_RDMA FEATURE_MODE_CFG as the vendor's (1.3, LOG T24/42)"},
          {0x5068, 0x01010101, "RDMA_WEIGHT (1.3)"}}},
        {"3x3 depthwise 7x7x64",
         square_layer(64, 64, 7, 7, 3, 1, 1, true),
         2,
         {{0x200c, 3, "CMAC MISC_CFG 3 for depthwise (1.2)"},
          {0x300c, 2, "CORE MISC_CFG DW_EN (1.2)"},
          {0x3014, 31, "depthwise announces align(max(C,32),32) channels (5, LOG T31/53/66)"},
          {0x1080, 52, "7x7 maps use 52 (2, MH / LOG T57)"},
          {0x4024, 52 * 8, "DST_SURF_STRIDE raw bytes (2)"},
          {0x40c0, 52 * 2 * 16, "SURFACE_ADD x2 for depthwise (2, LOG T32)"},
          {0x400c, 0x138, "DPU FEATURE_MODE_CFG for depthwise (1.2, LOG T30)"},
          {0x5044, 0x4006, "DPU_RDMA FEATURE_MODE_CFG for depthwise (1.3)"}}},
        {"fully connected 200 -> 10",
         square_layer(200, 10, 1, 1, 1, 1, 0, false),
         1,
         {{0x1010, 1u << 4, "FEATURE_GRAINS 1 for a one-pixel input (1.3)"},
          {0x400c, 0x108u | (1u << 25) | (26u << 9), "FC: NONALIGN and SURF_LEN align(K,16)/8 (1.2, LOG T48)"},
          {0x1080, 1, "a one-pixel surface keeps stride 1 (2, MH)"},
          {0x4024, 8, "a 1x1 output's DST_SURF_STRIDE is 8, below the field's unit (2, LOG T52)"},
          {0x3014, 15, "10 channels announce 16 (5)"}}},
        {"ARGB first layer 224x224x3 -> 32, 3x3 stride 2",
         rgb_stem(),
         2,
         {{0x100c, 0xa000, "CONV_CON1 ARGB_IN 10, the vendor's 0xA000 (1.3, RC)"},
          {0x1018, 224 * 127 * 9, "CONV_CON4 RGB_BYTELENGTH = W x band rows x 9; band 1 reads 127 rows (1.3, 4)"},
          {0x1024, (2u << 16) | 8u, "DATA_SIZE1: 8 channels read, 3 real (TK: input_channels 8 for ARGB)"},
          {0x1030, 3 * 3 * 8 * 32, "WEIGHT_SIZE0 = kw kh 8 kernels: 8-byte weight rows (3)"},
          {0x1034, 3 * 3 * 8, "WEIGHT_SIZE1 = kw kh 8 (3)"},
          {0x1040, 0x17, "7 data banks + 1 weight bank, the vendor's for this layer (4, LOG T32/44)"},
          {0x1044, (224u << 16) | 56u, "CBUF_CON1: align(W, 32) in [31:16], DATA_ENTRIES align(ceil(8 W / 32), 2) (1.2, 4)"},
          {0x104c, 0xe38e1, "CVT_CON0 vendor-exact: converter on, truncate 14 on lanes 0-2 (1.3)"},
          {0x1050, 0x4000ff80, "CVT_CON1 scale 16384, offset -128 (1.3)"},
          {0x1054, 0x4000ff80, "CVT_CON2 (1.3)"},
          {0x1058, 0x4000ff80, "CVT_CON3 (1.3)"},
          {0x105c, 0x10000, "CVT_CON4 scale 1 (1.3)"},
          {0x1068, 0, "PAD_CON0: pad value 0 for the network input of zero point 128 (1.2, LOG T31)"},
          {0x107c, 84, "LINE_STRIDE: the row (align(W, 8) pixels of 3 bytes) in 8-byte units; ceil(3 W / 8) here (2, TK)"},
          {0x1080, 224 * 224, "SURF_STRIDE W x H (2, TK)"},
          {0x1088, 8, "FC_DATA_SIZE1 DMA_CHANNEL 8 (RC)"}},
         true},
    };
}

TEST(Rk356xConv, RegistersFollowTheBoardVerifiedRecipe) {
    int compared = 0;
    for (const RecipeCase& c : recipe_cases()) {
        QuantConvCase layer;
        ASSERT_TRUE(rknn::testing::make_quant_conv(c.spec, 5, &layer).is_ok()) << c.name;
        Rk356xRun run;
        ASSERT_TRUE(run_rk356x(layer, &run, c.image)) << c.name;
        ASSERT_EQ(run.program.tasks.size(), c.tasks) << c.name;
        const auto writes = task_writes(run.program, 0);
        for (const Expected& e : c.first_task) {
            const auto it = writes.find(e.wire);
            ASSERT_NE(it, writes.end()) << c.name << ": no write to 0x" << std::hex << e.wire << " (" << e.fact << ")";
            EXPECT_EQ(it->second, e.value) << c.name << ": 0x" << std::hex << e.wire << " (" << e.fact << ")";
            ++compared;
        }
        // The CORE registers sit one slot lower: nothing is written at the
        // RK3588 slots of DATAOUT_SIZE_1 / CLIP_TRUNCATE, which the vendor leaves alone.
        EXPECT_EQ(writes.count(0x3018), 0u) << c.name;
        EXPECT_EQ(writes.count(0x301c), 0u) << c.name;
        for (const auto& task : run.program.tasks) EXPECT_EQ(task.enable_mask, 0x1fu) << c.name;
    }
    EXPECT_EQ(compared, 50);
}

// A 224-wide RGB first layer (mobilenet_v1's): 56 entries a row, so the
// 224 rows take bands of 7 banks with the weights resident (0x17 / 0x2017,
// as the vendor's). And a 226-wide one, whose rows are 232 pixels apart.
TEST(Rk356xConv, ArgbImageLargerThanTheBufferRunsInBands) {
    struct Band2 {
        int width, first_row, rows;
    };
    // 224: the vendor's second band, 98 rows from row 126 (LOG T33); 226: 58
    // entries a row leave 123 rows for band 1, so band 2 starts at row 122.
    for (const Band2 b2 : {Band2{224, 126, 98}, Band2{226, 122, 104}}) {
        const int width = b2.width;
        QuantConvSpec s;
        s.c_in = 3;
        s.c_out = 32;
        s.h = s.w = width;
        s.kh = s.kw = 3;
        s.stride_h = s.stride_w = 2;
        s.pad_bottom = s.pad_right = 1;
        s.input_zp = -128;  // an image quantised from [0, 1]
        s.activation = OpType::kClip;
        Rk356xRun run;
        ASSERT_TRUE(matches_reference(s, static_cast<uint32_t>(width), &run, true));
        ASSERT_EQ(run.program.tasks.size(), 2u) << width;
        EXPECT_EQ(cbuf_con0_values(run.program), (std::vector<uint32_t>{0x17, 0x2017})) << width;
        // Rows of the pitch, not the width: LINE_STRIDE 87 units for 226 (232 pixels).
        const int pitch = npu::rk356x_image_row_pixels(width);
        const auto first = task_writes(run.program, 0);
        namespace r = rknn::hw::reg;
        EXPECT_EQ(first.at(r::CNA_DMA_CON1), static_cast<uint32_t>(pitch * 3 / 8)) << width;
        EXPECT_EQ(first.at(r::CNA_DMA_CON2), static_cast<uint32_t>(width * width)) << width;
        const uint32_t entries = static_cast<uint32_t>(((width + 3) / 4 + 1) / 2 * 2);  // 56 and 58
        EXPECT_EQ(first.at(r::CNA_CBUF_CON1), (static_cast<uint32_t>((width + 31) / 32 * 32) << 16) | entries) << width;
        EXPECT_EQ(first.at(r::CNA_FC_DATA_SIZE1), 8u) << width;
        // The second band starts whole image rows further on.
        EXPECT_EQ(task_writes(run.program, 1).at(r::CNA_CONV_CON4), static_cast<uint32_t>(width * b2.rows * 9));
        EXPECT_EQ(relocated_offset(run.program, 1, r::CNA_FEATURE_DATA_ADDR), b2.first_row * pitch * 3)
            << width;
    }
}

// The second 32-channel group of a depthwise layer reads and writes at the
// group's offsets (docs/rk3568.md 3, RC / TK / LOG T47).
TEST(Rk356xConv, DepthwiseGroupsAddressTheirChannels) {
    QuantConvCase layer;
    ASSERT_TRUE(rknn::testing::make_quant_conv(recipe_cases()[1].spec, 5, &layer).is_ok());
    Rk356xRun run;
    ASSERT_TRUE(run_rk356x(layer, &run));
    ASSERT_EQ(run.program.tasks.size(), 2u);
    namespace r = rknn::hw::reg;
    EXPECT_EQ(relocated_offset(run.program, 1, r::CNA_FEATURE_DATA_ADDR), 52 * 32) << "g x align(W H, 4) x 32";
    EXPECT_EQ(relocated_offset(run.program, 1, r::CNA_DCOMP_ADDR0), 9 * 32) << "g x kh x kw x 32";
    EXPECT_EQ(relocated_offset(run.program, 1, r::DPU_DST_BASE_ADDR), 52 * 32) << "g x align(Wo Ho, 4) x 32";
    EXPECT_EQ(relocated_offset(run.program, 1, r::DPU_RDMA_RDMA_BS_BASE_ADDR), 32 * 8) << "g x 32 x 8";
    EXPECT_EQ(task_writes(run.program, 1).at(r::CNA_CBUF_CON0) & (1u << 13), 0u)
        << "WEIGHT_REUSE is never carried across groups";
}

// The emulated RK3568 refuses a convolution started without its CMAC.
TEST(Rk356xConv, ConvolutionWithoutTheCmacIsRefused) {
    QuantConvCase layer;
    ASSERT_TRUE(rknn::testing::make_quant_conv(square_layer(16, 16, 4, 4, 1, 1, 0, false), 3, &layer).is_ok());
    npu::testing::NpuRunner runner("rk3568");
    ASSERT_TRUE(runner.ready());
    npu::Int8ConvLayer lowered = lowered_layer(layer);
    const auto cube = npu::pack_int8_cube_rk356x(layer.input.data<int8_t>(), 16, 4, 4, 0);
    const auto weights = npu::pack_conv_weights_int8_rk356x(layer.weights.data(), 16, 16, 1, 1);
    const auto records = npu::bs_records_rk356x(lowered.epilogue);
    ASSERT_EQ(runner.add(cube.data(), cube.size()), kInput);
    ASSERT_EQ(runner.add(weights.data(), weights.size()), kWeights);
    ASSERT_EQ(runner.add(records.data(), records.size()), kRecords);
    ASSERT_EQ(runner.zeros(npu::rk356x_cube_bytes(16, 4, 4)), kOutput);
    auto plan = npu::plan_conv(lowered.geometry, runner.soc(), 0);
    ASSERT_TRUE(plan.is_ok());
    for (uint32_t mask : {0x1fu, 0x1du}) {
        npu::TaskEmitter task;
        npu::emit_conv_int8_rk356x(&task, lowered.geometry, lowered.addresses, lowered.epilogue, lowered.input_zp,
                                   plan.value().per_core[0][0]);
        npu::ProgramBuilder builder(runner.soc());
        ASSERT_TRUE(builder.add(0, task, mask, 0x300).is_ok());
        const rknn::Status ran = runner.run(builder.finish());
        if (mask == 0x1f) {
            EXPECT_TRUE(ran.is_ok()) << ran.message();
        } else {
            EXPECT_FALSE(ran.is_ok());
            EXPECT_NE(runner.last_fault(0).find("without the CMAC"), std::string::npos) << runner.last_fault(0);
        }
    }
}

}  // namespace
