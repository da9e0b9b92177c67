// The RK3566/RK3568 register dialect (docs/rk3568.md 1.2-1.3, [3P iav]).
//
// The RK356x NPU core has the blocks and most offsets of the RK3588 table,
// but its CORE registers after OPERATION_ENABLE sit one slot lower (there is
// no MAC_GATING), its streams also write a CMAC block, and a few registers
// lay out their fields differently. The code generator builds tasks with the
// table's names and rewrites the offsets to this dialect as the last step;
// the emulator maps them back before it executes a stream, so everything
// between speaks one register table.
#pragma once

#include <cstdint>

#include "hw/regcmd.h"
#include "hw/registers.h"

namespace rknn::hw::rk356x {

// Wire offset -> table offset; false for an offset the RK356x map does not name.
bool table_offset(uint16_t wire, uint16_t* table);
// Table offset -> wire offset; false for a register with no RK356x slot.
bool wire_offset(uint16_t table, uint16_t* wire);
// Registers of the table only RK356x streams write (the CMAC block, DPU_RDMA
// 0x503C): an RK3588 stream that writes them is malformed.
bool rk356x_only(uint16_t table);
// A word of an RK356x stream, its register write given the table's offset. A
// write to an offset the RK356x map does not name is invalid when `rules`
// require known registers, else kept with its wire offset.
DecodedWord decode_word(uint64_t word, const DecodeRules& rules);

// Fields whose RK356x layout differs from the table's (offsets are the table's).
namespace field {
// The input zero point (int8 domain) as a 16-bit value; the vendor never writes PAD_CON1.
constexpr Field CNA_PAD_CON0_PAD_VALUE{reg::CNA_PAD_CON0, 16, 31};
// The input width beside DATA_ENTRIES (align(W, 32) for an ARGB image).
constexpr Field CNA_CBUF_CON1_INPUT_WIDTH{reg::CNA_CBUF_CON1, 16, 31};
// Bit 0 of CVT_CON0 switches the input converter on, the reverse of RK3588's
// CVT_BYPASS: the vendor sets it only in its ARGB tasks, whose unsigned
// pixels the converter must shift by -128 (0xE38E1), and clears it (0xA) in
// every task that reads signed cube bytes (docs/rk3568.md 1.3).
constexpr Field CNA_CVT_CON0_CVT_EN{reg::CNA_CVT_CON0, 0, 0};
// DPU FEATURE_MODE_CFG per the RK3568 TRM layout: the vendor writes 0x108
// for a convolution and 0x138 for a depthwise one.
constexpr Field DPU_FEATURE_MODE_CFG_FLYING_MODE{reg::DPU_FEATURE_MODE_CFG, 0, 0};
constexpr Field DPU_FEATURE_MODE_CFG_OUTPUT_MODE{reg::DPU_FEATURE_MODE_CFG, 1, 3};
constexpr Field DPU_FEATURE_MODE_CFG_CONV_MODE{reg::DPU_FEATURE_MODE_CFG, 4, 5};
constexpr Field DPU_FEATURE_MODE_CFG_BURST_LEN{reg::DPU_FEATURE_MODE_CFG, 7, 8};
}  // namespace field

constexpr uint32_t kDpuOutputToMemory = 4;  // OUTPUT_MODE of the vendor's 0x108
constexpr uint32_t kDpuBurst = 2;           // BURST_LEN of the vendor's 0x108
// CNA DMA_CON0 verbatim from the vendor's streams: bursts 7/7, fetch length
// 28 and bit 20, without which the MAC outputs a constant on a board.
constexpr uint32_t kCnaDmaCon0 = 0x00171C07;
// Convolutions enable CNA, CMAC, CORE, DPU and DPU_RDMA in one broadcast;
// starting the units one at a time corrupts the output on a board.
constexpr uint32_t kConvOpEnable = 0x1f;
// CONV_CON1.ARGB_IN of the vendor's first layers on a 3-channel image, and
// the converter's truncation there (scale 2^14, so the shift is exact).
constexpr uint32_t kArgbIn = 10;
constexpr uint32_t kArgbTruncate = 14;
// Entries of the 8 x 32 KiB CBUF are 32 bytes (1024 per bank).
constexpr uint32_t kCbufEntryBytes = 32;
constexpr uint32_t kEntriesPerBank = 1024;

}  // namespace rknn::hw::rk356x
