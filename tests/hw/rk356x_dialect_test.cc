// The RK3566/RK3568 register dialect (docs/rk3568.md 1.2): the CORE
// registers from MISC_CFG on sit one slot lower on the wire, MAC_GATING has
// no slot, everything else keeps the table's offset, and decoding an RK356x
// stream gives writes back with the table's offsets.
#include <gtest/gtest.h>

#include "hw/regcmd.h"
#include "hw/rk356x_dialect.h"

namespace {

namespace hw = rknn::hw;
namespace r = hw::reg;

TEST(Rk356xDialect, CoreRegistersSitOneSlotLower) {
    const struct {
        uint16_t table, wire;
    } moved[] = {{r::CORE_MISC_CFG, 0x300c}, {r::CORE_DATAOUT_SIZE_0, 0x3010}, {r::CORE_DATAOUT_SIZE_1, 0x3014},
                 {r::CORE_CLIP_TRUNCATE, 0x3018}, {r::CORE_UNDOC_3030, 0x302c}};
    for (const auto& m : moved) {
        uint16_t wire = 0, back = 0;
        ASSERT_TRUE(hw::rk356x::wire_offset(m.table, &wire)) << std::hex << m.table;
        EXPECT_EQ(wire, m.wire);
        ASSERT_TRUE(hw::rk356x::table_offset(m.wire, &back));
        EXPECT_EQ(back, m.table);
    }
    uint16_t out = 0;
    EXPECT_FALSE(hw::rk356x::wire_offset(r::CORE_MAC_GATING, &out)) << "no MAC_GATING on RK356x";
    for (uint16_t same : {r::CORE_S_POINTER, r::CNA_CONV_CON1, r::CMAC_MISC_CFG, r::DPU_FEATURE_MODE_CFG,
                          r::DPU_RDMA_RDMA_BS_STREAM_LEN, r::PPU_DST_SURF_STRIDE}) {
        ASSERT_TRUE(hw::rk356x::wire_offset(same, &out));
        EXPECT_EQ(out, same);
        ASSERT_TRUE(hw::rk356x::table_offset(same, &out));
        EXPECT_EQ(out, same);
    }
    EXPECT_FALSE(hw::rk356x::table_offset(0x3020, &out)) << "a wire offset the map does not name";
}

TEST(Rk356xDialect, StreamsDecodeToTheTableOffsets) {
    hw::RegcmdBuilder b;
    b.write_fields(r::CORE_MISC_CFG, {{hw::field::CORE_MISC_CFG_DW_EN, 1}});
    b.write(r::CNA_DMA_CON0, 0x00171c07);
    b.remap_registers(hw::rk356x::wire_offset);
    ASSERT_TRUE(b.finish().is_ok());
    ASSERT_EQ(b.words().size(), 2u);
    EXPECT_EQ(b.words()[0] & 0xffff, 0x300cu) << "written at the wire slot";
    const hw::DecodeRules strict;
    const hw::DecodedWord misc = hw::rk356x::decode_word(b.words()[0], strict);
    ASSERT_EQ(misc.kind, hw::WordKind::kWrite);
    EXPECT_EQ(misc.reg, r::CORE_MISC_CFG);
    EXPECT_EQ(misc.value, 2u);
    EXPECT_EQ(hw::rk356x::decode_word(b.words()[1], strict).reg, r::CNA_DMA_CON0);
    // An offset neither map names: invalid when known registers are required.
    const uint64_t stray = hw::encode_write(0x3020, 1);
    EXPECT_EQ(hw::rk356x::decode_word(stray, strict).kind, hw::WordKind::kInvalid);
    hw::DecodeRules relaxed;
    relaxed.require_known_register = false;
    EXPECT_EQ(hw::rk356x::decode_word(stray, relaxed).kind, hw::WordKind::kWrite);
    // A table register with no RK356x slot cannot be emitted.
    hw::RegcmdBuilder gated;
    gated.write(r::CORE_MAC_GATING, 0);
    gated.remap_registers(hw::rk356x::wire_offset);
    EXPECT_FALSE(gated.finish().is_ok());
}

}  // namespace
