// Sanity checks on the register table (src/hw/rk3588_registers.inc): the
// shape every consumer relies on.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "hw/regcmd.h"
#include "hw/registers.h"

namespace rknn::hw {
namespace {

std::string qualified(const RegisterInfo& r) { return std::string(block_name(r.block)) + "." + r.name; }

TEST(RegisterTable, FieldsAreInsideTheWordAndDisjoint) {
    size_t n = 0;
    const RegisterInfo* table = register_table(&n);
    ASSERT_GT(n, 100u);
    for (size_t i = 0; i < n; ++i) {
        const RegisterInfo& r = table[i];
        EXPECT_GT(r.field_count, 0u) << qualified(r);
        uint32_t seen = 0;
        std::set<std::string> names;
        for (size_t f = 0; f < r.field_count; ++f) {
            const FieldInfo& fi = r.fields[f];
            EXPECT_LE(fi.field.low, fi.field.high) << qualified(r) << "." << fi.name;
            EXPECT_LE(fi.field.high, 31) << qualified(r) << "." << fi.name;
            EXPECT_EQ(fi.field.reg, r.offset) << qualified(r) << "." << fi.name;
            EXPECT_EQ(seen & fi.field.mask(), 0u) << qualified(r) << "." << fi.name << " overlaps another field";
            seen |= fi.field.mask();
            EXPECT_TRUE(names.insert(fi.name).second) << qualified(r) << "." << fi.name << " twice";
            EXPECT_EQ(find_field(r, fi.name), &fi);
            if (f > 0) {
                EXPECT_LT(r.fields[f - 1].field.low, fi.field.low) << qualified(r) << " fields not sorted";
            }
        }
    }
}

TEST(RegisterTable, LookupsAgree) {
    size_t n = 0;
    const RegisterInfo* table = register_table(&n);
    std::set<std::string> underscored;
    for (size_t i = 0; i < n; ++i) {
        const RegisterInfo& r = table[i];
        if (i > 0) {
            EXPECT_LT(table[i - 1].offset, r.offset) << "table not sorted at " << qualified(r);
        }
        EXPECT_EQ(r.block, block_of(r.offset)) << qualified(r);
        EXPECT_EQ(r.offset & 3, 0) << qualified(r) << " is not word aligned";
        EXPECT_EQ(find_register(r.offset), &r) << qualified(r);
        EXPECT_EQ(find_register(qualified(r)), &r) << qualified(r);
        const std::string u = std::string(block_name(r.block)) + "_" + r.name;
        EXPECT_EQ(find_register(u), &r) << u;
        // BLOCK_NAME must be unambiguous (DPU + RDMA_X vs DPU_RDMA + X).
        EXPECT_TRUE(underscored.insert(u).second) << u << " names two registers";
        Block b = Block::kPc;
        EXPECT_TRUE(block_from_name(block_name(r.block), &b));
        EXPECT_EQ(b, r.block);
    }
}

TEST(RegisterTable, StreamBlocksEncodeTheirOwnSelect) {
    size_t n = 0;
    const RegisterInfo* table = register_table(&n);
    for (size_t i = 0; i < n; ++i) {
        const RegisterInfo& r = table[i];
        const DecodedWord d = decode_word(encode_write(r.offset, 0x12345678u), {});
        if (static_cast<int>(r.block) < kNumStreamBlocks) {
            EXPECT_EQ(d.kind, WordKind::kWrite) << qualified(r);
            EXPECT_EQ(d.block, r.block) << qualified(r);
            EXPECT_EQ(d.reg, r.offset);
            EXPECT_EQ(d.value, 0x12345678u);
        } else {
            // DDMA/SDMA/GLOBAL have no select bit in the 16-bit op field.
            EXPECT_EQ(d.kind, WordKind::kInvalid) << qualified(r);
        }
    }
}

}  // namespace
}  // namespace rknn::hw
