// Convolutions lowered by the code generator (src/npu), run on the emulated
// NPU through the vendor back-end and the mock kernel, compared bit for bit
// with the int8 CPU reference: seeded random shapes per op kind, tiling to
// the on-chip buffer, output-kernel groups and multi-core splits.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "emulator/conv_cube.h"
#include "emulator/conv_unit.h"
#include "common/quantized_conv.h"
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

// Buffer ids of a lowered layer, in the order NpuRunner creates them.
enum : int32_t { kInput, kWeights, kRecords, kOutput, kResidual, kBnRecords };

struct LoweredRun {
    std::vector<int8_t> output;  // NCHW
    size_t tasks = 0;
};

// Lowers `layer` for `core_mask` (or, with `one_task`, emits the whole layer
// as a single task, ignoring the buffer limits), runs it and unpacks the output.
// With `packed`, the input is a channel-packed NHWC image (as the runtime
// keeps 1/3/4-channel model inputs) instead of a cube.
::testing::AssertionResult run_lowered(const QuantConvCase& layer, uint32_t core_mask, LoweredRun* out,
                                       bool one_task = false, bool packed = false) {
    const QuantConvSpec& s = layer.spec;
    const int oc = s.out_c(), oh = s.out_h(), ow = s.out_w();
    npu::Int8ConvLayer lowered;
    lowered.geometry = rknn::testing::conv_geometry(s);
    if (packed) lowered.geometry.packed_row_pixels = npu::packed_row_pixels(s.w, false);
    lowered.input_zp = static_cast<int8_t>(s.input_zp);
    lowered.epilogue = npu::epilogue_regs(layer.epilogue, layer.weights.data(), oc, s.taps_per_kernel(), s.input_zp);
    lowered.epilogue.residual_addr = npu::BufferRef(kResidual, 0);
    lowered.addresses = {npu::BufferRef(kInput, 0), npu::BufferRef(kWeights, 0), npu::BufferRef(kRecords, 0),
                         npu::BufferRef(kOutput, 0)};

    npu::testing::NpuRunner runner;
    if (!runner.ready()) return ::testing::AssertionFailure() << "could not open the rknpu back-end on the mock kernel";
    const int c_aligned = npu::align_up(s.c_in, 16), oc_aligned = npu::align_up(oc, 16);
    const auto cube = packed ? npu::pack_nhwc_image(layer.input.data<int8_t>(), s.c_in, s.h, s.w,
                                                    lowered.geometry.packed_row_pixels, 1)
                             : npu::pack_int8_cube(layer.input.data<int8_t>(), s.c_in, s.h, s.w, c_aligned, 0);
    const auto weights = s.depthwise ? npu::pack_dw_weights_int8(layer.weights.data(), oc, s.kh, s.kw, c_aligned)
                                     : npu::pack_conv_weights_int8(layer.weights.data(), oc, s.c_in, s.kh, s.kw, c_aligned);
    const auto records = npu::bs_records(lowered.epilogue, oc_aligned);
    const size_t out_bytes = static_cast<size_t>(oc_aligned) * oh * ow;
    std::vector<uint8_t> residual(out_bytes, 0);
    if (s.residual) residual = npu::pack_int8_cube(layer.residual.data<int8_t>(), oc, oh, ow, oc_aligned, 0);
    if (runner.add(cube.data(), cube.size()) != kInput || runner.add(weights.data(), weights.size()) != kWeights ||
        runner.add(records.data(), records.size()) != kRecords || runner.zeros(out_bytes) != kOutput ||
        runner.add(residual.data(), residual.size()) != kResidual)
        return ::testing::AssertionFailure() << "buffer creation failed";
    const auto bn_records = npu::prelu_records(lowered.epilogue, oc_aligned);
    if (!bn_records.empty()) {
        if (runner.add(bn_records.data(), bn_records.size()) != kBnRecords)
            return ::testing::AssertionFailure() << "buffer creation failed";
        lowered.epilogue.prelu_records = npu::BufferRef(kBnRecords, 0);
    }

    npu::ProgramBuilder builder(runner.soc());
    if (one_task) {
        npu::TaskEmitter task;
        npu::emit_conv_int8(&task, lowered.geometry, lowered.addresses, lowered.epilogue, lowered.input_zp);
        const rknn::Status added = builder.add(0, task, 0x1d, 0x300);
        if (!added.is_ok()) return ::testing::AssertionFailure() << "emission: " << added.message();
    } else {
        const rknn::Status lowered_ok = npu::lower_conv_int8(lowered, runner.soc(), core_mask, &builder);
        if (!lowered_ok.is_ok()) return ::testing::AssertionFailure() << "lowering: " << lowered_ok.message();
    }
    const npu::Program program = builder.finish();
    uint32_t done = 0;
    const rknn::Status ran = runner.run(program, &done);
    if (!ran.is_ok()) return ::testing::AssertionFailure() << "submit: " << ran.message();
    if (done != program.tasks.size())
        return ::testing::AssertionFailure() << done << " of " << program.tasks.size() << " tasks completed";
    out->output = npu::unpack_int8_cube(runner.data(kOutput), oc, oh, ow, static_cast<uint64_t>(oh) * ow * 16);
    out->tasks = program.tasks.size();
    return ::testing::AssertionSuccess();
}

