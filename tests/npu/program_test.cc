// Programs are generated once against buffer ids and linked whenever the
// buffers are placed: every address word is a recorded relocation, tails chain
// each core's tasks, and linking refuses what the registers cannot hold.
#include <gtest/gtest.h>

#include <set>

#include "hw/regcmd.h"
#include "hw/registers.h"
#include "hw/soc_profile.h"
#include "npu/conv_lowering.h"

namespace {

namespace npu = rknn::npu;
namespace hw = rknn::hw;
namespace r = rknn::hw::reg;

// A tiled, three-core int8 convolution with a residual: every kind of address.
npu::Program sample_program() {
    npu::Int8ConvLayer layer;
    auto& g = layer.geometry;
    g.in_c = 32;
    g.in_h = 300;
    g.in_w = 200;
    g.out_c = 24;
    g.kh = g.kw = 3;
    g.pad_top = g.pad_left = g.pad_bottom = g.pad_right = 1;
    layer.epilogue.bias.assign(24, 0);
    layer.epilogue.mult.assign(24, 1);
    layer.epilogue.residual = true;
    layer.epilogue.residual_addr = npu::BufferRef(4, 0);
    layer.addresses = {npu::BufferRef(0, 0), npu::BufferRef(1, 0), npu::BufferRef(2, 0), npu::BufferRef(3, 0)};
    npu::ProgramBuilder builder(hw::default_soc());
    EXPECT_TRUE(npu::lower_conv_int8(layer, hw::default_soc(), 0x7, &builder).is_ok());
    return builder.finish();
}

uint32_t value_of(uint64_t word) { return static_cast<uint32_t>(word >> 16); }
uint16_t reg_of(uint64_t word) { return static_cast<uint16_t>(word & 0xffff); }

TEST(NpuProgram, LinkResolvesEveryAddressAgainstItsBuffer) {
    const npu::Program p = sample_program();
    ASSERT_GT(p.tasks.size(), 3u);
    const std::set<uint16_t> address_regs = {r::CNA_FEATURE_DATA_ADDR, r::CNA_DCOMP_ADDR0, r::DPU_DST_BASE_ADDR,
                                             r::DPU_RDMA_RDMA_BS_BASE_ADDR, r::DPU_RDMA_RDMA_EW_BASE_ADDR};
    std::set<uint16_t> seen;
    for (const auto& rel : p.relocations) {
        EXPECT_TRUE(address_regs.count(reg_of(p.words[rel.word]))) << "relocation on " << std::hex << reg_of(p.words[rel.word]);
        seen.insert(reg_of(p.words[rel.word]));
        EXPECT_EQ(value_of(p.words[rel.word]), 0u) << "unlinked address words hold 0";
    }
    EXPECT_EQ(seen, address_regs);

    // Two placements of the same buffers: only the relocated words change, by the base difference.
    const std::vector<uint64_t> first = {0x10000000, 0x20000000, 0x30000000, 0x40000000, 0x50000000};
    const std::vector<uint64_t> moved = {0x11000000, 0x22000000, 0x33000000, 0x44000000, 0x55000000};
    auto a = p.link(0x08000000, first);
    auto b = p.link(0x08000000, moved);
    ASSERT_TRUE(a.is_ok()) << a.status().message();
    ASSERT_TRUE(b.is_ok()) << b.status().message();
    std::set<uint32_t> relocated;
    for (const auto& rel : p.relocations) {
        relocated.insert(rel.word);
        EXPECT_EQ(value_of(a.value()[rel.word]), first[static_cast<size_t>(rel.buffer)] + rel.offset);
        EXPECT_EQ(value_of(b.value()[rel.word]), moved[static_cast<size_t>(rel.buffer)] + rel.offset);
    }
    for (size_t i = 0; i < p.words.size(); ++i) {
        if (!relocated.count(static_cast<uint32_t>(i))) {
            EXPECT_EQ(a.value()[i], b.value()[i]) << "word " << i;
        }
    }
}

TEST(NpuProgram, TailsChainEachCoresTasks) {
    const npu::Program p = sample_program();
    EXPECT_EQ(p.core_mask, 0x7u);
    const uint64_t base = 0x08000000;
    auto linked = p.link(base, std::vector<uint64_t>(5, 0x10000000));
    ASSERT_TRUE(linked.is_ok());
    const auto& w = linked.value();
    for (int core = 0; core < 3; ++core) {
        const auto range = p.cores[static_cast<size_t>(core)];
        ASSERT_GT(range.count, 0u) << "core " << core;
        for (uint32_t i = 0; i < range.count; ++i) {
            const auto& t = p.tasks[range.start + i];
            EXPECT_EQ(t.core, core);
            EXPECT_EQ(t.first_word % npu::kTaskAlignWords, 0u);
            const uint32_t tail = t.first_word + t.body_words;
            const auto link = hw::decode_word(w[tail], hw::DecodeRules{});
            const auto amount = hw::decode_word(w[tail + 1], hw::DecodeRules{});
            EXPECT_EQ(hw::decode_word(w[tail + 3], hw::DecodeRules{}).kind, hw::WordKind::kOpEnable);
            if (i + 1 == range.count) {
                EXPECT_EQ(link.kind, hw::WordKind::kNop) << "the last task of a core ends its chain";
                continue;
            }
            const auto& next = p.tasks[range.start + i + 1];
            ASSERT_EQ(link.kind, hw::WordKind::kWrite);
            EXPECT_EQ(link.reg, r::PC_BASE_ADDRESS);
            EXPECT_EQ(link.value, base + next.first_word * 8u);
            EXPECT_EQ(amount.value, hw::pc_data_amount(next.body_words, hw::default_soc().pc_amount_scale));
        }
    }
}

TEST(NpuProgram, LinkRefusesMissingBuffersAndAddressesAbove4GiB) {
    const npu::Program p = sample_program();
    EXPECT_FALSE(p.link(0x1000, {0x1000, 0x2000}).is_ok()) << "buffers 2..4 have no base";
    EXPECT_FALSE(p.link(0x1000, {0x1000, 0x2000, 0x3000, 0xffffff00ull, 0x5000}).is_ok())
        << "the output's later atoms pass 4 GiB";
    EXPECT_FALSE(p.link(0x100000000ull, std::vector<uint64_t>(5, 0x1000)).is_ok()) << "stream above 4 GiB";
}

}  // namespace
