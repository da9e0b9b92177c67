#include "npu/conv_regs.h"

#include <algorithm>
#include <cstring>

#include "base/half.h"

#include "npu/native_layout.h"

namespace rknn::npu {

namespace f = hw::field;
namespace r = hw::reg;

namespace {

constexpr int kAtomBytes = 16;

int input_c2(const ConvGeometry& g) { return g.fp16 ? 8 : 16; }
int element_bytes(const ConvGeometry& g) { return g.fp16 ? 2 : 1; }

struct ResolvedTile {
    int out_row, out_rows, kernel, kernels;
    InputBand band;
};

ResolvedTile resolve(const ConvGeometry& g, const ConvTile& t) {
    ResolvedTile rt;
    rt.out_row = t.out_rows > 0 ? t.out_row : 0;
    rt.out_rows = t.out_rows > 0 ? t.out_rows : g.out_h();
    rt.kernel = t.kernels > 0 ? t.kernel : 0;
    rt.kernels = t.kernels > 0 ? t.kernels : g.out_c;
    rt.band = input_band(g, rt.out_row, rt.out_rows);
    return rt;
}

// A depthwise tile over channels [kernel, kernel + kernels) of a wider
// layer (plan_conv's channel chunks): the same task as a layer of just those
// channels, whose input, weights, output, records and residual start that
// many channels in. Chunks start on a weight group (32 fp16 / 64 int8
// channels), so every cube and stream offset is whole atoms and groups.
struct DepthwiseChunk {
    ConvGeometry g;
    ConvTile tile;
    uint64_t input_offset = 0, weight_offset = 0, output_offset = 0, record_offset = 0;
};

bool depthwise_chunk(const ConvGeometry& g, const ConvTile& t, int out_c2, DepthwiseChunk* chunk) {
    if (!g.depthwise || t.kernels <= 0 || (t.kernel == 0 && t.kernels == g.out_c)) return false;
    chunk->g = g;
    chunk->g.in_c = chunk->g.out_c = t.kernels;
    chunk->tile = t;
    chunk->tile.kernel = 0;
    const uint64_t in_surface = static_cast<uint64_t>(g.in_w) * g.in_h * kAtomBytes;
    const uint64_t out_surface = static_cast<uint64_t>(g.out_w()) * g.out_h() * kAtomBytes;
    const auto kernel = static_cast<uint64_t>(t.kernel);
    chunk->input_offset = kernel / static_cast<uint64_t>(input_c2(g)) * in_surface;
    chunk->output_offset = kernel / static_cast<uint64_t>(out_c2) * out_surface;
    chunk->weight_offset = kernel * static_cast<uint64_t>(g.kh) * g.kw * static_cast<uint64_t>(element_bytes(g));
    chunk->record_offset = kernel * kBsRecordBytes;
    return true;
}

ConvAddresses chunk_addresses(const ConvAddresses& a, const DepthwiseChunk& c) {
    return ConvAddresses{a.input.plus(c.input_offset), a.weights.plus(c.weight_offset), a.records.plus(c.record_offset),
                         a.output.plus(c.output_offset)};
}

void emit_input_side(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, const ConvTile& t,
                     const ResolvedTile& rt, uint32_t pad_value) {
    const int c_aligned = align_up(g.in_c, input_c2(g));
    const uint32_t prec = g.fp16 ? 2 : 0;
    const int out_w = g.out_w();
    b->write_fields(r::CNA_CBUF_CON0, {{f::CNA_CBUF_CON0_DATA_BANK, static_cast<uint32_t>(t.data_banks)},
                                       {f::CNA_CBUF_CON0_WEIGHT_BANK, static_cast<uint32_t>(t.weight_banks)},
                                       {f::CNA_CBUF_CON0_WEIGHT_REUSE, t.reuse_weights ? 1u : 0u}});
    const bool packed = g.packed_row_pixels > 0;
    // Channel-packed input: ARGB_IN is 8 for one channel (Mesa) and 10 for
    // three (the vendor's stream), read here as 8 + channels - 1.
    b->write_fields(r::CNA_CONV_CON1, {{f::CNA_CONV_CON1_CONV_MODE, g.depthwise ? 3u : 0u},
                                       {f::CNA_CONV_CON1_IN_PRECISION, prec},
                                       {f::CNA_CONV_CON1_PROC_PRECISION, prec},
                                       {f::CNA_CONV_CON1_ARGB_IN, packed ? 8u + static_cast<uint32_t>(g.in_c - 1) : 0u},
                                       {f::CNA_CONV_CON1_GROUP_LINE_OFF, packed ? 1u : 0u},
                                       {f::CNA_CONV_CON1_NONALIGN_DMA, packed ? 1u : 0u}});
    if (t.core >= 0) {
        const uint32_t s_pointer = hw::s_pointer::kPingPong | (static_cast<uint32_t>(t.core) << hw::s_pointer::kCoreIndexShift);
        b->write(r::CNA_S_POINTER, s_pointer);
        b->write(r::CORE_S_POINTER, s_pointer);
    }
    b->write(r::DPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::DPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write_fields(r::CNA_CONV_CON2, {{f::CNA_CONV_CON2_FEATURE_GRAINS, 50u + static_cast<uint32_t>(g.sy()) + 1u}});
    b->write_fields(r::CNA_CONV_CON3, {{f::CNA_CONV_CON3_CONV_X_STRIDE, static_cast<uint32_t>(g.sx())},
                                       {f::CNA_CONV_CON3_CONV_Y_STRIDE, static_cast<uint32_t>(g.sy())}});
    b->write_fields(r::CNA_DATA_SIZE0, {{f::CNA_DATA_SIZE0_DATAIN_WIDTH, static_cast<uint32_t>(g.in_w)},
                                        {f::CNA_DATA_SIZE0_DATAIN_HEIGHT, static_cast<uint32_t>(rt.band.count)}});
    b->write_fields(r::CNA_DATA_SIZE1, {{f::CNA_DATA_SIZE1_DATAIN_CHANNEL, static_cast<uint32_t>(c_aligned)},
                                        {f::CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, static_cast<uint32_t>(g.in_c - 1)}});
    b->write_fields(r::CNA_DATA_SIZE2, {{f::CNA_DATA_SIZE2_DATAOUT_WIDTH, static_cast<uint32_t>(out_w)}});
    b->write_fields(r::CNA_DATA_SIZE3, {{f::CNA_DATA_SIZE3_DATAOUT_ATOMICS, static_cast<uint32_t>(out_w * rt.out_rows)}});
    const uint32_t per_kernel = weight_bytes_per_kernel(g);
    const uint32_t kernels = g.depthwise ? 1u : static_cast<uint32_t>(rt.kernels);
    b->write(r::CNA_WEIGHT_SIZE0, per_kernel * kernels);
    b->write(r::CNA_WEIGHT_SIZE1, per_kernel);
    b->write_fields(r::CNA_WEIGHT_SIZE2, {{f::CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, static_cast<uint32_t>(g.kw)},
                                          {f::CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, static_cast<uint32_t>(g.kh)},
                                          {f::CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, kernels}});
    // DATA_ENTRIES: one input row in 64-byte units, as Mesa and the vendor's
    // fp16 streams write it (W x atoms / 4).
    // A packed band: W x rows, as the vendor's three-channel stream writes it.
    const uint32_t row_bytes = static_cast<uint32_t>(g.in_w * c_aligned * element_bytes(g));
    const uint32_t entries = packed ? static_cast<uint32_t>(g.in_w * rt.band.count) : (row_bytes + 63) / 64;
    b->write_fields(r::CNA_CBUF_CON1, {{f::CNA_CBUF_CON1_DATA_ENTRIES, entries}});
    b->write_fields(r::CNA_CVT_CON0, {{f::CNA_CVT_CON0_CVT_BYPASS, 1},
                                      {f::CNA_CVT_CON0_CVT_TYPE, 1},
                                      {f::CNA_CVT_CON0_DATA_SIGN, 1}});
    for (uint16_t reg : {r::CNA_CVT_CON1, r::CNA_CVT_CON2, r::CNA_CVT_CON3, r::CNA_CVT_CON4}) b->write(reg, 1u << 16);
    b->write_fields(r::CNA_PAD_CON0, {{f::CNA_PAD_CON0_PAD_TOP, static_cast<uint32_t>(rt.band.pad_top)},
                                      {f::CNA_PAD_CON0_PAD_LEFT, static_cast<uint32_t>(g.pad_left)}});
    const uint64_t input_row_bytes = packed ? static_cast<uint64_t>(g.packed_row_pixels) * g.in_c * element_bytes(g)
                                            : static_cast<uint64_t>(g.in_w) * kAtomBytes;
    b->address(r::CNA_FEATURE_DATA_ADDR, a.input.plus(static_cast<uint64_t>(rt.band.first) * input_row_bytes));
    b->write_fields(r::CNA_DMA_CON0, {{f::CNA_DMA_CON0_DATA_BURST_LEN, 15}, {f::CNA_DMA_CON0_WEIGHT_BURST_LEN, 15}});
    // Vendor captures: LINE_STRIDE = 4 W, SURF_STRIDE = W (H - 4) over the whole
    // cube (wrapping in 28 bits for H < 4), so a band keeps the cube's surfaces.
    // A packed image: LINE_STRIDE = its row pitch in pixels, SURF_STRIDE = that
    // pitch x (H - 1) (the vendor's three-channel stream).
    const uint32_t line = static_cast<uint32_t>(packed ? g.packed_row_pixels : 4 * g.in_w);
    const uint32_t surf = packed ? static_cast<uint32_t>(g.packed_row_pixels * (g.in_h - 1))
                                 : static_cast<uint32_t>(g.in_w * g.in_h - 4 * g.in_w) & 0x0fffffffu;
    b->write(r::CNA_DMA_CON1, line);
    b->write(r::CNA_DMA_CON2, surf);
    b->write_fields(r::CNA_FC_DATA_SIZE0, {{f::CNA_FC_DATA_SIZE0_DMA_WIDTH, static_cast<uint32_t>(g.in_w)},
                                           {f::CNA_FC_DATA_SIZE0_DMA_HEIGHT, static_cast<uint32_t>(rt.band.count)}});
    b->write_fields(r::CNA_FC_DATA_SIZE1, {{f::CNA_FC_DATA_SIZE1_DMA_CHANNEL, static_cast<uint32_t>(c_aligned)}});
    b->write(r::CNA_DCOMP_CTRL, 0);
    b->address(r::CNA_DCOMP_ADDR0, a.weights.plus(g.depthwise ? 0 : static_cast<uint64_t>(rt.kernel) * per_kernel));
    // Per-channel converter enables: Mesa writes 0xffff for its one-channel
    // input, the vendor 0xfff for three channels; with the converter bypassed
    // the emulator gives them no meaning.
    b->write(r::CNA_CVT_CON5, packed ? (g.in_c == 1 ? 0xffffu : 0xfffu) : 0u);
    b->write(r::CNA_PAD_CON1, pad_value);
    b->write_fields(r::CORE_MISC_CFG, {{f::CORE_MISC_CFG_QD_EN, g.fp16 ? 0u : 1u},
                                       {f::CORE_MISC_CFG_DW_EN, g.depthwise ? 1u : 0u},
                                       {f::CORE_MISC_CFG_PROC_PRECISION, prec}});
}

// CORE output sizes, the DPU's output cube and the DPU_RDMA cube; returns
// the byte offset of the tile's first atom in the output cube.
uint64_t emit_output_cube(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, const ResolvedTile& rt,
                          int out_c2) {
    const int out_w = g.out_w();
    const uint32_t surf_bytes = static_cast<uint32_t>(out_w * g.out_h() * kAtomBytes);
    const int kernels_aligned = align_up(rt.kernels, out_c2);
    const uint64_t offset = static_cast<uint64_t>(rt.kernel / out_c2) * surf_bytes +
                            static_cast<uint64_t>(rt.out_row) * out_w * kAtomBytes;
    b->write_fields(r::CORE_DATAOUT_SIZE_0, {{f::CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, static_cast<uint32_t>(out_w - 1)},
                                            {f::CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, static_cast<uint32_t>(rt.out_rows - 1)}});
    b->write(r::CORE_DATAOUT_SIZE_1, static_cast<uint32_t>(kernels_aligned - 1));
    b->write(r::CORE_CLIP_TRUNCATE, 0);
    b->address(r::DPU_DST_BASE_ADDR, a.output.plus(offset));
    b->write(r::DPU_DST_SURF_STRIDE, surf_bytes);
    // Undocumented; twice the surface (four times for depthwise) in Mesa's and
    // the vendor's streams alike. The emulator does not interpret it.
    b->write(r::DPU_SURFACE_ADD, surf_bytes * (g.depthwise ? 4u : 2u));
    b->write(r::DPU_DATA_CUBE_WIDTH, static_cast<uint32_t>(out_w - 1));
    b->write(r::DPU_DATA_CUBE_HEIGHT, static_cast<uint32_t>(rt.out_rows - 1));
    b->write_fields(r::DPU_DATA_CUBE_CHANNEL, {{f::DPU_DATA_CUBE_CHANNEL_CHANNEL, static_cast<uint32_t>(kernels_aligned - 1)},
                                              {f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, static_cast<uint32_t>(rt.kernels - 1)}});
    b->write(r::DPU_WDMA_SIZE_0, static_cast<uint32_t>(kernels_aligned - 1));
    b->write_fields(r::DPU_WDMA_SIZE_1, {{f::DPU_WDMA_SIZE_1_WIDTH_WDMA, static_cast<uint32_t>(out_w - 1)},
                                         {f::DPU_WDMA_SIZE_1_HEIGHT_WDMA, static_cast<uint32_t>(rt.out_rows - 1)}});
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_WIDTH, static_cast<uint32_t>(out_w - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, static_cast<uint32_t>(rt.out_rows - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL, static_cast<uint32_t>(kernels_aligned - 1));
    return offset;
}

}  // namespace

InputBand input_band(const ConvGeometry& g, int out_row, int out_rows) {
    InputBand band;
    const int top = out_row * g.sy() - g.pad_top;                   // first input row the tile needs
    const int bottom = (out_row + out_rows - 1) * g.sy() - g.pad_top + g.kh;  // one past its last
    band.first = std::max(0, top);
    band.pad_top = band.first - top;
    band.count = std::min(g.in_h, bottom) - band.first;
    return band;
}

uint32_t weight_bytes_per_kernel(const ConvGeometry& g) {
    return static_cast<uint32_t>(g.kh * g.kw * align_up(g.in_c, input_c2(g)) * element_bytes(g));
}

void emit_conv_int8(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, const EpilogueRegs& e,
                    int8_t input_zp, const ConvTile& tile) {
    DepthwiseChunk chunk;
    if (depthwise_chunk(g, tile, e.out_int32 ? 4 : 16, &chunk)) {
        EpilogueRegs ce = e;
        ce.prelu_records = e.prelu_records.plus(chunk.record_offset);
        ce.residual_addr = e.residual_addr.plus(chunk.output_offset);
        emit_conv_int8(b, chunk.g, chunk_addresses(a, chunk), ce, input_zp, chunk.tile);
        return;
    }
    const ResolvedTile rt = resolve(g, tile);
    const uint32_t zx = static_cast<uint8_t>(input_zp);
    emit_input_side(b, g, a, tile, rt, zx | (zx << 8));
    b->write_fields(r::DPU_FEATURE_MODE_CFG, {{f::DPU_FEATURE_MODE_CFG_BURST_LEN, 15},
                                              {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2},
                                              {f::DPU_FEATURE_MODE_CFG_CONV_MODE, g.depthwise ? 3u : 0u}});
    const uint64_t out_offset = emit_output_cube(b, g, a, rt, e.out_int32 ? 4 : 16);
    const uint32_t surf = static_cast<uint32_t>(g.out_w() * g.out_h() * kAtomBytes);
    const uint64_t first_record = static_cast<uint64_t>(rt.kernel) * kBsRecordBytes;
    emit_conv_epilogue(b, e, a.records.plus(first_record), e.prelu_records.plus(first_record), out_offset, surf,
                       g.depthwise, tile.load_lut);
    b->write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE,
                                                        g.depthwise ? 3u : 0u},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, 15}});
}