::testing::AssertionResult matches_reference(const QuantConvSpec& spec, uint32_t seed, uint32_t core_mask = 0,
                                             size_t* tasks = nullptr, bool packed = false) {
    QuantConvCase layer;
    const rknn::Status made = rknn::testing::make_quant_conv(spec, seed, &layer);
    if (!made.is_ok()) return ::testing::AssertionFailure() << spec.describe() << ": reference: " << made.message();
    LoweredRun run;
    auto ok = run_lowered(layer, core_mask, &run, false, packed);
    if (!ok) return ok << " (" << spec.describe() << ")";
    if (tasks != nullptr) *tasks = run.tasks;
    const int8_t* ref = layer.reference.data<int8_t>();
    int differ = 0, worst = 0;
    for (size_t i = 0; i < run.output.size(); ++i) {
        const int d = std::abs(run.output[i] - ref[i]);
        differ += d != 0;
        worst = std::max(worst, d);
    }
    if (differ != 0)
        return ::testing::AssertionFailure() << spec.describe() << ": " << differ << " of " << run.output.size()
                                             << " outputs differ (largest " << worst << ")";
    return ::testing::AssertionSuccess();
}

// ---- seeded random shapes ----------------------------------------------------

using rknn::testing::random_conv_spec;

// `packed`: 1, 3 or 4 input channels read as a channel-packed image;
// `prelu`: a fused PRelu with one slope per output channel (no residual).
void check_random(const char* kind, int cases, uint32_t seed, bool depthwise, bool fully_connected,
                  bool packed = false, bool prelu = false) {
    std::mt19937 rng(seed);
    int failures = 0;
    for (int i = 0; i < cases; ++i) {
        QuantConvSpec spec = random_conv_spec(rng, depthwise, fully_connected);
        if (packed) spec.c_in = (rng() % 3 == 0) ? 1 : (rng() % 2 == 0 ? 3 : 4);
        if (prelu) {
            spec.activation = OpType::kPRelu;
            spec.residual = false;
        }
        const auto ok = matches_reference(spec, seed * 1000u + static_cast<uint32_t>(i), 0, nullptr, packed);
        if (!ok) {
            ADD_FAILURE() << kind << " case " << i << ": " << ok.message();
            if (++failures >= 5) return;
        }
    }
}

TEST(NpuConvLowering, RandomDirectConvolutionsAreBitExact) { check_random("conv", 250, 17, false, false); }

TEST(NpuConvLowering, RandomDepthwiseConvolutionsAreBitExact) { check_random("depthwise", 150, 29, true, false); }

