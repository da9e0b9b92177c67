// One int8 convolution task for the RK3566/RK3568 NPU core. The recipe is
// iav's board-verified RK3568 port of the rocket driver, diffed against the
// vendor's streams (docs/rk3568.md, each value with its source): 8-byte
// atoms, surfaces padded to 4 pixels, strides in 8-byte units, the CMAC
// block, grouped BS records, and the CORE registers one slot lower (the
// task is built with the table's names and remapped at the end).
#include <algorithm>

#include "hw/rk356x_dialect.h"
#include "npu/conv_regs.h"
#include "npu/native_layout.h"

namespace rknn::npu {

namespace f = hw::field;
namespace r = hw::reg;
namespace x = hw::rk356x;

namespace {

constexpr int kAtomBytes = 8;
constexpr int kDepthwiseGroup = 32;
constexpr uint32_t kRecordsUse = 7;  // BRDMA DATA_USE of the grouped records

// FEATURE_GRAINS as the vendor sets it: kernel rows plus the stride, one
// more stride for each of the narrow-output steps; 1 for a one-pixel input.
uint32_t feature_grains(const ConvGeometry& g) {
    if (g.in_h == 1 && g.in_w == 1) return 1;
    const int narrow = (g.out_w() < 28 ? 1 : 0) + (g.out_w() < 14 ? 1 : 0);
    return static_cast<uint32_t>(g.kh + g.sy() + g.sy() * narrow);
}

}  // namespace

int rk356x_declared_channels(const ConvGeometry& g, int channels) {
    if (g.packed_row_pixels > 0) return kAtomBytes;  // an ARGB pixel fills one atom
    return align_up(g.depthwise ? std::min(channels, kDepthwiseGroup) : channels, 16);
}

uint32_t rk356x_data_entries(const ConvGeometry& g, int declared_channels) {
    if (g.packed_row_pixels > 0) return rk356x_image_row_entries(g.in_w);
    const uint32_t atoms = static_cast<uint32_t>(declared_channels + kAtomBytes - 1) / kAtomBytes;
    return (static_cast<uint32_t>(g.in_w) * atoms + 3) / 4;
}

void emit_conv_int8_rk356x(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, const EpilogueRegs& e,
                           int8_t input_zp, const ConvTile& t) {
    const int out_row = t.out_rows > 0 ? t.out_row : 0;
    const int out_rows = t.out_rows > 0 ? t.out_rows : g.out_h();
    const int first = t.kernels > 0 ? t.kernel : 0;
    const int kernels = t.kernels > 0 ? t.kernels : g.out_c;
    const InputBand band = input_band(g, out_row, out_rows);
    const bool dw = g.depthwise;
    // A depthwise task reads and writes its own channels; a direct one reads all.
    const int in_c = dw ? kernels : g.in_c;
    const int declared = rk356x_declared_channels(g, in_c);
    const int announced = dw ? kDepthwiseGroup : align_up(kernels, 16);
    const int out_w = g.out_w();
    const uint64_t in_surf = rk356x_surface_bytes(g.in_h, g.in_w);
    const uint64_t out_surf = rk356x_surface_bytes(g.out_h(), out_w);
    // The tile's first output surface; a depthwise group also reads from there.
    const uint64_t first_surface = static_cast<uint64_t>(first / kAtomBytes);
    const uint64_t input_surface = dw ? first_surface : 0;

    const bool image = g.packed_row_pixels > 0;

    for (uint16_t sp : {r::CNA_S_POINTER, r::CMAC_S_POINTER, r::CORE_S_POINTER, r::DPU_S_POINTER,
                        r::DPU_RDMA_RDMA_S_POINTER})
        b->write(sp, hw::s_pointer::kPingPong);
    b->write_fields(r::CNA_CBUF_CON0, {{f::CNA_CBUF_CON0_DATA_BANK, static_cast<uint32_t>(t.data_banks)},
                                       {f::CNA_CBUF_CON0_WEIGHT_BANK, static_cast<uint32_t>(t.weight_banks)},
                                       {f::CNA_CBUF_CON0_WEIGHT_REUSE, t.reuse_weights ? 1u : 0u}});
    b->write_fields(r::CNA_CONV_CON1, {{f::CNA_CONV_CON1_CONV_MODE, dw ? 3u : 0u},
                                       {f::CNA_CONV_CON1_ARGB_IN, image ? x::kArgbIn : 0u}});
    b->write_fields(r::CNA_CONV_CON2, {{f::CNA_CONV_CON2_FEATURE_GRAINS, feature_grains(g)}});
    // RGB_BYTELENGTH: W x band rows x 9 in the vendor's ARGB tasks, 0 in the
    // others (as iav's board-verified port writes it: registers keep their
    // values from task to task, so an ARGB task's must not linger).
    b->write(r::CNA_CONV_CON4, image ? static_cast<uint32_t>(g.in_w * band.count * 9) : 0u);
    b->write_fields(r::CNA_CONV_CON3, {{f::CNA_CONV_CON3_CONV_X_STRIDE, static_cast<uint32_t>(g.sx())},
                                       {f::CNA_CONV_CON3_CONV_Y_STRIDE, static_cast<uint32_t>(g.sy())}});
    b->write_fields(r::CNA_DATA_SIZE0, {{f::CNA_DATA_SIZE0_DATAIN_WIDTH, static_cast<uint32_t>(g.in_w)},
                                        {f::CNA_DATA_SIZE0_DATAIN_HEIGHT, static_cast<uint32_t>(band.count)}});
    b->write_fields(r::CNA_DATA_SIZE1, {{f::CNA_DATA_SIZE1_DATAIN_CHANNEL, static_cast<uint32_t>(declared)},
                                        {f::CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, static_cast<uint32_t>(in_c - 1)}});
    b->write_fields(r::CNA_DATA_SIZE2, {{f::CNA_DATA_SIZE2_DATAOUT_WIDTH, static_cast<uint32_t>(out_w)}});
    b->write_fields(r::CNA_DATA_SIZE3, {{f::CNA_DATA_SIZE3_DATAOUT_ATOMICS, static_cast<uint32_t>(out_w * out_rows)}});
    const uint32_t per_kernel = static_cast<uint32_t>(g.kh * g.kw * declared);
    const uint32_t weight_kernels = dw ? 1u : static_cast<uint32_t>(kernels);
    b->write(r::CNA_WEIGHT_SIZE0, per_kernel * weight_kernels);
    b->write(r::CNA_WEIGHT_SIZE1, per_kernel);
    b->write_fields(r::CNA_WEIGHT_SIZE2, {{f::CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, static_cast<uint32_t>(g.kw)},
                                          {f::CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, static_cast<uint32_t>(g.kh)},
                                          {f::CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, weight_kernels}});
    b->write_fields(r::CNA_CBUF_CON1,
                    {{f::CNA_CBUF_CON1_DATA_ENTRIES, rk356x_data_entries(g, declared)},
                     {x::field::CNA_CBUF_CON1_INPUT_WIDTH, static_cast<uint32_t>(image ? align_up(g.in_w, 32) : g.in_w)}});
    if (image) {
        // The vendor's ARGB converter: lanes 0-2 take (x - 128) x 2^14 >> 14 of
        // the unsigned bytes, the int8 values; lane 3 scale 1.
        b->write_fields(r::CNA_CVT_CON0, {{x::field::CNA_CVT_CON0_CVT_EN, 1},
                                          {f::CNA_CVT_CON0_CVT_TRUNCATE_0, x::kArgbTruncate},
                                          {f::CNA_CVT_CON0_CVT_TRUNCATE_1, x::kArgbTruncate},
                                          {f::CNA_CVT_CON0_CVT_TRUNCATE_2, x::kArgbTruncate}});
        constexpr uint32_t kScaleAndOffset = (1u << (16 + x::kArgbTruncate)) | 0xFF80u;  // 2^14, -128
        for (uint16_t reg : {r::CNA_CVT_CON1, r::CNA_CVT_CON2, r::CNA_CVT_CON3}) b->write(reg, kScaleAndOffset);
        b->write(r::CNA_CVT_CON4, 1u << 16);
    } else {
        // Signed cube bytes through the converter switched off (CVT_EN clear), as the vendor's.
        b->write_fields(r::CNA_CVT_CON0, {{f::CNA_CVT_CON0_CVT_TYPE, 1}, {f::CNA_CVT_CON0_DATA_SIGN, 1}});
        for (uint16_t reg : {r::CNA_CVT_CON1, r::CNA_CVT_CON2, r::CNA_CVT_CON3, r::CNA_CVT_CON4}) b->write(reg, 1u << 16);
    }
    b->write_fields(r::CNA_PAD_CON0, {{f::CNA_PAD_CON0_PAD_TOP, static_cast<uint32_t>(band.pad_top)},
                                      {f::CNA_PAD_CON0_PAD_LEFT, static_cast<uint32_t>(g.pad_left)},
                                      {x::field::CNA_PAD_CON0_PAD_VALUE, static_cast<uint16_t>(int16_t{input_zp})}});
    // An ARGB image row holds three bytes a pixel (a whole number of 8-byte units).
    const uint64_t input_row_bytes = static_cast<uint64_t>(image ? g.packed_row_pixels * 3 : g.in_w * kAtomBytes);
    b->address(r::CNA_FEATURE_DATA_ADDR,
               a.input.plus(input_surface * in_surf + static_cast<uint64_t>(band.first) * input_row_bytes));
    b->write(r::CNA_DMA_CON0, x::kCnaDmaCon0);
    // Strides in 8-byte units: a row of W atoms, a surface of the whole
    // cube's padded pixels (also in band tasks). An ARGB image: its row, and
    // W x H as the vendor writes it (one surface holds every channel).
    b->write(r::CNA_DMA_CON1, static_cast<uint32_t>(input_row_bytes / kAtomBytes));
    b->write(r::CNA_DMA_CON2, static_cast<uint32_t>(image ? static_cast<uint64_t>(g.in_w) * g.in_h : in_surf / kAtomBytes));
    b->write_fields(r::CNA_FC_DATA_SIZE0, {{f::CNA_FC_DATA_SIZE0_DMA_WIDTH, static_cast<uint32_t>(g.in_w)},
                                           {f::CNA_FC_DATA_SIZE0_DMA_HEIGHT, static_cast<uint32_t>(band.count)}});
    b->write_fields(r::CNA_FC_DATA_SIZE1, {{f::CNA_FC_DATA_SIZE1_DMA_CHANNEL, static_cast<uint32_t>(declared)}});
    b->write(r::CNA_DCOMP_CTRL, 0);
    // Depthwise groups are 32 channels wide in the weights (the last one may hold 16).
    b->address(r::CNA_DCOMP_ADDR0,
               a.weights.plus(dw ? static_cast<uint64_t>(first) * g.kh * g.kw : static_cast<uint64_t>(first) * per_kernel));
    b->write_fields(r::CMAC_MISC_CFG, {{f::CMAC_MISC_CFG_QD_EN, 1}, {f::CMAC_MISC_CFG_DW_EN, dw ? 1u : 0u}});
    b->write_fields(r::CORE_MISC_CFG, {{f::CORE_MISC_CFG_DW_EN, dw ? 1u : 0u}});
    b->write_fields(r::CORE_DATAOUT_SIZE_0, {{f::CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, static_cast<uint32_t>(out_w - 1)},
                                            {f::CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, static_cast<uint32_t>(out_rows - 1)}});
    b->write(r::CORE_DATAOUT_SIZE_1, static_cast<uint32_t>(announced - 1));
    b->write(r::CORE_UNDOC_3030, 0);

    // A one-pixel input (FC) also sets NONALIGN and SURF_LEN = align(K, 16) / 8, as the vendor's FC tasks do.
    const bool fc = g.in_h == 1 && g.in_w == 1 && !dw;
    b->write_fields(r::DPU_FEATURE_MODE_CFG, {{x::field::DPU_FEATURE_MODE_CFG_BURST_LEN, x::kDpuBurst},
                                              {x::field::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, x::kDpuOutputToMemory},
                                              {x::field::DPU_FEATURE_MODE_CFG_CONV_MODE, dw ? 3u : 0u},
                                              {f::DPU_FEATURE_MODE_CFG_SURF_LEN, fc ? static_cast<uint32_t>(declared / 8) : 0u},
                                              {f::DPU_FEATURE_MODE_CFG_NONALIGN, fc ? 1u : 0u}});
    const uint64_t out_offset = first_surface * out_surf +
                                static_cast<uint64_t>(out_row) * out_w * kAtomBytes;
    b->address(r::DPU_DST_BASE_ADDR, a.output.plus(out_offset));
    // Raw bytes: a one-pixel surface is 8, below the field's 16-byte unit.
    b->write(r::DPU_DST_SURF_STRIDE, static_cast<uint32_t>(out_surf));
    b->write(r::DPU_SURFACE_ADD, static_cast<uint32_t>(out_surf * (dw ? 4 : 2)));
    b->write(r::DPU_DATA_CUBE_WIDTH, static_cast<uint32_t>(out_w - 1));
    b->write(r::DPU_DATA_CUBE_HEIGHT, static_cast<uint32_t>(out_rows - 1));
    b->write_fields(r::DPU_DATA_CUBE_CHANNEL, {{f::DPU_DATA_CUBE_CHANNEL_CHANNEL, static_cast<uint32_t>(announced - 1)},
                                              {f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, static_cast<uint32_t>(kernels - 1)}});
    b->write(r::DPU_WDMA_SIZE_0, static_cast<uint32_t>(announced - 1));
    b->write_fields(r::DPU_WDMA_SIZE_1, {{f::DPU_WDMA_SIZE_1_WIDTH_WDMA, static_cast<uint32_t>(out_w - 1)},
                                         {f::DPU_WDMA_SIZE_1_HEIGHT_WDMA, static_cast<uint32_t>(out_rows - 1)}});
    // Records of the task's first channel: 8 bytes per channel in 4-channel groups.
    const BufferRef records = a.records.plus(static_cast<uint64_t>(first) * 8);
    emit_conv_epilogue(b, e, records, BufferRef(), out_offset, static_cast<uint32_t>(out_surf), dw, t.load_lut,
                       kRecordsUse);
    if (e.residual) {
        // The residual cube's strides as the vendor's fused adds write them (raw bytes).
        b->write(r::DPU_RDMA_RDMA_EW_LINE_STRIDE, static_cast<uint32_t>(out_surf - kAtomBytes));
        b->write(r::DPU_RDMA_RDMA_SURF_NOTCH,
                 static_cast<uint32_t>(out_surf - static_cast<uint64_t>(out_w) * out_rows * kAtomBytes));
    }
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_WIDTH, static_cast<uint32_t>(out_w - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, static_cast<uint32_t>(out_rows - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL, static_cast<uint32_t>(announced - 1));
    // The BS stream's length in 8-byte words, less one (required on RK356x).
    b->write(r::DPU_RDMA_RDMA_BS_STREAM_LEN, static_cast<uint32_t>(announced - 1));
    b->write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE, dw ? 3u : 0u},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, 8}});
    b->write(r::DPU_RDMA_RDMA_WEIGHT, 0x01010101);
    b->remap_registers(x::wire_offset);
}

}  // namespace rknn::npu
