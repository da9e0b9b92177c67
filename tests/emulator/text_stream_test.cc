// Hand-written streams in the listing form (docs/regcmd-text.md), run on the
// emulator: a small two-task program whose result is worked out by hand, and
// malformed programs that must fail with the right fault.
#include <gtest/gtest.h>

#include "hw/regcmd_text.h"
#include "npu_harness.h"

namespace {

namespace et = rknn::emutest;
using rknn::emulator::FaultKind;

// Task 0: 2x2 max pool, stride 2, of a 16-channel 4x4 int8 cube at 0x100000
// into 0x200000. Task 1 (linked at 0x10100): the DPU adds 3 to every value
// of that 2x2 result (EW operand from a register) into 0x300000.
constexpr const char* kPoolThenAdd = R"(
PPU.S_POINTER = 0xe
PPU_RDMA.RDMA_S_POINTER = 0xe
PPU.DATA_CUBE_IN_WIDTH = 3
PPU.DATA_CUBE_IN_HEIGHT = 3
PPU.DATA_CUBE_IN_CHANNEL = 15
PPU.DATA_CUBE_OUT_WIDTH = 1
PPU.DATA_CUBE_OUT_HEIGHT = 1
PPU.DATA_CUBE_OUT_CHANNEL = 15
PPU.OPERATION_MODE_CFG POOLING_METHOD=1 FLYING_MODE=1          # max
PPU.POOLING_KERNEL_CFG KERNEL_WIDTH=1 KERNEL_HEIGHT=1 KERNEL_STRIDE_WIDTH=1 KERNEL_STRIDE_HEIGHT=1
PPU.PADDING_VALUE_1_CFG = -128
PPU.DST_BASE_ADDR = 0x200000
PPU.DST_SURF_STRIDE = 64                                       # 2 x 2 atoms
PPU.DATA_FORMAT PROC_PRECISION=0
PPU_RDMA.RDMA_CUBE_IN_WIDTH = 3
PPU_RDMA.RDMA_CUBE_IN_HEIGHT = 3
PPU_RDMA.RDMA_CUBE_IN_CHANNEL = 15
PPU_RDMA.RDMA_SRC_BASE_ADDR = 0x100000
PPU_RDMA.RDMA_SRC_LINE_STRIDE = 64
PPU_RDMA.RDMA_SRC_SURF_STRIDE = 256
PC.BASE_ADDRESS = 0x10100                                      # link to task 1
PC.REGISTER_AMOUNTS = 13                                       # (23 + 4 + 1) / 2 - 1
arm
enable 0x60

DPU.S_POINTER = 0xe
DPU_RDMA.RDMA_S_POINTER = 0xe
DPU.FEATURE_MODE_CFG FLYING_MODE=1 OUTPUT_MODE=2 BURST_LEN=15
DPU.DATA_FORMAT = 0                                            # int8 in, int8 out
DPU.DST_BASE_ADDR = 0x300000
DPU.DST_SURF_STRIDE = 64
DPU.DATA_CUBE_WIDTH = 1
DPU.DATA_CUBE_HEIGHT = 1
DPU.DATA_CUBE_CHANNEL CHANNEL=15 ORIG_CHANNEL=15
DPU.BS_CFG = 0x53                                              # bypassed
DPU.BS_OW_CFG OD_BYPASS=1
DPU.BN_CFG = 0x53
DPU.EW_CFG EW_OP_BYPASS=0 EW_OP_SRC=0 EW_OP_CVT_BYPASS=1 EW_ALU_ALGO=2 EW_LUT_BYPASS=1 EW_RELU_BYPASS=1
DPU.EW_OP_VALUE_0 = 3
DPU.OUT_CVT_OFFSET = 0
DPU.OUT_CVT_SCALE OUT_CVT_SCALE=1
DPU.OUT_CVT_SHIFT = 0
DPU_RDMA.RDMA_DATA_CUBE_WIDTH = 1
DPU_RDMA.RDMA_DATA_CUBE_HEIGHT = 1
DPU_RDMA.RDMA_DATA_CUBE_CHANNEL = 15
DPU_RDMA.RDMA_SRC_BASE_ADDR = 0x200000
DPU_RDMA.RDMA_ERDMA_CFG ERDMA_DISABLE=1
DPU_RDMA.RDMA_FEATURE_MODE_CFG FLYING_MODE=1
nop
PC.REGISTER_AMOUNTS = 0
arm
enable 0x18
)";