TEST(NpuConvLowering, RandomFullyConnectedLayersAreBitExact) { check_random("fc", 100, 43, false, true); }

TEST(NpuConvLowering, RandomConvolutionsOfPackedImagesAreBitExact) { check_random("packed", 200, 59, false, false, true); }

// The emulator's general convolution paths (a padded image, im2col) stand in
// for the cube paths when these are off: both must give the reference's bytes.
// Restores the cube paths whatever a test does.
struct CubePathsGuard {
    ~CubePathsGuard() { rknn::emulator::set_conv_cube_paths(true); }
};

TEST(NpuConvLowering, GeneralEmulatorPathsAreBitExactToo) {
    CubePathsGuard guard;
    const uint64_t before = rknn::emulator::conv_cube_path_tasks();
    rknn::emulator::set_conv_cube_paths(false);
    check_random("general conv", 60, 71, false, false);
    check_random("general depthwise", 40, 73, true, false);
    check_random("general packed", 40, 79, false, false, true);
    rknn::emulator::set_conv_cube_paths(true);
    EXPECT_EQ(rknn::emulator::conv_cube_path_tasks(), before) << "a cube path ran while they were off";
    check_random("cube conv", 10, 71, false, false);
    EXPECT_GT(rknn::emulator::conv_cube_path_tasks(), before + 9);
}

// Depthwise tasks a tap at a time, where the tap-group kernel would take
// them (CPUs with AVX-512 VNNI and VBMI): the same bytes.
TEST(NpuConvLowering, DepthwiseTapAtATimeIsBitExactToo) {
    struct Guard {
        ~Guard() { rknn::emulator::set_depthwise_tap_groups(true); }
    } guard;
    rknn::emulator::set_depthwise_tap_groups(false);
    check_random("depthwise tap at a time", 60, 83, true, false);
}

TEST(NpuConvLowering, RandomConvolutionsWithAFusedPReluAreBitExact) {
    check_random("prelu conv", 80, 61, false, false, false, true);
    check_random("prelu depthwise", 40, 67, true, false, false, true);
    check_random("prelu fc", 40, 71, false, true, false, true);
}

// ---- tiling, kernel groups, multi-core --------------------------------------------

TEST(NpuConvLowering, PlanSplitsRowsToFitTheConvolutionBuffer) {
    npu::ConvGeometry g;
    g.in_c = 32;
    g.in_h = g.in_w = 640;
    g.out_c = 16;
    g.kh = g.kw = 3;
    g.pad_top = g.pad_left = g.pad_bottom = g.pad_right = 1;
    const auto& soc = rknn::hw::default_soc();
    auto plan = npu::plan_conv(g, soc, 0);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    const auto& tiles = plan.value().per_core[0];
    ASSERT_GT(tiles.size(), 1u);
    const uint64_t cbuf = static_cast<uint64_t>(soc.cbuf_bank_bytes);
    int next_row = 0;
    for (size_t i = 0; i < tiles.size(); ++i) {
        const auto& t = tiles[i];
        EXPECT_EQ(t.out_row, next_row) << "tiles must cover the rows in order";
        next_row += t.out_rows;
        const auto band = npu::input_band(g, t.out_row, t.out_rows);
        EXPECT_LE(static_cast<uint64_t>(band.count) * 640 * 32, t.data_banks * cbuf) << "tile " << i;
        EXPECT_LE(t.data_banks + t.weight_banks, soc.cbuf_banks);
        EXPECT_EQ(t.reuse_weights, i > 0) << "weights stay resident after the first tile";
    }
    EXPECT_EQ(next_row, 640);
}

TEST(NpuConvLowering, TiledLargeLayerMatchesTheReference) {
    QuantConvSpec s;
    s.c_in = 32;
    s.c_out = 16;
    s.h = 400;
    s.w = 160;  // 5 KiB per input row: several row bands
    s.kh = s.kw = 3;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
    s.input_zp = -3;
    size_t tasks = 0;
    EXPECT_TRUE(matches_reference(s, 901, 0, &tasks));
    EXPECT_GT(tasks, 1u);
}