std::vector<uint8_t> float_bias_records(const std::vector<float>& bias, int channels) {
    std::vector<uint8_t> out(std::max(bias.size(), static_cast<size_t>(channels)) * kBsRecordBytes, 0);
    for (size_t c = 0; c < bias.size(); ++c) std::memcpy(&out[c * kBsRecordBytes], &bias[c], 4);
    return out;
}

namespace {

// BS: bias (ALU add, per channel) and ReLU, or the whole hard sigmoid; BN:
// clip (max lo, ReLU-X hi), leaky (PReLU multiplier) or the post affine; EW:
// the residual add, then the ReLU after it.
void emit_float_epilogue(TaskEmitter* b, const FloatEpilogue& e, const BufferRef& records, uint64_t residual_offset,
                         uint32_t surf_bytes) {
    const bool relu = e.act == FloatEpilogue::Act::kRelu;
    const bool hard_sigmoid = e.act == FloatEpilogue::Act::kHardSigmoid;
    StageRegs bs;
    bs.enabled = e.bias || (relu && !e.residual) || hard_sigmoid;
    bs.alu = bs.alu_per_channel = e.bias;
    if (e.bias) bs.records = records;
    bs.relu = (relu && !e.residual) || hard_sigmoid;
    if (hard_sigmoid) {
        bs.mul = bs.relux = true;
        bs.mul_value = static_cast<int16_t>(float_to_half(e.alpha));
        bs.relux_value = static_cast<int32_t>(float_bits(1.0f));
    }
    StageRegs bn;
    if (e.post_affine) {
        bn.enabled = bn.mul = bn.alu = true;
        bn.mul_value = static_cast<int16_t>(float_to_half(e.post_scale));
        bn.alu_value = static_cast<int32_t>(float_bits(e.post_bias));
    } else if (e.act == FloatEpilogue::Act::kClip) {
        bn.enabled = bn.alu = bn.relux = true;
        bn.alu_algo = 0;  // max
        bn.alu_value = static_cast<int32_t>(float_bits(e.lo));
        bn.relux_value = static_cast<int32_t>(float_bits(e.hi));
    } else if (e.act == FloatEpilogue::Act::kLeaky) {
        bn.enabled = bn.mul = bn.prelu = true;
        bn.mul_value = static_cast<int16_t>(float_to_half(e.alpha));
    }
    EwRegs ew;
    if (e.residual) {
        ew.enabled = ew.op = ew.tensor = true;
        ew.operand_bytes = 2;
        ew.operand_addr = e.residual_addr.plus(residual_offset);
        ew.relu = relu;
    }
    emit_stage(b, true, bs);
    b->write_fields(r::DPU_BS_OW_CFG, {{f::DPU_BS_OW_CFG_OD_BYPASS, 1}});
    emit_stage(b, false, bn);
    emit_ew(b, ew, surf_bytes);
}

}  // namespace

