#include "npu/dpu_regs.h"

#include <algorithm>
#include <cstring>

#include "npu/native_layout.h"

namespace rknn::npu {

namespace f = hw::field;
namespace r = hw::reg;

namespace {
uint32_t twos(int32_t v) { return static_cast<uint32_t>(v); }
}  // namespace

EpilogueRegs epilogue_regs(const cpu::int8::Epilogue& e, const int8_t* w, int oc, int taps_per_kernel, int32_t zx) {
    EpilogueRegs regs;
    regs.shift = e.requant.shift;
    for (int o = 0; o < oc; ++o) {
        int64_t sum_w = 0;
        for (int k = 0; k < taps_per_kernel; ++k) sum_w += w[static_cast<size_t>(o) * taps_per_kernel + k];
        const int64_t bias = e.bias.empty() ? 0 : e.bias[static_cast<size_t>(o)];
        regs.bias.push_back(static_cast<int32_t>(bias - zx * sum_w));
        regs.mult.push_back(static_cast<int16_t>(e.requant.multiplier(static_cast<size_t>(o))));
    }
    using Kind = cpu::int8::Int8Activation::Kind;
    if (e.has_lut) {
        regs.lut = &e.lut;
    } else if (e.activation.kind == Kind::kRelu) {
        regs.relu = true;
    } else if (e.activation.kind == Kind::kClip) {
        regs.clip = true;
        regs.clip_lo = static_cast<int32_t>(e.activation.lo);
        regs.clip_hi = static_cast<int32_t>(e.activation.hi);
    } else if (e.activation.kind == Kind::kLeaky) {
        regs.leaky = true;
        regs.leaky_mult = static_cast<int16_t>(e.activation.slope.multiplier(0));
        regs.leaky_shift = e.activation.slope.shift;
    } else if (e.activation.kind == Kind::kPRelu) {
        regs.prelu = true;
        for (int o = 0; o < oc; ++o)
            regs.prelu_mult.push_back(static_cast<int16_t>(e.activation.slope.multiplier(static_cast<size_t>(o))));
        regs.prelu_shift = e.activation.slope.shift;
    }
    if (e.has_residual) {
        regs.residual = true;
        regs.residual_zp = e.residual_zp;
        regs.residual_mult = static_cast<int16_t>(e.residual_requant.multiplier(0));
        regs.residual_shift = e.residual_requant.shift;
    }
    regs.out_zp = e.out_zp;
    return regs;
}

std::vector<uint8_t> bs_records(const EpilogueRegs& e, int channels) {
    std::vector<uint8_t> out(std::max(e.bias.size(), static_cast<size_t>(channels)) * kBsRecordBytes, 0);
    for (size_t c = 0; c < e.bias.size(); ++c) {
        std::memcpy(&out[c * kBsRecordBytes], &e.bias[c], 4);
        std::memcpy(&out[c * kBsRecordBytes + 4], &e.mult[c], 2);
    }
    return out;
}

std::vector<uint8_t> bs_records_rk356x(const EpilogueRegs& e) {
    constexpr int kLanes = 4;
    const size_t channels = static_cast<size_t>(align_up(static_cast<int>(e.bias.size()), 32));
    std::vector<uint8_t> out(channels / kLanes * kRk356xRecordGroupBytes, 0);
    for (size_t c = 0; c < e.bias.size(); ++c) {
        uint8_t* group = &out[c / kLanes * kRk356xRecordGroupBytes];
        const size_t lane = c % kLanes;
        std::memcpy(group + lane * 4, &e.bias[c], 4);
        std::memcpy(group + 24 + lane * 2, &e.mult[c], 2);  // after 16 bias and 8 offset bytes
    }
    return out;
}

std::vector<uint8_t> prelu_records(const EpilogueRegs& e, int channels) {
    if (!e.prelu) return {};
    EpilogueRegs slopes;
    slopes.bias.assign(e.prelu_mult.size(), 0);
    slopes.mult = e.prelu_mult;
    return bs_records(slopes, channels);
}

void emit_lut_load(TaskEmitter* b, const std::vector<int16_t>& le, const std::vector<int16_t>& lo) {
    for (uint32_t table = 0; table < 2; ++table) {
        b->write_fields(r::DPU_LUT_ACCESS_CFG, {{f::DPU_LUT_ACCESS_CFG_LUT_ACCESS_TYPE, 1},
                                                {f::DPU_LUT_ACCESS_CFG_LUT_TABLE_ID, table},
                                                {f::DPU_LUT_ACCESS_CFG_LUT_ADDR, 0}});
        for (int16_t v : table ? lo : le) b->write(r::DPU_LUT_ACCESS_DATA, static_cast<uint16_t>(v));
    }
}

namespace {

// The BS and BN stages have the same structure at different offsets.
struct StageLayout {
    uint16_t cfg, mul_cfg, alu_cfg, relux, rdma_cfg, rdma_base;
    hw::Field alu_bypass, alu_algo, alu_src, mul_bypass, mul_prelu, relu_bypass, relux_en;
    hw::Field mul_src, mul_shift, mul_operand, data_use;
};

const StageLayout kBs = {r::DPU_BS_CFG, r::DPU_BS_MUL_CFG, r::DPU_BS_ALU_CFG, r::DPU_BS_RELUX_CMP_VALUE,
                         r::DPU_RDMA_RDMA_BRDMA_CFG, r::DPU_RDMA_RDMA_BS_BASE_ADDR,
                         f::DPU_BS_CFG_BS_ALU_BYPASS, f::DPU_BS_CFG_BS_ALU_ALGO, f::DPU_BS_CFG_BS_ALU_SRC,
                         f::DPU_BS_CFG_BS_MUL_BYPASS, f::DPU_BS_CFG_BS_MUL_PRELU, f::DPU_BS_CFG_BS_RELU_BYPASS,
                         f::DPU_BS_CFG_BS_RELUX_EN, f::DPU_BS_MUL_CFG_BS_MUL_SRC, f::DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE,
                         f::DPU_BS_MUL_CFG_BS_MUL_OPERAND, f::DPU_RDMA_RDMA_BRDMA_CFG_BRDMA_DATA_USE};
const StageLayout kBn = {r::DPU_BN_CFG, r::DPU_BN_MUL_CFG, r::DPU_BN_ALU_CFG, r::DPU_BN_RELUX_CMP_VALUE,
                         r::DPU_RDMA_RDMA_NRDMA_CFG, r::DPU_RDMA_RDMA_BN_BASE_ADDR,
                         f::DPU_BN_CFG_BN_ALU_BYPASS, f::DPU_BN_CFG_BN_ALU_ALGO, f::DPU_BN_CFG_BN_ALU_SRC,
                         f::DPU_BN_CFG_BN_MUL_BYPASS, f::DPU_BN_CFG_BN_MUL_PRELU, f::DPU_BN_CFG_BN_RELU_BYPASS,
                         f::DPU_BN_CFG_BN_RELUX_EN, f::DPU_BN_MUL_CFG_BN_MUL_SRC, f::DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE,
                         f::DPU_BN_MUL_CFG_BN_MUL_OPERAND, f::DPU_RDMA_RDMA_NRDMA_CFG_NRDMA_DATA_USE};

}  // namespace

void emit_stage(TaskEmitter* b, bool bs, const StageRegs& s) {
    const StageLayout& L = bs ? kBs : kBn;
    if (!s.enabled) {
        b->write(L.cfg, kBypassedStage);
        return;
    }
    b->write_fields(L.cfg, {{L.alu_bypass, s.alu ? 0u : 1u},
                            {L.alu_algo, s.alu_algo},
                            {L.alu_src, s.alu_per_channel ? 1u : 0u},
                            {L.mul_bypass, s.mul ? 0u : 1u},
                            {L.mul_prelu, s.prelu ? 1u : 0u},
                            {L.relu_bypass, s.relu ? 0u : 1u},
                            {L.relux_en, s.relux ? 1u : 0u}});
    b->write_fields(L.mul_cfg, {{L.mul_src, s.mul_per_channel ? 1u : 0u},
                                {L.mul_shift, static_cast<uint32_t>(s.shift)},
                                {L.mul_operand, static_cast<uint16_t>(s.mul_value)}});
    b->write(L.alu_cfg, twos(s.alu_value));
    b->write(L.relux, twos(s.relux_value));
    b->write_fields(L.rdma_cfg, {{L.data_use, s.uses_records() ? s.records_use : 0u}});
    b->address(L.rdma_base, s.records);
}

void emit_ew(TaskEmitter* b, const EwRegs& e, uint32_t surf_bytes) {
    if (!e.enabled) {
        b->write(r::DPU_EW_CFG, kBypassedEw);
        b->write_fields(r::DPU_RDMA_RDMA_ERDMA_CFG, {{f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1}});
        return;
    }
    // EDATA_SIZE / ERDMA_DATA_SIZE: 1 one byte, 2 two bytes, 3 four bytes.
    const uint32_t size = !(e.op && e.tensor) ? 0u : (e.operand_bytes == 2 ? 2u : (e.operand_bytes == 4 ? 3u : 1u));
    const uint32_t mode = e.op && e.tensor && !e.per_channel ? 1u : 0u;
    b->write_fields(r::DPU_EW_CFG, {{f::DPU_EW_CFG_EW_OP_BYPASS, e.op ? 0u : 1u},
                                    {f::DPU_EW_CFG_EW_OP_TYPE, e.op_mul ? 1u : 0u},
                                    {f::DPU_EW_CFG_EW_OP_SRC, e.tensor ? 1u : 0u},
                                    {f::DPU_EW_CFG_EW_OP_CVT_BYPASS, e.cvt ? 0u : 1u},
                                    {f::DPU_EW_CFG_EW_ALU_ALGO, e.algo},
                                    {f::DPU_EW_CFG_EDATA_SIZE, size},
                                    {f::DPU_EW_CFG_EW_DATA_MODE, mode},
                                    {f::DPU_EW_CFG_EW_LUT_BYPASS, e.lut ? 0u : 1u},
                                    {f::DPU_EW_CFG_EW_RELU_BYPASS, e.relu ? 0u : 1u}});
    b->write(r::DPU_EW_CVT_OFFSET_VALUE, twos(e.cvt_offset));
    b->write_fields(r::DPU_EW_CVT_SCALE_VALUE, {{f::DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, static_cast<uint16_t>(e.cvt_scale)},
                                               {f::DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT, static_cast<uint32_t>(e.cvt_shift)}});
    b->write(r::DPU_EW_OP_VALUE_0, twos(e.value));
    if (e.op && e.tensor) {
        b->write_fields(r::DPU_RDMA_RDMA_ERDMA_CFG, {{f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_MODE, mode},
                                                    {f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_SIZE, size}});
        b->address(r::DPU_RDMA_RDMA_EW_BASE_ADDR, e.operand_addr);
        b->write(r::DPU_RDMA_RDMA_EW_SURF_STRIDE, surf_bytes);
    } else {
        b->write_fields(r::DPU_RDMA_RDMA_ERDMA_CFG, {{f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1}});
    }
}

void emit_out_cvt(TaskEmitter* b, const OutCvt& o) {
    b->write(r::DPU_OUT_CVT_OFFSET, twos(o.offset));
    b->write_fields(r::DPU_OUT_CVT_SCALE, {{f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, static_cast<uint16_t>(o.scale)}});
    b->write_fields(r::DPU_OUT_CVT_SHIFT, {{f::DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, static_cast<uint32_t>(o.shift)}});
}

void emit_shift_negatives(TaskEmitter* b, const StageRegs& bs, const StageRegs& bn) {
    b->write_fields(r::DPU_DATA_FORMAT, {{f::DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(bs.shift)},
                                         {f::DPU_DATA_FORMAT_BN_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(bn.shift)}});
}

void emit_lut_window(TaskEmitter* b, int sel, int32_t le_start, int32_t lo_start, int32_t lo_end) {
    b->write_fields(r::DPU_LUT_INFO, {{f::DPU_LUT_INFO_LUT_LE_INDEX_SELECT, static_cast<uint32_t>(sel)},
                                      {f::DPU_LUT_INFO_LUT_LO_INDEX_SELECT, static_cast<uint32_t>(sel)}});
    b->write(r::DPU_LUT_LE_START, twos(le_start));
    b->write(r::DPU_LUT_LE_END, twos(lo_start));
    b->write(r::DPU_LUT_LO_START, twos(lo_start));
    b->write(r::DPU_LUT_LO_END, twos(lo_end));
}

CodeLut code_lut(const std::vector<int16_t>& results) {
    CodeLut t;
    t.le.resize(513);
    t.lo.resize(513);
    for (size_t i = 0; i < 513; ++i) {
        t.le[i] = results[std::min<size_t>(i, 128)];
        t.lo[i] = results[std::min<size_t>(128 + i, 255)];
    }
    return t;
}

void emit_conv_epilogue(TaskEmitter* b, const EpilogueRegs& e, const BufferRef& records, const BufferRef& bn_records,
                        uint64_t residual_offset, uint32_t surf_bytes, bool depthwise, bool load_lut,
                        uint32_t bs_records_use) {
    // BS: per-channel bias (ALU add) and multiplier, from 8-byte records.
    StageRegs bs;
    bs.enabled = bs.alu = bs.alu_per_channel = bs.mul = bs.mul_per_channel = true;
    bs.shift = e.shift;
    bs.records = records;
    bs.records_use = bs_records_use;
    // BN: clip or leaky ReLU (only valid when no residual follows them).
    StageRegs bn;
    if (e.clip) {
        bn.enabled = bn.alu = bn.relux = true;
        bn.alu_algo = 0;
        bn.alu_value = e.clip_lo;
        bn.relux_value = e.clip_hi;
    } else if (e.leaky) {
        bn.enabled = bn.mul = bn.prelu = true;
        bn.mul_value = e.leaky_mult;
        bn.shift = e.leaky_shift;
    } else if (e.prelu) {
        bn.enabled = bn.mul = bn.mul_per_channel = bn.prelu = true;
        bn.shift = e.prelu_shift;
        bn.records = bn_records;
    }
    EwRegs ew;
    ew.enabled = e.residual || e.lut != nullptr || e.relu;
    ew.op = ew.tensor = ew.cvt = e.residual;
    ew.operand_addr = e.residual_addr.plus(residual_offset);
    ew.cvt_offset = -e.residual_zp;
    ew.cvt_scale = e.residual_mult;
    ew.cvt_shift = e.residual_shift;
    ew.lut = e.lut != nullptr;
    ew.relu = e.relu;
    if (e.out_int32) {
        b->write_fields(r::DPU_DATA_FORMAT, {{f::DPU_DATA_FORMAT_OUT_PRECISION, static_cast<uint32_t>(hw::Precision::kInt32)},
                                             {f::DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(bs.shift)},
                                             {f::DPU_DATA_FORMAT_BN_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(bn.shift)}});
    } else {
        emit_shift_negatives(b, bs, bn);
    }
    emit_stage(b, true, bs);
    const uint32_t size_e = depthwise ? 3u : 1u;
    b->write_fields(r::DPU_BS_OW_CFG, {{f::DPU_BS_OW_CFG_OD_BYPASS, 1},
                                       {f::DPU_BS_OW_CFG_SIZE_E_0, size_e},
                                       {f::DPU_BS_OW_CFG_SIZE_E_1, size_e},
                                       {f::DPU_BS_OW_CFG_SIZE_E_2, size_e}});
    emit_stage(b, false, bn);
    emit_ew(b, ew, surf_bytes);
    OutCvt out;
    out.offset = e.out_zp;
    if (e.lut != nullptr) {
        out.scale = static_cast<int16_t>(e.lut->out.multiplier(0));
        out.shift = e.lut->out.shift;
        const auto& t = e.lut->table;
        if (load_lut)
            emit_lut_load(b, std::vector<int16_t>(t.begin(), t.begin() + 513), std::vector<int16_t>(t.begin() + 512, t.end()));
        emit_lut_window(b, 5, -16384, 0, 16384);
    }
    emit_out_cvt(b, out);
}

void emit_dpu_task(TaskEmitter* b, const DpuTask& t) {
    b->write(r::DPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::DPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write_fields(r::DPU_FEATURE_MODE_CFG, {{f::DPU_FEATURE_MODE_CFG_FLYING_MODE, 1},
                                              {f::DPU_FEATURE_MODE_CFG_BURST_LEN, 15},
                                              {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2}});
    const uint32_t prec = t.fp16 ? 2u : 0u;
    b->write_fields(r::DPU_DATA_FORMAT, {{f::DPU_DATA_FORMAT_PROC_PRECISION, prec},
                                         {f::DPU_DATA_FORMAT_IN_PRECISION, prec},
                                         {f::DPU_DATA_FORMAT_OUT_PRECISION, prec},
                                         {f::DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(t.bs.shift)},
                                         {f::DPU_DATA_FORMAT_BN_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(t.bn.shift)}});
    const int c_aligned = align_up(t.c, t.fp16 ? 8 : 16);
    const uint32_t surf = static_cast<uint32_t>(t.w * t.h * 16);
    b->address(r::DPU_DST_BASE_ADDR, t.dst);
    b->write(r::DPU_DST_SURF_STRIDE, surf);
    b->write(r::DPU_DATA_CUBE_WIDTH, static_cast<uint32_t>(t.w - 1));
    b->write(r::DPU_DATA_CUBE_HEIGHT, static_cast<uint32_t>(t.h - 1));
    b->write_fields(r::DPU_DATA_CUBE_CHANNEL, {{f::DPU_DATA_CUBE_CHANNEL_CHANNEL, static_cast<uint32_t>(c_aligned - 1)},
                                              {f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, static_cast<uint32_t>(t.c - 1)}});
    emit_stage(b, true, t.bs);
    b->write_fields(r::DPU_BS_OW_CFG, {{f::DPU_BS_OW_CFG_OD_BYPASS, 1}});
    emit_stage(b, false, t.bn);
    emit_ew(b, t.ew, surf);
    if (t.fp16) {
        b->write(r::DPU_OUT_CVT_OFFSET, 0);
        b->write_fields(r::DPU_OUT_CVT_SCALE, {{f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, 1},
                                               {f::DPU_OUT_CVT_SCALE_FP32TOFP16_EN, 1}});
        b->write(r::DPU_OUT_CVT_SHIFT, 0);
    } else {
        emit_out_cvt(b, t.out);
    }
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_WIDTH, static_cast<uint32_t>(t.w - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, static_cast<uint32_t>(t.h - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL, static_cast<uint32_t>(c_aligned - 1));
    b->address(r::DPU_RDMA_RDMA_SRC_BASE_ADDR, t.src);
    b->write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE, 1},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, 15},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION, prec},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_PROC_PRECISION, prec},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_FP16TOFP32_EN,
                                                        t.fp16 ? 1u : 0u}});
}

}  // namespace rknn::npu