// The example: a 640x640x32 input is 12.5 MiB, 33 times the CBUF.
TEST(NpuConvLowering, TiledAndMultiCore640x640LayerEqualsOneTask) {
    QuantConvSpec s;
    s.c_in = 32;
    s.c_out = 8;
    s.h = s.w = 640;
    s.kh = s.kw = 3;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
    s.activation = OpType::kRelu;
    s.input_zp = 11;
    QuantConvCase layer;
    ASSERT_TRUE(rknn::testing::make_quant_conv(s, 640, &layer).is_ok());
    LoweredRun whole;
    ASSERT_TRUE(run_lowered(layer, 0, &whole, true));
    EXPECT_EQ(whole.tasks, 1u);
    EXPECT_TRUE(std::equal(whole.output.begin(), whole.output.end(), layer.reference.data<int8_t>()));
    for (uint32_t mask : {0x1u, 0x3u, 0x7u}) {
        LoweredRun tiled;
        ASSERT_TRUE(run_lowered(layer, mask, &tiled)) << "core mask 0x" << std::hex << mask;
        EXPECT_GT(tiled.tasks, static_cast<size_t>(__builtin_popcount(mask)));
        EXPECT_TRUE(tiled.output == whole.output) << "core mask 0x" << std::hex << mask;
    }
}

// A detector's first layer: a 3-channel 320x320 image, channel-packed as
// the runtime keeps it, tiled into row bands and split over 1-3 cores.
TEST(NpuConvLowering, PackedImageTiledAndMultiCoreMatchesTheReference) {
    QuantConvSpec s;
    s.c_in = 3;
    s.c_out = 32;
    s.h = s.w = 320;
    s.kh = s.kw = 6;
    s.stride_h = s.stride_w = 2;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 2;
    s.activation = OpType::kSilu;
    s.input_zp = -128;
    QuantConvCase layer;
    ASSERT_TRUE(rknn::testing::make_quant_conv(s, 320, &layer).is_ok());
    for (uint32_t mask : {0x1u, 0x3u, 0x7u}) {
        LoweredRun run;
        ASSERT_TRUE(run_lowered(layer, mask, &run, false, true)) << "core mask 0x" << std::hex << mask;
        EXPECT_GT(run.tasks, static_cast<size_t>(__builtin_popcount(mask)));
        EXPECT_TRUE(std::equal(run.output.begin(), run.output.end(), layer.reference.data<int8_t>()))
            << "core mask 0x" << std::hex << mask;
    }
}

TEST(NpuConvLowering, PackedInputIsRefusedWhereTheCnaCannotReadIt) {
    npu::ConvGeometry g;
    g.in_c = 8;
    g.in_h = g.in_w = 8;
    g.out_c = 8;
    g.packed_row_pixels = 16;
    EXPECT_FALSE(npu::can_read_packed_input(g, rknn::hw::NpuArch::kRk3588));
    EXPECT_FALSE(npu::plan_conv(g, rknn::hw::default_soc(), 0).is_ok());
    g.in_c = 3;
    EXPECT_TRUE(npu::plan_conv(g, rknn::hw::default_soc(), 0).is_ok());
    g.packed_row_pixels = 4;  // shorter than a row
    EXPECT_FALSE(npu::plan_conv(g, rknn::hw::default_soc(), 0).is_ok());
    g.packed_row_pixels = 16;
    g.depthwise = true;
    g.out_c = 3;
    EXPECT_FALSE(npu::plan_conv(g, rknn::hw::default_soc(), 0).is_ok());
    // A stem whose kernel rows exceed one packed band's 14-bit DATA_ENTRIES
    // (2400 x 7): the runtime keeps such an input a cube.
    g.depthwise = false;
    g.out_c = 8;
    g.in_w = g.in_h = 2400;
    g.kh = g.kw = 7;
    g.stride = 2;
    EXPECT_FALSE(npu::can_read_packed_input(g, rknn::hw::NpuArch::kRk3588));
    g.kh = g.kw = 3;
    EXPECT_TRUE(npu::can_read_packed_input(g, rknn::hw::NpuArch::kRk3588));
}