void emit_conv_fp16(TaskEmitter* b, const ConvGeometry& g, const ConvAddresses& a, bool fp32_out, const ConvTile& tile,
                    const FloatEpilogue& epilogue) {
    DepthwiseChunk chunk;
    if (depthwise_chunk(g, tile, fp32_out ? 4 : 8, &chunk)) {
        FloatEpilogue ce = epilogue;
        ce.residual_addr = epilogue.residual_addr.plus(chunk.output_offset);
        emit_conv_fp16(b, chunk.g, chunk_addresses(a, chunk), fp32_out, chunk.tile, ce);
        return;
    }
    const ResolvedTile rt = resolve(g, tile);
    emit_input_side(b, g, a, tile, rt, 0);
    b->write_fields(r::DPU_FEATURE_MODE_CFG, {{f::DPU_FEATURE_MODE_CFG_BURST_LEN, 15},
                                              {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2},
                                              {f::DPU_FEATURE_MODE_CFG_CONV_MODE, g.depthwise ? 3u : 0u}});
    b->write_fields(r::DPU_DATA_FORMAT, {{f::DPU_DATA_FORMAT_PROC_PRECISION, 2},
                                         {f::DPU_DATA_FORMAT_IN_PRECISION, 2},
                                         {f::DPU_DATA_FORMAT_OUT_PRECISION, fp32_out ? 5u : 2u}});
    const uint64_t out_offset = emit_output_cube(b, g, a, rt, fp32_out ? 4 : 8);
    const uint32_t surf = static_cast<uint32_t>(g.out_w() * g.out_h() * kAtomBytes);
    emit_float_epilogue(b, epilogue, a.records.plus(static_cast<uint64_t>(rt.kernel) * kBsRecordBytes), out_offset, surf);
    b->write(r::DPU_OUT_CVT_OFFSET, 0);
    b->write_fields(r::DPU_OUT_CVT_SCALE, {{f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, 1},
                                           {f::DPU_OUT_CVT_SCALE_FP32TOFP16_EN, fp32_out ? 0u : 1u}});
    b->write(r::DPU_OUT_CVT_SHIFT, 0);
    b->write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1}});
}

}  // namespace rknn::npu