TEST(EmulatorText, HandWrittenTwoTaskListingComputesMaxPoolThenAdd) {
    auto words = rknn::hw::assemble_listing(kPoolThenAdd);
    ASSERT_TRUE(words.is_ok()) << words.status().message();
    ASSERT_EQ(words.value().size(), 24u + 27u) << "two tasks of 20 and 23 words plus their tails";
    std::vector<uint64_t> first(words.value().begin(), words.value().begin() + 24);
    std::vector<uint64_t> second(words.value().begin() + 24, words.value().end());

    et::Device dev;
    std::vector<uint8_t> input(256);
    for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<uint8_t>((i * 37 + 11) & 0xff);
    dev.put(0x100000, input.data(), input.size());
    dev.zeros(0x200000, 64);
    uint8_t* out = dev.zeros(0x300000, 64);
    dev.words(0x10000, first);
    dev.words(0x10100, second);
    const auto result = dev.run(0x10000, 20, 2);
    ASSERT_TRUE(result.completed) << result.message;
    for (int oy = 0; oy < 2; ++oy)
        for (int ox = 0; ox < 2; ++ox)
            for (int c = 0; c < 16; ++c) {
                int m = -128;
                for (int ky = 0; ky < 2; ++ky)
                    for (int kx = 0; kx < 2; ++kx)
                        m = std::max(m, static_cast<int>(static_cast<int8_t>(input[((oy * 2 + ky) * 4 + ox * 2 + kx) * 16 + c])));
                EXPECT_EQ(static_cast<int8_t>(out[(oy * 2 + ox) * 16 + c]), std::min(m + 3, 127)) << oy << "," << ox << "," << c;
            }
}

rknn::emulator::ProgramResult run_listing(const char* text) {
    auto words = rknn::hw::assemble_listing(text);
    EXPECT_TRUE(words.is_ok()) << words.status().message();
    et::Device dev;
    dev.words(0x10000, words.value());
    return dev.run(0x10000, static_cast<uint32_t>(words.value().size() - 4));
}

TEST(EmulatorText, MalformedListingsFailWithTheirFault) {
    // A word with two block-select bits.
    auto r1 = run_listing("raw 0x0301000000001004\nnop\nnop\narm\nenable 0x60\n");
    EXPECT_EQ(r1.fault, FaultKind::kDecode);
    EXPECT_NE(r1.message.find("one-hot"), std::string::npos) << r1.message;
    // An enable bitmap the model does not run (CNA alone).
    auto r2 = run_listing("nop\nnop\nnop\narm\nenable 0x01\n");
    EXPECT_EQ(r2.fault, FaultKind::kUnsupported);
    // A PPU task whose window leaves the input.
    auto r3 = run_listing(
        "PPU.DATA_CUBE_IN_WIDTH = 1\nPPU.DATA_CUBE_IN_HEIGHT = 1\nPPU.DATA_CUBE_OUT_WIDTH = 3\n"
        "PPU.DATA_CUBE_OUT_HEIGHT = 0\nPPU.POOLING_KERNEL_CFG KERNEL_WIDTH=1 KERNEL_HEIGHT=1\n"
        "PPU_RDMA.RDMA_CUBE_IN_WIDTH = 1\nPPU_RDMA.RDMA_CUBE_IN_HEIGHT = 1\n"
        "nop\nnop\narm\nenable 0x60\n");
    EXPECT_EQ(r3.fault, FaultKind::kBadProgram);
    EXPECT_NE(r3.message.find("beyond"), std::string::npos) << r3.message;
    // A no-op word carrying a payload: corrupted.
    auto r4 = run_listing("raw 0x0000000012340000\nnop\nnop\narm\nenable 0x60\n");
    EXPECT_EQ(r4.fault, FaultKind::kDecode);
}

}  // namespace