TEST(NpuConvLowering, Rk356xReadsOnlyThreeChannelImagesPacked) {
    // Its ARGB mode: int8, three channels, direct, rows a whole number of 8-byte units.
    const rknn::hw::SocProfile& rk3568 = *rknn::hw::find_soc("rk3568");
    const auto arch = rknn::hw::NpuArch::kRk356x;
    npu::ConvGeometry g;
    g.in_c = 3;
    g.in_h = g.in_w = 28;
    g.out_c = 16;
    g.kh = g.kw = 3;
    g.packed_row_pixels = 32;
    EXPECT_TRUE(npu::can_read_packed_input(g, arch));
    EXPECT_TRUE(npu::plan_conv(g, rk3568, 0).is_ok());
    g.packed_row_pixels = 30;  // 90-byte rows: not whole 8-byte units
    EXPECT_FALSE(npu::plan_conv(g, rk3568, 0).is_ok());
    g.packed_row_pixels = 24;  // shorter than a row
    EXPECT_FALSE(npu::plan_conv(g, rk3568, 0).is_ok());
    g.packed_row_pixels = 32;
    for (int c : {1, 4}) {
        g.in_c = c;
        EXPECT_FALSE(npu::can_read_packed_input(g, arch)) << c << " channels";
        EXPECT_TRUE(npu::can_read_packed_input(g, rknn::hw::NpuArch::kRk3588)) << c << " channels";
    }
    g.in_c = 3;
    g.fp16 = true;
    EXPECT_FALSE(npu::can_read_packed_input(g, arch));
    g.fp16 = false;
    g.in_h = g.in_w = 1;  // a one-pixel input is an FC task
    EXPECT_FALSE(npu::can_read_packed_input(g, arch));
    g.in_h = 8;
    g.in_w = 2048;  // beyond the 11-bit width field
    EXPECT_FALSE(npu::can_read_packed_input(g, arch));
}

TEST(NpuConvLowering, WeightsLargerThanTheBufferAreSplitIntoKernelGroups) {
    // Neither the input (384 KiB) nor the weights (432 KiB) stay resident.
    QuantConvSpec s;
    s.c_in = 512;
    s.c_out = 96;
    s.h = 48;
    s.w = 16;
    s.kh = s.kw = 3;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
    s.activation = OpType::kRelu;
    npu::ConvGeometry g = rknn::testing::conv_geometry(s);
    auto plan = npu::plan_conv(g, rknn::hw::default_soc(), 0);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    EXPECT_LT(plan.value().kernels_per_task, s.c_out);
    EXPECT_EQ(plan.value().kernels_per_task % 32, 0);
    size_t tasks = 0;
    EXPECT_TRUE(matches_reference(s, 902, 0, &tasks));
    EXPECT_GE(tasks, 4u);
}

// A resident input keeps every kernel in one task while the weights stream
// through the other banks, as the vendor and Mesa program it.
TEST(NpuConvLowering, ResidentInputTakesEveryKernelInOneTask) {
    npu::ConvGeometry g;
    g.in_c = 1024;
    g.in_h = g.in_w = 7;
    g.out_c = 1024;  // 1 MiB of 1x1 weights
    auto plan = npu::plan_conv(g, rknn::hw::default_soc(), 0);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    ASSERT_EQ(plan.value().task_count(), 1u);
    EXPECT_EQ(plan.value().data_banks, 3) << "49 KiB of input: two banks plus the int8 slack bank";
    EXPECT_EQ(plan.value().weight_banks, 9);
    g.fp16 = true;
    auto fp16 = npu::plan_conv(g, rknn::hw::default_soc(), 0);
    ASSERT_TRUE(fp16.is_ok());
    EXPECT_EQ(fp16.value().data_banks, 4) << "fp16 fits exactly (98 KiB)";
}

TEST(NpuConvLowering, MultiCoreSplitsGiveTheSingleCoreResult) {
    QuantConvSpec s;
    s.c_in = 24;
    s.c_out = 40;
    s.h = 37;
    s.w = 29;
    s.kh = s.kw = 3;
    s.stride_h = s.stride_w = 2;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
    s.activation = OpType::kSilu;
    s.input_zp = 7;
    QuantConvCase layer;
    ASSERT_TRUE(rknn::testing::make_quant_conv(s, 77, &layer).is_ok());
    LoweredRun single;
    ASSERT_TRUE(run_lowered(layer, 0, &single));
    const auto& soc = rknn::hw::default_soc();
    int multi = 0;
    for (uint32_t mask : soc.runnable_core_masks) {
        LoweredRun split;
        ASSERT_TRUE(run_lowered(layer, mask, &split)) << "core mask 0x" << std::hex << mask;
        EXPECT_EQ(split.output, single.output) << "core mask 0x" << std::hex << mask;
        multi += __builtin_popcount(mask) > 1;
    }
    EXPECT_GE(multi, 2) << "the RK3588 profile should offer two- and three-core masks";
    const int8_t* ref = layer.reference.data<int8_t>();
    EXPECT_TRUE(std::equal(single.output.begin(), single.output.end(), ref));
}

// A depthwise layer whose five kernel rows of all 200 channels (700 KiB) do
// not fit the CBUF runs as chunks of 64 channels (the last one 8), each in
// row bands, bit for bit, on one core and split over three.
TEST(NpuConvLowering, WideDepthwiseLayersRunInChannelChunks) {
    QuantConvSpec s;
    s.depthwise = true;
    s.c_in = s.c_out = 200;
    s.h = 9;
    s.w = 700;
    s.kh = s.kw = 5;
    s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 2;
    s.input_zp = 5;
    s.activation = OpType::kRelu;
    auto plan = npu::plan_conv(rknn::testing::conv_geometry(s), rknn::hw::default_soc(), 0);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    EXPECT_EQ(plan.value().kernels_per_task, 64);
    std::vector<int> chunk_starts;
    for (const npu::ConvTile& t : plan.value().per_core[0])
        if (chunk_starts.empty() || chunk_starts.back() != t.kernel) chunk_starts.push_back(t.kernel);
    EXPECT_EQ(chunk_starts, (std::vector<int>{0, 64, 128, 192}));
    for (uint32_t mask : {0x1u, 0x7u}) {
        size_t tasks = 0;
        EXPECT_TRUE(matches_reference(s, 4242, mask, &tasks)) << "core mask 0x" << std::hex << mask;
        EXPECT_GE(tasks, 4u);
    }
}

TEST(NpuConvLowering, LayersThatCannotBeTiledAreRefusedWithAReason) {
    npu::ConvGeometry g;
    g.in_c = 512;
    g.in_h = 8;
    g.in_w = 4096;  // 2 MiB per input row
    g.out_c = 8;
    g.kh = g.kw = 3;
    auto plan = npu::plan_conv(g, rknn::hw::default_soc(), 0);
    ASSERT_FALSE(plan.is_ok());
    EXPECT_EQ(plan.status().code(), rknn::StatusCode::kUnimplemented);
    EXPECT_NE(plan.status().message().find("CBUF"), std::string::npos) << plan.status().message();
    g.in_w = 8;
    EXPECT_FALSE(npu::plan_conv(g, rknn::hw::default_soc(), 0x8).is_ok()) << "core mask with a core the SoC lacks";
    g.pad_top = 3;
    EXPECT_FALSE(npu::plan_conv(g, rknn::hw::default_soc(), 0).is_ok()) << "padding as large as the kernel";
}

}  // namespace
