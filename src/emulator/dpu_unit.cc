#include "emulator/dpu_unit.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <cstring>
#include <vector>

#include "base/half.h"
#include "emulator/cube.h"
#include "emulator/fixed_point.h"
#include "emulator/plan_memo.h"
#include "emulator/kernels/dpu_requant.h"
#include "emulator/kernels/dpu_int8_lanes.h"
#include "emulator/lut_memo.h"
#include "base/hot_loops.h"
#include "base/parallel.h"
#include "hw/rk356x_dialect.h"

namespace rknn::emulator {

namespace f = hw::field;
namespace r = hw::reg;
using hw::Precision;

namespace {

enum AluAlgo : uint32_t { kAluMax = 0, kAluMin = 1, kAluAdd = 2, kAluDiv = 3, kAluSub = 4 };
constexpr int64_t kParallelElements = int64_t{1} << 14;  // smaller cubes run on one host thread

std::atomic<bool> fused_passes{true};
std::atomic<uint64_t> fused_pass_tasks{0};
std::atomic<uint64_t> int8_lane_bands{0};

bool is_float(Precision p) { return p == Precision::kFp16 || p == Precision::kFp32 || p == Precision::kBf16; }

// One of the BS / BN stages, decoded.
struct Stage {
    bool bypass = true;
    bool alu_bypass = true, mul_bypass = true, prelu = false, relu_bypass = true, relux = false;
    bool alu_per_channel = false, mul_per_channel = false;
    uint32_t alu_algo = kAluAdd;
    int shift = 0, shift_neg = 0;
    uint32_t alu_reg = 0;   // int32 or fp32 bits
    uint32_t mul_reg = 0;   // int16 or fp16 bits
    uint32_t relux_reg = 0; // int32 or fp32 bits
    // Per-channel operands (raw bits), filled from the RDMA record when used.
    std::vector<uint32_t> alu, mul, ow;
};

struct Ew {
    bool bypass = true, op_bypass = true, mul = false, cvt_bypass = true, lut_bypass = true;
    bool relu_bypass = true, relux = false, from_tensor = false;
    uint32_t algo = kAluAdd;
    int32_t cvt_offset = 0;
    int32_t cvt_scale = 1;
    int cvt_shift = 0;
    int truncate = 0, truncate_neg = 0;
    Rounding cvt_round = Rounding::kHalfEven;
    uint32_t relux_reg = 0;
    uint32_t value_reg = 0;
    LutParams lut;  // when the LUT is used
    // Operand tensor (ERDMA).
    bool per_channel = false;
    int esize = 1;
    const uint8_t* data = nullptr;
    CubeLayout cube;
};

struct Dpu {
    Precision in = Precision::kInt8, proc = Precision::kInt8, out = Precision::kInt8;
    int width = 0, height = 0, channels = 0;
    int real_channels = 0;  // ORIG_CHANNEL + 1: lanes beyond it are written as zero
    CubeLayout dst;
    uint8_t* dst_bytes = nullptr;
    Stage bs, bn;
    bool ow_enabled = false, ow_per_channel = false;
    int32_t ow_reg = 0;
    Ew ew;
    int32_t out_offset = 0;
    int32_t out_scale = 1;
    int out_shift = 0;
    Rounding out_round = Rounding::kHalfEven;
    bool to_fp16 = false;
};

int ew_size_bytes(uint32_t code) { return code == 1 ? 1 : (code == 2 ? 2 : (code == 3 ? 4 : 0)); }

// RK356x records with every operand (DATA_USE 7): groups of four channels in
// 32 bytes, [alu i32 x 4][ow i16 x 4][mul u16 x 4] (docs/rk3568.md 3); the BS
// stream's length is in DPU_RDMA 0x5024, 8-byte words less one (checked in
// strict mode).
Status read_rk356x_records(TaskContext& ctx, uint64_t base, int channels, bool bs, Stage* s,
                           std::vector<uint32_t>* ow, const char* what) {
    constexpr int kLanes = 4, kGroup = 32;
    const uint64_t bytes = static_cast<uint64_t>((channels + kLanes - 1) / kLanes) * kGroup;
    const uint64_t stream = (uint64_t{ctx.regs.exec(r::DPU_RDMA_RDMA_BS_STREAM_LEN)} + 1) * 8;
    if (ctx.strict && bs && stream < bytes)
        return ctx.bad_program("%s: the BS stream length (0x5024) covers %llu bytes, the %d channels need %llu", what,
                               static_cast<unsigned long long>(stream), channels, static_cast<unsigned long long>(bytes));
    RKNN_ASSIGN_OR_RETURN(uint8_t * p, ctx.map(base, bytes, false, what));
    s->alu.resize(static_cast<size_t>(channels));
    s->mul.resize(static_cast<size_t>(channels));
    if (ow != nullptr) ow->resize(static_cast<size_t>(channels));
    for (int c = 0; c < channels; ++c) {
        const uint8_t* group = p + static_cast<size_t>(c / kLanes) * kGroup;
        const int lane = c % kLanes;
        uint32_t a;
        uint16_t o, m;
        std::memcpy(&a, group + lane * 4, 4);
        std::memcpy(&o, group + 16 + lane * 2, 2);
        std::memcpy(&m, group + 24 + lane * 2, 2);
        s->alu[static_cast<size_t>(c)] = a;
        s->mul[static_cast<size_t>(c)] = m;
        if (ow != nullptr) (*ow)[static_cast<size_t>(c)] = o;
    }
    return Status::ok();
}

// Reads `channels` per-channel records for a stage; `use` is the DATA_USE field.
Status read_records(TaskContext& ctx, uint64_t base, uint32_t use, int channels, bool bs, Stage* s,
                    std::vector<uint32_t>* ow, const char* what) {
    if (use == 0) return ctx.bad_program("%s: a per-channel operand is selected but DATA_USE is 0", what);
    if (ctx.soc.arch == hw::NpuArch::kRk356x && use == bs_record::kUseAll)
        return read_rk356x_records(ctx, base, channels, bs, s, ow, what);
    const int rec = use == bs_record::kUseAlu ? bs_record::kAluOnlyBytes : bs_record::kFullBytes;
    RKNN_ASSIGN_OR_RETURN(uint8_t * p, ctx.map(base, static_cast<uint64_t>(rec) * channels, false, what));
    s->alu.resize(static_cast<size_t>(channels));
    s->mul.resize(static_cast<size_t>(channels));
    if (ow != nullptr) ow->resize(static_cast<size_t>(channels));
    for (int c = 0; c < channels; ++c) {
        const uint8_t* q = p + static_cast<size_t>(c) * rec;
        uint32_t a;
        std::memcpy(&a, q, 4);
        s->alu[static_cast<size_t>(c)] = a;
        uint16_t m = 0, o = 0;
        if (rec == bs_record::kFullBytes) {
            std::memcpy(&m, q + bs_record::kMulOffset, 2);
            std::memcpy(&o, q + bs_record::kOwOffset, 2);
        }
        s->mul[static_cast<size_t>(c)] = m;
        if (ow != nullptr) (*ow)[static_cast<size_t>(c)] = o;
    }
    return Status::ok();
}

Status decode_stage(TaskContext& ctx, bool bs, int channels, Stage* s, std::vector<uint32_t>* ow) {
    const RegisterFile& g = ctx.regs;
    const uint32_t cfg = g.exec(bs ? r::DPU_BS_CFG : r::DPU_BN_CFG);
    const uint32_t mul_cfg = g.exec(bs ? r::DPU_BS_MUL_CFG : r::DPU_BN_MUL_CFG);
    s->bypass = (bs ? f::DPU_BS_CFG_BS_BYPASS : f::DPU_BN_CFG_BN_BYPASS).get(cfg) != 0;
    if (s->bypass) return Status::ok();
    s->alu_bypass = (bs ? f::DPU_BS_CFG_BS_ALU_BYPASS : f::DPU_BN_CFG_BN_ALU_BYPASS).get(cfg) != 0;
    s->mul_bypass = (bs ? f::DPU_BS_CFG_BS_MUL_BYPASS : f::DPU_BN_CFG_BN_MUL_BYPASS).get(cfg) != 0;
    s->prelu = (bs ? f::DPU_BS_CFG_BS_MUL_PRELU : f::DPU_BN_CFG_BN_MUL_PRELU).get(cfg) != 0;
    s->relu_bypass = (bs ? f::DPU_BS_CFG_BS_RELU_BYPASS : f::DPU_BN_CFG_BN_RELU_BYPASS).get(cfg) != 0;
    s->relux = (bs ? f::DPU_BS_CFG_BS_RELUX_EN : f::DPU_BN_CFG_BN_RELUX_EN).get(cfg) != 0;
    s->alu_per_channel = (bs ? f::DPU_BS_CFG_BS_ALU_SRC : f::DPU_BN_CFG_BN_ALU_SRC).get(cfg) != 0;
    s->alu_algo = (bs ? f::DPU_BS_CFG_BS_ALU_ALGO : f::DPU_BN_CFG_BN_ALU_ALGO).get(cfg);
    s->mul_per_channel = (bs ? f::DPU_BS_MUL_CFG_BS_MUL_SRC : f::DPU_BN_MUL_CFG_BN_MUL_SRC).get(mul_cfg) != 0;
    s->shift = static_cast<int>((bs ? f::DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE : f::DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE).get(mul_cfg));
    s->shift_neg = static_cast<int>(
        g.exec(bs ? f::DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG : f::DPU_DATA_FORMAT_BN_MUL_SHIFT_VALUE_NEG));
    s->mul_reg = (bs ? f::DPU_BS_MUL_CFG_BS_MUL_OPERAND : f::DPU_BN_MUL_CFG_BN_MUL_OPERAND).get(mul_cfg);
    s->alu_reg = g.exec(bs ? r::DPU_BS_ALU_CFG : r::DPU_BN_ALU_CFG);
    s->relux_reg = g.exec(bs ? r::DPU_BS_RELUX_CMP_VALUE : r::DPU_BN_RELUX_CMP_VALUE);
    if (!s->alu_bypass && s->alu_algo > kAluSub) {
        return ctx.unsupported("DPU %s ALU algorithm %u", bs ? "BS" : "BN", s->alu_algo);
    }
    const bool needs_records = (!s->alu_bypass && s->alu_per_channel) || (!s->mul_bypass && s->mul_per_channel) ||
                               (ow != nullptr && !ow->empty());
    if (needs_records) {
        const uint32_t use = bs ? g.exec(f::DPU_RDMA_RDMA_BRDMA_CFG_BRDMA_DATA_USE)
                                : g.exec(f::DPU_RDMA_RDMA_NRDMA_CFG_NRDMA_DATA_USE);
        const uint64_t base = g.exec(bs ? r::DPU_RDMA_RDMA_BS_BASE_ADDR : r::DPU_RDMA_RDMA_BN_BASE_ADDR);
        if (!s->mul_bypass && s->mul_per_channel && use == bs_record::kUseAlu) {
            return ctx.bad_program("DPU %s: per-channel multiplier but DATA_USE reads the ALU operand only",
                                   bs ? "BS" : "BN");
        }
        RKNN_RETURN_IF_ERROR(
            read_records(ctx, base, use, channels, bs, s, ow, bs ? "DPU BRDMA operands" : "DPU NRDMA operands"));
    }
    return Status::ok();
}

Status decode_ew(TaskContext& ctx, const Dpu& dpu, Ew* e) {
    const RegisterFile& g = ctx.regs;
    const uint32_t cfg = g.exec(r::DPU_EW_CFG);
    e->bypass = f::DPU_EW_CFG_EW_BYPASS.get(cfg) != 0;
    if (e->bypass) return Status::ok();
    e->op_bypass = f::DPU_EW_CFG_EW_OP_BYPASS.get(cfg) != 0;
    e->mul = f::DPU_EW_CFG_EW_OP_TYPE.get(cfg) != 0;
    e->from_tensor = f::DPU_EW_CFG_EW_OP_SRC.get(cfg) != 0;
    e->lut_bypass = f::DPU_EW_CFG_EW_LUT_BYPASS.get(cfg) != 0;
    if (!e->lut_bypass) e->lut = read_lut_params(ctx.regs);
    e->cvt_bypass = f::DPU_EW_CFG_EW_OP_CVT_BYPASS.get(cfg) != 0;
    e->relu_bypass = f::DPU_EW_CFG_EW_RELU_BYPASS.get(cfg) != 0;
    e->relux = f::DPU_EW_CFG_EW_RELUX_EN.get(cfg) != 0;
    e->algo = f::DPU_EW_CFG_EW_ALU_ALGO.get(cfg);
    e->cvt_round = f::DPU_EW_CFG_EW_CVT_ROUND.get(cfg) ? Rounding::kHalfAway : Rounding::kHalfEven;
    e->cvt_offset = static_cast<int32_t>(g.exec(r::DPU_EW_CVT_OFFSET_VALUE));
    const uint32_t scale = g.exec(r::DPU_EW_CVT_SCALE_VALUE);
    e->cvt_scale = static_cast<int16_t>(f::DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE.get(scale));
    e->cvt_shift = static_cast<int>(f::DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT.get(scale));
    e->truncate = static_cast<int>(f::DPU_EW_CVT_SCALE_VALUE_EW_TRUNCATE.get(scale));
    e->truncate_neg = static_cast<int>(g.exec(f::DPU_DATA_FORMAT_EW_TRUNCATE_NEG));
    e->relux_reg = g.exec(r::DPU_EW_RELUX_CMP_VALUE);
    e->value_reg = g.exec(r::DPU_EW_OP_VALUE_0);
    if (!e->op_bypass && !e->mul && e->algo > kAluSub) return ctx.unsupported("DPU EW ALU algorithm %u", e->algo);
    if (is_float(dpu.proc)) {
        if (!e->cvt_bypass) return ctx.unsupported("the DPU EW converter is modelled for the integer pipeline only");
        if (!e->lut_bypass) return ctx.unsupported("the DPU LUT is modelled for the integer pipeline only");
    }
    if (e->op_bypass || !e->from_tensor) return Status::ok();

    const uint32_t erdma = g.exec(r::DPU_RDMA_RDMA_ERDMA_CFG);
    if (f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE.get(erdma)) {
        return ctx.bad_program("DPU EW reads a tensor operand but ERDMA is disabled");
    }
    const uint32_t size_code = f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_SIZE.get(erdma);
    const uint32_t mode = f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DATA_MODE.get(erdma);
    if (size_code != f::DPU_EW_CFG_EDATA_SIZE.get(cfg) || mode != f::DPU_EW_CFG_EW_DATA_MODE.get(cfg)) {
        return ctx.bad_program("DPU EW_CFG and DPU_RDMA ERDMA_CFG disagree on the operand's size or mode");
    }
    e->esize = ew_size_bytes(size_code);
    if (e->esize == 0) return ctx.unsupported("ERDMA data size code %u", size_code);
    if (mode > 1) return ctx.unsupported("ERDMA data mode %u", mode);
    e->per_channel = mode == 0;
    const uint64_t base = g.exec(r::DPU_RDMA_RDMA_EW_BASE_ADDR);
    if (e->per_channel) {
        RKNN_ASSIGN_OR_RETURN(uint8_t * p, ctx.map(base, static_cast<uint64_t>(dpu.channels) * e->esize, false,
                                                   "DPU ERDMA operand"));
        e->data = p;
        return Status::ok();
    }
    e->cube = packed_cube(base, dpu.width, dpu.height, dpu.channels, e->esize, ctx.soc.atom_bytes);
    // RK356x writes raw bytes (a one-pixel surface is 8).
    const uint64_t surf = g.exec(r::DPU_RDMA_RDMA_EW_SURF_STRIDE) & (ctx.soc.arch == hw::NpuArch::kRk356x ? ~0u : ~0xfu);
    if (surf != 0) {
        e->cube.surf_stride = surf;
    } else {
        e->cube.surf_stride += g.exec(r::DPU_RDMA_RDMA_EW_SURF_NOTCH) & ~0xfu;
    }
    RKNN_ASSIGN_OR_RETURN(uint8_t * p, map_cube(ctx, e->cube, false, "DPU ERDMA operand"));
    e->data = p;
    return Status::ok();
}

Status decode(TaskContext& ctx, const ConvOutput* conv, Dpu* d) {
    const RegisterFile& g = ctx.regs;
    const uint32_t mode = g.exec(r::DPU_FEATURE_MODE_CFG);
    const bool flying = f::DPU_FEATURE_MODE_CFG_FLYING_MODE.get(mode) != 0;
    if (flying != (conv == nullptr)) {
        return ctx.bad_program(conv ? "DPU FLYING_MODE reads memory in a convolution task"
                                    : "DPU FLYING_MODE is 0 but no convolution runs in this task");
    }
    const bool rk356x = ctx.soc.arch == hw::NpuArch::kRk356x;
    if (rk356x) {
        // The RK3568 TRM layout (docs/rk3568.md 1.2): OUTPUT_MODE [3:1], 4 to memory.
        if (flying) return ctx.unsupported("DPU-only tasks on %s are not modelled", ctx.soc.name);
        const uint32_t out_mode = hw::rk356x::field::DPU_FEATURE_MODE_CFG_OUTPUT_MODE.get(mode);
        if (out_mode != hw::rk356x::kDpuOutputToMemory)
            return ctx.unsupported("DPU OUTPUT_MODE %u on %s (only %u, write to memory, is modelled)", out_mode,
                                   ctx.soc.name, hw::rk356x::kDpuOutputToMemory);
    } else if (f::DPU_FEATURE_MODE_CFG_TP_EN.get(mode)) {
        return ctx.unsupported("DPU transpose mode (FEATURE_MODE_CFG.TP_EN, vendor layout conversions) is not modelled");
    } else if (f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE.get(mode) != 2) {
        return ctx.unsupported("DPU OUTPUT_MODE %u (only 2, write to memory, is modelled)",
                               f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE.get(mode));
    }
    const uint32_t fmt = g.exec(r::DPU_DATA_FORMAT);
    d->proc = static_cast<Precision>(f::DPU_DATA_FORMAT_PROC_PRECISION.get(fmt));
    d->in = static_cast<Precision>(f::DPU_DATA_FORMAT_IN_PRECISION.get(fmt));
    d->out = static_cast<Precision>(f::DPU_DATA_FORMAT_OUT_PRECISION.get(fmt));
    if (d->out == Precision::kInt4 || d->out == Precision::kTf32 || d->out == Precision::kBf16) {
        return ctx.unsupported("DPU output precision %s", hw::precision_name(d->out));
    }
    d->width = static_cast<int>(g.exec(f::DPU_DATA_CUBE_WIDTH_WIDTH)) + 1;
    d->height = static_cast<int>(g.exec(f::DPU_DATA_CUBE_HEIGHT_HEIGHT)) + 1;
    d->channels = static_cast<int>(g.exec(f::DPU_DATA_CUBE_CHANNEL_CHANNEL)) + 1;
    d->real_channels = std::min(d->channels, static_cast<int>(g.exec(f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL)) + 1);
    if (conv != nullptr) {
        if (conv->width != d->width || conv->height != d->height || conv->channels < d->channels) {
            return ctx.bad_program("DPU cube %dx%dx%d does not match the convolution output %dx%dx%d", d->width,
                                   d->height, d->channels, conv->width, conv->height, conv->channels);
        }
        if (conv->is_float != is_float(d->proc)) {
            return ctx.bad_program("DPU processing precision %s does not match the convolution's",
                                   hw::precision_name(d->proc));
        }
    }
    const int out_bytes = hw::precision_bytes(d->out);
    d->dst = packed_cube(g.exec(r::DPU_DST_BASE_ADDR), d->width, d->height, d->channels, out_bytes, ctx.soc.atom_bytes);
    // RK356x writes the stride as raw bytes (a one-pixel surface is 8).
    const uint64_t surf = g.exec(r::DPU_DST_SURF_STRIDE) & (rk356x ? ~0u : ~0xfu);
    if (surf != 0) d->dst.surf_stride = surf;
    const int lanes = d->dst.c2();
    if (is_float(d->proc) && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16)
        return ctx.unsupported("a float DPU output of %d channels per atom", lanes);
    if (d->dst.surfaces() > 1 && d->dst.surf_stride < d->dst.row_stride * static_cast<uint64_t>(d->height)) {
        return ctx.bad_program("DPU DST_SURF_STRIDE %llu is smaller than one surface",
                               static_cast<unsigned long long>(d->dst.surf_stride));
    }

    std::vector<uint32_t> ow;
    const uint32_t ow_cfg = g.exec(r::DPU_BS_OW_CFG);
    d->ow_enabled = !g.exec(f::DPU_BS_CFG_BS_BYPASS) && f::DPU_BS_OW_CFG_OD_BYPASS.get(ow_cfg) == 0;
    if (d->ow_enabled && (conv == nullptr || conv->is_float)) {
        return ctx.unsupported("the DPU weight-zero-point term is modelled for int8 convolutions only");
    }
    d->ow_per_channel = d->ow_enabled && f::DPU_BS_OW_CFG_OW_SRC.get(ow_cfg) != 0;
    d->ow_reg = static_cast<int16_t>(g.exec(f::DPU_BS_OW_OP_OW_OP));
    if (d->ow_per_channel) ow.resize(1);  // marks "records needed"
    RKNN_RETURN_IF_ERROR(decode_stage(ctx, true, d->channels, &d->bs, d->ow_per_channel ? &ow : nullptr));
    d->bs.ow = std::move(ow);
    RKNN_RETURN_IF_ERROR(decode_stage(ctx, false, d->channels, &d->bn, nullptr));
    RKNN_RETURN_IF_ERROR(decode_ew(ctx, *d, &d->ew));

    d->out_offset = static_cast<int32_t>(g.exec(r::DPU_OUT_CVT_OFFSET));
    d->out_scale = static_cast<int16_t>(g.exec(f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE));
    d->to_fp16 = g.exec(f::DPU_OUT_CVT_SCALE_FP32TOFP16_EN) != 0;
    d->out_shift = static_cast<int>(g.exec(f::DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT));
    if (d->out_shift > 63) return ctx.unsupported("DPU OUT_CVT_SHIFT %d", d->out_shift);
    d->out_round = g.exec(f::DPU_OUT_CVT_SHIFT_CVT_ROUND) ? Rounding::kHalfAway : Rounding::kHalfEven;

    RKNN_ASSIGN_OR_RETURN(d->dst_bytes, map_cube(ctx, d->dst, true, "DPU output"));
    return Status::ok();
}

// ---- integer pipeline

int64_t alu(uint32_t algo, int64_t x, int64_t y) {
    switch (algo) {
    case kAluMax: return x > y ? x : y;
    case kAluMin: return x < y ? x : y;
    case kAluAdd: return x + y;
    case kAluSub: return x - y;
    case kAluDiv:
        if (y == 0) return x >= 0 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
        return x / y;
    default: return x;
    }
}

int64_t multiply(int64_t x, int64_t m, int shift, int shift_neg) {
    const int64_t p = mul_wide(x, m);
    return sat32(shift_round(p, p < 0 ? shift_neg : shift));
}

// A BS/BN stage with its operands resolved per channel, for the integer
// pipeline, applied to all channels of a pixel at once (the hot path).
struct IntStage {
    bool active = false;
    bool alu_first = true;
    bool alu = false, mul = false, prelu = false, relu = false, relux = false;
    uint32_t algo = kAluAdd;
    int shift = 0, shift_neg = 0;
    int64_t relux_value = 0;
    std::vector<int64_t> alu_op, mul_op;
};

IntStage resolve_int_stage(const Stage& s, bool alu_first, int channels) {
    IntStage r;
    r.active = !s.bypass;
    if (!r.active) return r;
    r.alu_first = alu_first;
    r.alu = !s.alu_bypass;
    r.mul = !s.mul_bypass;
    r.prelu = s.prelu;
    r.relu = !s.relu_bypass;
    r.relux = s.relux;
    r.algo = s.alu_algo;
    r.shift = s.shift;
    r.shift_neg = s.shift_neg;
    r.relux_value = static_cast<int32_t>(s.relux_reg);
    r.alu_op.resize(static_cast<size_t>(channels));
    r.mul_op.resize(static_cast<size_t>(channels));
    // Records were read only for the operands a stage really uses.
    const bool alu_records = s.alu_per_channel && s.alu.size() >= static_cast<size_t>(channels);
    const bool mul_records = s.mul_per_channel && s.mul.size() >= static_cast<size_t>(channels);
    for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
        r.alu_op[c] = static_cast<int32_t>(alu_records ? s.alu[c] : s.alu_reg);
        r.mul_op[c] = static_cast<int16_t>(mul_records ? s.mul[c] : s.mul_reg);
    }
    return r;
}

// Values entering a stage are below 2^47 in magnitude (an int32 accumulator
// plus the 16x32-bit weight-zero-point term, or a saturated earlier stage),
// so products with 16-bit multipliers fit in int64.
RKNN_HOT_LOOP void apply_int_alu(const IntStage& s, int64_t* x, int n) {
    const int64_t* op = s.alu_op.data();
    switch (s.algo) {
    case kAluAdd: for (int c = 0; c < n; ++c) x[c] = sat32(x[c] + op[c]); break;
    case kAluSub: for (int c = 0; c < n; ++c) x[c] = sat32(x[c] - op[c]); break;
    case kAluMax: for (int c = 0; c < n; ++c) x[c] = sat32(std::max(x[c], op[c])); break;
    case kAluMin: for (int c = 0; c < n; ++c) x[c] = sat32(std::min(x[c], op[c])); break;
    default: for (int c = 0; c < n; ++c) x[c] = sat32(alu(s.algo, x[c], op[c])); break;
    }
}

// Rounds x * m / 2^shift half to even and saturates to int32, in double
// arithmetic (which vectorises where 64-bit integer shifts do not): exact
// for |x| < 2^31 and 16-bit m, as the product then has at most 47 bits and
// scaling by a power of two and nearbyint (round to nearest even) are exact.
// nearbyint follows the FPU rounding mode: the emulator, like the rest of the
// runtime, expects the default (to nearest) that programs run with.
// (The int32 casts let AVX2 convert; its int64 <-> double conversions are
// AVX-512 only.)
inline int64_t requant_int32(int64_t x, int64_t m, double scale) {
    const double r = std::nearbyint(static_cast<double>(static_cast<int32_t>(x)) *
                                    static_cast<double>(static_cast<int32_t>(m)) * scale);
    return static_cast<int32_t>(std::min(2147483647.0, std::max(-2147483648.0, r)));
}

// `int32_in`: every x is already within int32 (an ALU step saturated it).
RKNN_HOT_LOOP void apply_int_mul(const IntStage& s, int64_t* x, int n, bool int32_in) {
    const int64_t* m = s.mul_op.data();
    if (!s.prelu && s.shift == s.shift_neg && s.shift >= 1 && s.shift <= 62) {  // the common requantisation
        if (int32_in) {
            const double scale = std::ldexp(1.0, -s.shift);
            for (int c = 0; c < n; ++c) x[c] = requant_int32(x[c], m[c], scale);
            return;
        }
        for (int c = 0; c < n; ++c) x[c] = sat32(shift_round_even(x[c] * m[c], s.shift));
        return;
    }
    for (int c = 0; c < n; ++c) {
        if (s.prelu && x[c] >= 0) continue;
        const int64_t p = x[c] * m[c];
        x[c] = sat32(shift_round(p, p < 0 ? s.shift_neg : s.shift));
    }
}

RKNN_HOT_LOOP void apply_int_stage(const IntStage& s, int64_t* x, int n) {
    if (!s.active) return;
    if (s.alu_first) {
        if (s.alu) apply_int_alu(s, x, n);
        if (s.mul) apply_int_mul(s, x, n, s.alu);
    } else {
        if (s.mul) apply_int_mul(s, x, n, false);
        if (s.alu) apply_int_alu(s, x, n);
    }
    if (s.relu) {
        for (int c = 0; c < n; ++c) x[c] = std::max<int64_t>(x[c], 0);
    }
    if (s.relux) {
        for (int c = 0; c < n; ++c) x[c] = std::min(x[c], s.relux_value);
    }
}

int64_t read_int(const uint8_t* p, int esize) {
    switch (esize) {
    case 1: return static_cast<int8_t>(*p);
    case 2: {
        int16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    default: {
        int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    }
}

float read_float(const uint8_t* p, int esize) {
    if (esize == 2) {
        uint16_t h;
        std::memcpy(&h, p, 2);
        return half_to_float(h);
    }
    float v;
    std::memcpy(&v, p, 4);
    return v;
}

const uint8_t* ew_operand(const Ew& e, int c, int y, int x) {
    if (e.per_channel) return e.data + static_cast<size_t>(c) * e.esize;
    return e.data + e.cube.offset(c, y, x);
}

// The EW operand of channel c at (y, x), through the EW converter.
int64_t ew_operand_int(const Ew& e, int c, int y, int x) {
    int64_t op = e.from_tensor ? read_int(ew_operand(e, c, y, x), e.esize) : static_cast<int32_t>(e.value_reg);
    if (!e.cvt_bypass) op = shift_round(mul_wide(op + e.cvt_offset, e.cvt_scale), e.cvt_shift, e.cvt_round);
    return op;
}

int64_t run_ew_int(const Ew& e, const TaskContext& ctx, int c, int y, int x, int64_t v) {
    if (e.bypass) return v;
    if (!e.op_bypass) {
        const int64_t op = ew_operand_int(e, c, y, x);
        v = e.mul ? multiply(v, op, e.truncate, e.truncate_neg) : sat32(alu(e.algo, v, op));
    }
    if (!e.lut_bypass) v = ctx.lut.evaluate(e.lut, v);
    if (!e.relu_bypass && v < 0) v = 0;
    if (e.relux) v = std::min<int64_t>(v, static_cast<int32_t>(e.relux_reg));
    return v;
}

// ---- float pipeline

float as_float(uint32_t bits) { return bits_float(bits); }

// ---- output

void store_int(const Dpu& d, uint8_t* p, int64_t v) {
    switch (d.out) {
    case Precision::kInt8: *p = static_cast<uint8_t>(static_cast<int8_t>(saturate(v, -128, 127))); break;
    case Precision::kInt16: {
        const auto s = static_cast<int16_t>(saturate(v, -32768, 32767));
        std::memcpy(p, &s, 2);
        break;
    }
    case Precision::kInt32: {
        const auto s = static_cast<int32_t>(sat32(v));
        std::memcpy(p, &s, 4);
        break;
    }
    case Precision::kFp16: {
        const uint16_t h = float_to_half(static_cast<float>(v));
        std::memcpy(p, &h, 2);
        break;
    }
    default: {
        const auto fv = static_cast<float>(v);
        std::memcpy(p, &fv, 4);
        break;
    }
    }
}

void store_float(const Dpu& d, uint8_t* p, float v) {
    switch (d.out) {
    case Precision::kFp16: {
        const uint16_t h = float_to_half(v);
        std::memcpy(p, &h, 2);
        break;
    }
    case Precision::kFp32: {
        if (d.to_fp16) v = half_to_float(float_to_half(v));
        std::memcpy(p, &v, 4);
        break;
    }
    default: {  // an integer output from the float pipeline: round to nearest even
        const double r = std::nearbyint(static_cast<double>(v));
        store_int(d, p, std::isfinite(r) ? static_cast<int64_t>(std::max(-9.2e18, std::min(9.2e18, r))) : 0);
        break;
    }
    }
}

struct Source {
    const ConvOutput* conv = nullptr;
    // Flying mode: the MRDMA cube.
    const uint8_t* data = nullptr;
    CubeLayout cube;
    bool is_float_in = false;
};

Status decode_source(TaskContext& ctx, const Dpu& d, const ConvOutput* conv, Source* s) {
    s->conv = conv;
    if (conv != nullptr) return Status::ok();
    const RegisterFile& g = ctx.regs;
    const uint32_t mode = g.exec(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG);
    if (!f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE.get(mode) ||
        f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE.get(mode)) {
        return ctx.bad_program("a DPU-only task needs DPU_RDMA FLYING_MODE with MRDMA enabled");
    }
    const auto in = static_cast<Precision>(f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_IN_PRECISION.get(mode));
    if (in != Precision::kInt8 && in != Precision::kInt16 && in != Precision::kFp16) {
        return ctx.unsupported("DPU_RDMA input precision %s", hw::precision_name(in));
    }
    s->is_float_in = in == Precision::kFp16;
    if (s->is_float_in != is_float(d.proc)) {
        return ctx.bad_program("DPU_RDMA input precision %s does not suit DPU processing precision %s",
                               hw::precision_name(in), hw::precision_name(d.proc));
    }
    const int w = static_cast<int>(g.exec(f::DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH)) + 1;
    const int h = static_cast<int>(g.exec(f::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT)) + 1;
    const int c = static_cast<int>(g.exec(f::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL)) + 1;
    if (w != d.width || h != d.height || c != d.channels) {
        return ctx.bad_program("DPU_RDMA cube %dx%dx%d differs from the DPU cube %dx%dx%d", w, h, c, d.width,
                               d.height, d.channels);
    }
    s->cube = packed_cube(g.exec(r::DPU_RDMA_RDMA_SRC_BASE_ADDR), w, h, c, hw::precision_bytes(in));
    s->cube.surf_stride += g.exec(r::DPU_RDMA_RDMA_SURF_NOTCH) & ~0xfu;
    RKNN_ASSIGN_OR_RETURN(uint8_t * p, map_cube(ctx, s->cube, false, "DPU_RDMA input"));
    s->data = p;
    return Status::ok();
}

}  // namespace

bool dpu_wants_window_sum(const RegisterFile& regs) {
    return !regs.exec(f::DPU_BS_CFG_BS_BYPASS) && regs.exec(f::DPU_BS_OW_CFG_OD_BYPASS) == 0;
}

namespace {

// Byte offset of each channel in an atom-packed pixel (its surface and lane):
// offset(c, y, x) = offset(c, 0, 0) + y * row_stride + x * atom_bytes.
std::vector<uint64_t> channel_offsets(const CubeLayout& cube, int channels) {
    std::vector<uint64_t> offsets(static_cast<size_t>(channels));
    for (int c = 0; c < channels; ++c) offsets[static_cast<size_t>(c)] = cube.offset(c, 0, 0);
    return offsets;
}

// The EW operation of `count` values with their operands.
inline void ew_op_float(const Ew& e, const float* o, float* v, size_t count) {
    if (e.mul) {
        for (size_t i = 0; i < count; ++i) v[i] *= o[i];
        return;
    }
    switch (e.algo) {
    case kAluMax: for (size_t i = 0; i < count; ++i) v[i] = std::max(v[i], o[i]); break;
    case kAluMin: for (size_t i = 0; i < count; ++i) v[i] = std::min(v[i], o[i]); break;
    case kAluAdd: for (size_t i = 0; i < count; ++i) v[i] += o[i]; break;
    case kAluSub: for (size_t i = 0; i < count; ++i) v[i] -= o[i]; break;
    case kAluDiv: for (size_t i = 0; i < count; ++i) v[i] /= o[i]; break;
    default: break;
    }
}

// The float pipeline a row of one surface of the output at a time (kLanes
// channels: n pixels x kLanes lanes, with per-lane operands), the register
// decoding and branching hoisted out of the loops. Each value, in fp32:
// BS (ALU then MUL), BN (MUL then ALU), each then ReLU and ReLUX; EW (its
// operand, then ReLU and ReLUX); OUT_CVT scale, shift and offset; stored.
// MUL operands are fp16, ALU operands fp32; PReLU multiplies negatives only.
// Loads and stores of fp16 cubes whose atoms hold kLanes channels are
// contiguous.
template <int kLanes>
struct LaneBlock {
    int n = 0;
    float* v = nullptr;  // [x][lane]

    template <typename Op>
    void each(const float* k, Op op) {
        for (int x = 0; x < n; ++x) {
            float* p = v + static_cast<size_t>(x) * kLanes;
            for (int l = 0; l < kLanes; ++l) p[l] = op(p[l], k[l]);
        }
    }
};

template <int kLanes>
__attribute__((always_inline)) inline void alu_block_float(uint32_t algo, const float* k, LaneBlock<kLanes>* b) {
    switch (algo) {
    case kAluMax: b->each(k, [](float x, float o) { return std::max(x, o); }); break;
    case kAluMin: b->each(k, [](float x, float o) { return std::min(x, o); }); break;
    case kAluAdd: b->each(k, [](float x, float o) { return x + o; }); break;
    case kAluSub: b->each(k, [](float x, float o) { return x - o; }); break;
    case kAluDiv: b->each(k, [](float x, float o) { return x / o; }); break;
    default: break;
    }
}

template <int kLanes>
__attribute__((always_inline)) inline void clamp_block_float(bool relu, bool relux, uint32_t relux_reg, LaneBlock<kLanes>* b) {
    const size_t count = static_cast<size_t>(b->n) * kLanes;
    if (relu) {
        for (size_t i = 0; i < count; ++i) b->v[i] = b->v[i] < 0.0f ? 0.0f : b->v[i];
    }
    if (relux) {
        const float hi = as_float(relux_reg);
        for (size_t i = 0; i < count; ++i) b->v[i] = std::min(b->v[i], hi);
    }
}

// The operands of channels [c0, c0 + kLanes) (lanes beyond `channels` get 0).
template <int kLanes>
__attribute__((always_inline)) inline void lane_operands(const std::vector<uint32_t>& per_channel, bool use_per_channel, uint32_t reg, bool half, int c0,
                   int channels, float* k) {
    for (int l = 0; l < kLanes; ++l) {
        const int c = c0 + l;
        const uint32_t bits = !use_per_channel ? reg : (c < channels ? per_channel[static_cast<size_t>(c)] : 0u);
        k[l] = half ? half_to_float(static_cast<uint16_t>(bits)) : as_float(bits);
    }
}

template <int kLanes>
__attribute__((always_inline)) inline void stage_block_float(const Stage& s, bool alu_first, int c0, int channels, LaneBlock<kLanes>* b) {
    if (s.bypass) return;
    float alu[kLanes], mul[kLanes];
    lane_operands<kLanes>(s.alu, s.alu_per_channel, s.alu_reg, false, c0, channels, alu);
    lane_operands<kLanes>(s.mul, s.mul_per_channel, s.mul_reg, true, c0, channels, mul);
    auto do_alu = [&]() {
        if (!s.alu_bypass) alu_block_float<kLanes>(s.alu_algo, alu, b);
    };
    auto do_mul = [&]() {
        if (s.mul_bypass) return;
        if (s.prelu) {
            b->each(mul, [](float x, float m) { return x >= 0.0f ? x : x * m; });
        } else {
            b->each(mul, [](float x, float m) { return x * m; });
        }
    };
    if (alu_first) {
        do_alu();
        do_mul();
    } else {
        do_mul();
        do_alu();
    }
    clamp_block_float<kLanes>(!s.relu_bypass, s.relux, s.relux_reg, b);
}

// Lanes [0, lanes) of a block from a cube, one channel's offset each; fp16
// atoms that hold exactly kLanes channels are read as one contiguous row.
template <int kLanes>
__attribute__((always_inline)) inline void load_block_float(const uint8_t* base, const CubeLayout& cube, const std::vector<uint64_t>& channel_at, int c0,
                      int lanes, uint64_t row_at, LaneBlock<kLanes>* b) {
    if (cube.elem_bytes == 2 && cube.c2() == kLanes && lanes == kLanes) {
        halves_to_floats(base + channel_at[static_cast<size_t>(c0)] + row_at, b->v, static_cast<size_t>(b->n) * kLanes);
        return;
    }
    for (int l = 0; l < kLanes; ++l) {
        if (l >= lanes) {
            for (int x = 0; x < b->n; ++x) b->v[static_cast<size_t>(x) * kLanes + l] = 0.0f;
            continue;
        }
        const uint8_t* p = base + channel_at[static_cast<size_t>(c0 + l)] + row_at;
        for (int x = 0; x < b->n; ++x)
            b->v[static_cast<size_t>(x) * kLanes + l] = read_float(p + static_cast<uint64_t>(x) * cube.atom_bytes, cube.elem_bytes);
    }
}

// The float pipeline over output rows [y0, y1), a surface row at a time.
// Inlined into each lane count's entry point, which has an AVX2 clone
// (RKNN_HOT_LOOP): the fp16 conversions vectorise there.
template <int kLanes>
__attribute__((always_inline)) inline void run_float_blocks(const Dpu& d, const Source& src, const ConvOutput* conv, const std::vector<uint64_t>& src_c,
                      const std::vector<uint64_t>& dst_c, const std::vector<uint64_t>& ew_c, int y0, int y1,
                      int c_begin, int c_end) {
    const bool ew_tensor = !d.ew.bypass && !d.ew.op_bypass && d.ew.from_tensor;
    const int n = d.width;
    std::vector<float> values(static_cast<size_t>(n) * kLanes), operands(static_cast<size_t>(n) * kLanes);
    LaneBlock<kLanes> b{n, values.data()};
    LaneBlock<kLanes> ops{n, operands.data()};
    const bool fp16_out = d.out == Precision::kFp16 && d.dst.c2() == kLanes;
    for (int y = y0; y < y1; ++y) {
        const uint64_t src_at = static_cast<uint64_t>(y) * src.cube.row_stride;
        const uint64_t dst_at = static_cast<uint64_t>(y) * d.dst.row_stride;
        const uint64_t ew_at = static_cast<uint64_t>(y) * d.ew.cube.row_stride;
        for (int c0 = c_begin; c0 < c_end; c0 += kLanes) {
            const int lanes = std::min(kLanes, d.channels - c0);
            if (conv != nullptr) {
                const float* acc = conv->facc.data() + static_cast<size_t>(y) * n * conv->channels + c0;
                if (lanes == kLanes) {  // a fixed-size copy per pixel
                    for (int x = 0; x < n; ++x)
                        std::memcpy(b.v + static_cast<size_t>(x) * kLanes, acc + static_cast<size_t>(x) * conv->channels,
                                    kLanes * sizeof(float));
                } else {
                    for (int x = 0; x < n; ++x)
                        for (int l = 0; l < kLanes; ++l)
                            b.v[static_cast<size_t>(x) * kLanes + l] =
                                l < lanes ? acc[static_cast<size_t>(x) * conv->channels + static_cast<size_t>(l)] : 0.0f;
                }
            } else {
                load_block_float<kLanes>(src.data, src.cube, src_c, c0, lanes, src_at, &b);
            }
            stage_block_float<kLanes>(d.bs, true, c0, d.channels, &b);
            stage_block_float<kLanes>(d.bn, false, c0, d.channels, &b);
            if (!d.ew.bypass) {
                if (!d.ew.op_bypass) {
                    float k[kLanes];
                    if (ew_tensor && !d.ew.per_channel) {
                        load_block_float<kLanes>(d.ew.data, d.ew.cube, ew_c, c0, lanes, ew_at, &ops);
                    } else {
                        for (int l = 0; l < kLanes; ++l) {
                            const size_t c = static_cast<size_t>(std::min(c0 + l, d.channels - 1));
                            k[l] = ew_tensor ? read_float(d.ew.data + c * static_cast<size_t>(d.ew.esize), d.ew.esize)
                                             : as_float(d.ew.value_reg);
                        }
                        for (int x = 0; x < n; ++x) std::copy(k, k + kLanes, ops.v + static_cast<size_t>(x) * kLanes);
                    }
                    ew_op_float(d.ew, ops.v, b.v, static_cast<size_t>(n) * kLanes);
                }
                clamp_block_float<kLanes>(!d.ew.relu_bypass, d.ew.relux, d.ew.relux_reg, &b);
            }
            const auto scale = static_cast<float>(d.out_scale);
            const auto offset = static_cast<float>(d.out_offset);
            const size_t count = static_cast<size_t>(n) * kLanes;
            if (d.out_shift == 0) {  // one vector pass (fp16 outputs: x 1 + 0, which also turns -0 into +0)
                for (size_t i = 0; i < count; ++i) b.v[i] = b.v[i] * scale + offset;
            } else {
                for (size_t i = 0; i < count; ++i) b.v[i] = std::ldexp(b.v[i] * scale, -d.out_shift) + offset;
            }
            for (int l = 0; l < kLanes; ++l) {
                if (c0 + l < d.real_channels) continue;
                for (int x = 0; x < n; ++x) b.v[static_cast<size_t>(x) * kLanes + l] = 0.0f;
            }
            if (fp16_out && lanes == kLanes) {
                floats_to_halves(b.v, d.dst_bytes + dst_c[static_cast<size_t>(c0)] + dst_at, count);
                continue;
            }
            for (int l = 0; l < lanes; ++l) {
                uint8_t* out = d.dst_bytes + dst_c[static_cast<size_t>(c0 + l)] + dst_at;
                for (int x = 0; x < n; ++x)
                    store_float(d, out + static_cast<uint64_t>(x) * d.dst.atom_bytes, b.v[static_cast<size_t>(x) * kLanes + l]);
            }
        }
    }
}

#define RKNN_FLOAT_BLOCKS(kLanes)                                                                                 \
    RKNN_HOT_LOOP_WIDE void run_float_blocks_##kLanes(const Dpu& d, const Source& src, const ConvOutput* conv,             \
                                                 const std::vector<uint64_t>& src_c, const std::vector<uint64_t>& dst_c, \
                                                 const std::vector<uint64_t>& ew_c, int y0, int y1, int c_begin,        \
                                                 int c_end) {                                                           \
        run_float_blocks<kLanes>(d, src, conv, src_c, dst_c, ew_c, y0, y1, c_begin, c_end);                           \
    }
RKNN_FLOAT_BLOCKS(2)
RKNN_FLOAT_BLOCKS(4)
RKNN_FLOAT_BLOCKS(8)
RKNN_FLOAT_BLOCKS(16)
#undef RKNN_FLOAT_BLOCKS

// Where each channel of the source, the output and the EW operand starts.
struct FloatOffsets {
    std::vector<uint64_t> src, dst, ew;
};

void plan_float_offsets(const Dpu& d, const Source& src, const ConvOutput* conv, FloatOffsets* o) {
    o->src = conv ? std::vector<uint64_t>() : channel_offsets(src.cube, d.channels);
    o->dst = channel_offsets(d.dst, d.channels);
    const bool ew_tensor = !d.ew.bypass && !d.ew.op_bypass && d.ew.from_tensor && !d.ew.per_channel;
    o->ew = ew_tensor ? channel_offsets(d.ew.cube, d.channels) : std::vector<uint64_t>();
}

// Rows [y0, y1) of the float pipeline, channels [c_begin, c_end) (whole
// output atoms; all of them by default).
void float_rows(const Dpu& d, const Source& src, const ConvOutput* conv, const FloatOffsets& o, int y0, int y1,
                int c_begin = 0, int c_end = -1) {
    if (c_end < 0) c_end = d.channels;
    switch (d.dst.c2()) {
    case 2: run_float_blocks_2(d, src, conv, o.src, o.dst, o.ew, y0, y1, c_begin, c_end); break;
    case 4: run_float_blocks_4(d, src, conv, o.src, o.dst, o.ew, y0, y1, c_begin, c_end); break;
    case 8: run_float_blocks_8(d, src, conv, o.src, o.dst, o.ew, y0, y1, c_begin, c_end); break;
    case 16: run_float_blocks_16(d, src, conv, o.src, o.dst, o.ew, y0, y1, c_begin, c_end); break;
    default: break;  // decode() refuses other atom widths for the float pipeline
    }
}

// Rows are independent, and so are the atoms of a row: large cubes share
// them out over the host's threads, by surfaces where there are enough
// (PP-OCRv4 rec about 3% faster than by rows), else by rows, a cube of few
// rows (a convolution tile of one or two) cut into atom groups too, or one
// thread would take most of it.
void run_float_pipeline(const Dpu& d, const Source& src, const ConvOutput* conv) {
    FloatOffsets o;
    plan_float_offsets(d, src, conv, &o);
    const int64_t elements = static_cast<int64_t>(d.width) * d.height * d.channels;
    const int threads = host_threads();
    if (elements < kParallelElements || threads == 1) {
        float_rows(d, src, conv, o, 0, d.height);
        return;
    }
    const int c2 = d.dst.c2();
    const int atoms = (d.channels + c2 - 1) / c2;
    // Enough atoms to share out: each item a surface, all its rows (the
    // source, operand and output cubes then stream through memory in order;
    // a row of every surface jumps a surface stride at each atom).
    if (atoms >= 2 * threads) {
        parallel_for(atoms, 1, [&](int64_t a0, int64_t a1) {
            for (int64_t a = a0; a < a1; ++a)
                float_rows(d, src, conv, o, 0, d.height, static_cast<int>(a) * c2,
                           std::min(d.channels, static_cast<int>(a + 1) * c2));
        });
        return;
    }
    const int groups = std::min(atoms, (4 * threads + d.height - 1) / d.height);
    if (groups <= 1) {
        parallel_for(d.height, 1, [&](int64_t y0, int64_t y1) {
            float_rows(d, src, conv, o, static_cast<int>(y0), static_cast<int>(y1));
        });
        return;
    }
    const int per_group = (atoms + groups - 1) / groups;
    parallel_for(static_cast<int64_t>(d.height) * groups, 1, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
            const int y = static_cast<int>(i / groups), g = static_cast<int>(i % groups);
            const int c_begin = g * per_group * c2;
            const int c_end = std::min(d.channels, (g + 1) * per_group * c2);
            if (c_begin < c_end) float_rows(d, src, conv, o, y, y + 1, c_begin, c_end);
        }
    });
}

// The integer pipeline over output rows [y0, y1), one pixel's channels at a time.
RKNN_HOT_LOOP void run_int_rows(const TaskContext& ctx, const Dpu& d, const Source& src, const ConvOutput* conv,
                                const IntStage& bs, const IntStage& bn, const std::vector<int64_t>& ow, int y0, int y1) {
    const int n = d.channels;
    std::vector<int64_t> v(static_cast<size_t>(n));
    std::vector<int8_t> codes(static_cast<size_t>(n));  // int8 output of one pixel
    const int out_bytes = d.dst.elem_bytes;
    const int out_c2 = d.dst.c2();
    // Common shapes of the pipeline get straight loops: an EW stage that is
    // only a ReLU, and int8 output rounded half to even.
    const bool ew_relu_only = !d.ew.bypass && d.ew.op_bypass && d.ew.lut_bypass && !d.ew.relu_bypass;
    const bool int8_fast = d.out == Precision::kInt8 && d.out_round == Rounding::kHalfEven && d.out_shift <= 62;
    // BS saturates to int32 when it adds or multiplies, and BN, a ReLU-only
    // EW stage and a bypassed one keep values there: OUT_CVT may then take
    // the double path (requant_int32; its 16-bit scale keeps it exact, and
    // clamping to int32 before adding a small offset cannot change an int8).
    const bool int32_values = bs.active && (bs.alu || bs.mul) && (d.ew.bypass || ew_relu_only) &&
                              d.out_offset >= -(int64_t{1} << 24) && d.out_offset <= (int64_t{1} << 24);
    for (int y = y0; y < y1; ++y) {
        for (int x = 0; x < d.width; ++x) {
            const size_t pixel = static_cast<size_t>(y) * d.width + x;
            if (conv != nullptr) {
                const int32_t* acc = conv->acc.data() + pixel * conv->channels;
                for (int c = 0; c < n; ++c) v[static_cast<size_t>(c)] = acc[c];
                if (d.ow_enabled) {
                    const int32_t* sum = conv->window_sum.data() + (conv->window_sum_per_channel ? pixel * conv->channels : pixel);
                    for (int c = 0; c < n; ++c) v[static_cast<size_t>(c)] += ow[static_cast<size_t>(c)] * sum[conv->window_sum_per_channel ? c : 0];
                }
            } else {
                for (int c = 0; c < n; ++c)
                    v[static_cast<size_t>(c)] = read_int(src.data + src.cube.offset(c, y, x), src.cube.elem_bytes);
            }
            apply_int_stage(bs, v.data(), n);
            apply_int_stage(bn, v.data(), n);
            if (ew_relu_only) {
                for (int c = 0; c < n; ++c) v[static_cast<size_t>(c)] = std::max<int64_t>(v[static_cast<size_t>(c)], 0);
                if (d.ew.relux) {
                    const int64_t cap = static_cast<int32_t>(d.ew.relux_reg);
                    for (int c = 0; c < n; ++c) v[static_cast<size_t>(c)] = std::min(v[static_cast<size_t>(c)], cap);
                }
            } else if (!d.ew.bypass) {
                for (int c = 0; c < n; ++c) v[static_cast<size_t>(c)] = run_ew_int(d.ew, ctx, c, y, x, v[static_cast<size_t>(c)]);
            }
            uint8_t* out = d.dst_bytes + d.dst.offset(0, y, x);
            if (int8_fast) {
                // All channels at once (vectorisable), then one copy per atom.
                const int64_t* vv = v.data();
                const int64_t scale = d.out_scale, offset = d.out_offset;
                if (d.out_shift != 0 && int32_values) {
                    const double unit = std::ldexp(1.0, -d.out_shift);
                    for (int c = 0; c < n; ++c)
                        codes[static_cast<size_t>(c)] =
                            static_cast<int8_t>(saturate(requant_int32(vv[c], scale, unit) + offset, -128, 127));
                } else if (d.out_shift != 0) {
                    for (int c = 0; c < n; ++c)
                        codes[static_cast<size_t>(c)] = static_cast<int8_t>(
                            saturate(shift_round_even(vv[c] * scale, d.out_shift) + offset, -128, 127));
                } else {
                    for (int c = 0; c < n; ++c)
                        codes[static_cast<size_t>(c)] = static_cast<int8_t>(saturate(vv[c] * scale + offset, -128, 127));
                }
                for (int c = std::max(0, d.real_channels); c < n; ++c) codes[static_cast<size_t>(c)] = 0;
                uint8_t* atom = out;
                for (int c0 = 0; c0 < n; c0 += out_c2, atom += d.dst.surf_stride)
                    std::memcpy(atom, codes.data() + c0, static_cast<size_t>(std::min(out_c2, n - c0)));
                continue;
            }
            for (int c = 0; c < n; ++c) {
                const int64_t r = shift_round(v[static_cast<size_t>(c)] * d.out_scale, d.out_shift, d.out_round) + d.out_offset;
                store_int(d, out + static_cast<uint64_t>(c / out_c2) * d.dst.surf_stride +
                                 static_cast<uint64_t>(c % out_c2) * out_bytes, c < d.real_channels ? r : 0);
            }
        }
    }
}

// ReLU then ReLUX after a step whose results lie in [*lo, *hi]: the range
// they map to (each is monotone, so the composition is again one clamp).
void fold_relu(bool relu, bool relux, int64_t cap, double* lo, double* hi) {
    if (relu) {
        *lo = std::max(*lo, 0.0);
        *hi = std::max(*hi, 0.0);
    }
    if (relux) {
        *lo = std::min(*lo, static_cast<double>(cap));
        *hi = std::min(*hi, static_cast<double>(cap));
    }
}

bool shift_in_range(int shift) { return shift >= 0 && shift <= 62; }

// Below this magnitude an EW multiplier keeps x * op (|x| < 2^31) within
// the 2^47 that the fused pass's doubles take exactly.
constexpr int64_t kMaxFoldedEwMultiplier = int64_t{1} << 16;

// An EW multiply by one operand per channel (a per-channel tensor, or the
// register value) right after a BS stage that only adds: the multiply is then
// the plan's BS multiplier, op / 2^truncate, since nothing clamps between
// the two. The operands are read now, through the EW converter. False when
// the task is not of that form or an operand is too large for the pass.
bool ew_multiplier_as_bs_scale(const Dpu& d, std::vector<double>* scale) {
    const Stage& bs = d.bs;
    const Ew& e = d.ew;
    if (e.bypass || e.op_bypass || !e.mul || (e.from_tensor && !e.per_channel) || !e.lut_bypass) return false;
    if (!bs.bypass && (!bs.mul_bypass || !bs.relu_bypass || bs.relux)) return false;
    if (!d.bn.bypass || e.truncate != e.truncate_neg || !shift_in_range(e.truncate)) return false;
    const double unit = std::ldexp(1.0, -e.truncate);
    for (size_t c = 0; c < scale->size() && c < static_cast<size_t>(d.channels); ++c) {
        const int64_t op = ew_operand_int(e, static_cast<int>(c), 0, 0);
        if (op <= -kMaxFoldedEwMultiplier || op >= kMaxFoldedEwMultiplier) return false;
        (*scale)[c] = static_cast<double>(op) * unit;
    }
    return true;
}

// The plan of the fused pass (kernels/dpu_requant.h) when the task has its
// shape: int8 convolution accumulators without the weight-zero-point term, or
// an int8 cube read in flying mode; BS with an added bias and a plain
// multiplier, BN that only clamps, EW that clamps, adds an int8 cube or
// multiplies by a per-channel operand (ew_multiplier_as_bs_scale), int8
// output rounded half to even.
bool plan_fused_requant(const Dpu& d, const Source& src, std::shared_ptr<const DpuRequantPlan>* plan) {
    plan->reset();  // an earlier task's plan, let go before folded_once looks for its scratch
    if (!fused_passes.load(std::memory_order_relaxed)) return false;
    const ConvOutput* conv = src.conv;
    if (conv != nullptr ? conv->is_float : (src.is_float_in || src.cube.elem_bytes != 1)) return false;
    if (d.ow_enabled) return false;
    if (d.out != Precision::kInt8 || d.out_round != Rounding::kHalfEven || !shift_in_range(d.out_shift)) return false;
    if (d.dst.elem_bytes != 1 || d.channels > kMaxDpuRequantChannels) return false;
    const Stage& bs = d.bs;
    const bool bs_alu = !bs.bypass && !bs.alu_bypass, bs_mul = !bs.bypass && !bs.mul_bypass;
    if (bs_alu && bs.alu_algo != kAluAdd && bs.alu_algo != kAluSub) return false;
    if (bs_mul && (bs.prelu || bs.shift != bs.shift_neg || !shift_in_range(bs.shift))) return false;
    // BN may clamp: ReLU, ReLUX and an ALU max / min with one operand (a clip).
    const Stage& bn = d.bn;
    const bool bn_clip = !bn.bypass && !bn.alu_bypass;
    if (!bn.bypass && !bn.mul_bypass) return false;
    if (bn_clip && (bn.alu_per_channel || (bn.alu_algo != kAluMax && bn.alu_algo != kAluMin))) return false;
    const Ew& e = d.ew;
    const bool ew_op = !e.bypass && !e.op_bypass;
    const bool ew_mul = ew_op && e.mul;
    const bool ew_add = ew_op && !e.mul;
    const bool ew_lut = !e.bypass && !e.lut_bypass;
    if (ew_lut && ew_op) return false;
    if (ew_add && (!e.from_tensor || e.per_channel || e.esize != 1 || e.algo != kAluAdd || e.cube.elem_bytes != 1))
        return false;
    if (ew_add && !e.cvt_bypass && (e.cvt_round != Rounding::kHalfEven || !shift_in_range(e.cvt_shift))) return false;

    const int n = d.channels;
    const size_t padded = static_cast<size_t>((n + 3) & ~3);
    thread_local DpuRequantPlan candidate;  // keeps its vectors' storage from task to task
    DpuRequantPlan* p = &candidate;
    p->channels = n;
    p->int8_source = conv == nullptr;
    p->real_channels = std::max(0, std::min(n, d.real_channels));
    p->acc_stride = conv != nullptr ? conv->channels : n;
    p->bs_alu = bs_alu;
    p->bs_mul = bs_mul || ew_mul;
    p->bias.assign(bs_alu ? padded : 0, 0.0);
    p->scale.assign(p->bs_mul ? padded : 0, 0.0);
    if (ew_mul && !ew_multiplier_as_bs_scale(d, &p->scale)) return false;
    const double unit = std::ldexp(1.0, -bs.shift);  // exact: scaling by a power of two
    for (size_t c = 0; c < static_cast<size_t>(n); ++c) {
        if (bs_alu) {
            const double op = static_cast<int32_t>(bs.alu_per_channel ? bs.alu[c] : bs.alu_reg);
            p->bias[c] = bs.alu_algo == kAluSub ? -op : op;
        }
        if (bs_mul) p->scale[c] = static_cast<int16_t>(bs.mul_per_channel ? bs.mul[c] : bs.mul_reg) * unit;
    }
    p->bs_lo = -2147483648.0;
    p->bs_hi = 2147483647.0;
    if (!bs.bypass) fold_relu(!bs.relu_bypass, bs.relux, static_cast<int32_t>(bs.relux_reg), &p->bs_lo, &p->bs_hi);
    if (bn_clip) {
        const double op = static_cast<int32_t>(bn.alu_reg);
        const auto& pick = [&](double v) { return bn.alu_algo == kAluMax ? std::max(v, op) : std::min(v, op); };
        p->bs_lo = pick(p->bs_lo);
        p->bs_hi = pick(p->bs_hi);
    }
    if (!bn.bypass) fold_relu(!bn.relu_bypass, bn.relux, static_cast<int32_t>(bn.relux_reg), &p->bs_lo, &p->bs_hi);
    p->ew = e.bypass ? DpuRequantPlan::Ew::kNone
                     : (ew_add ? DpuRequantPlan::Ew::kAddInt8 : (ew_lut ? DpuRequantPlan::Ew::kLut : DpuRequantPlan::Ew::kClamp));
    p->ew_lo = -2147483648.0;
    p->ew_hi = 2147483647.0;
    if (!e.bypass) fold_relu(!e.relu_bypass, e.relux, static_cast<int32_t>(e.relux_reg), &p->ew_lo, &p->ew_hi);
    if (ew_add) {
        p->ew_cvt = !e.cvt_bypass;
        p->ew_offset = e.cvt_offset;
        p->ew_scale = std::ldexp(static_cast<double>(e.cvt_scale), -e.cvt_shift);
        p->ew_atom_bytes = e.cube.atom_bytes;
        p->ew_surf_stride = e.cube.surf_stride;
    } else {  // the defaults, so that plans without an operand compare equal
        const DpuRequantPlan none;
        p->ew_cvt = none.ew_cvt;
        p->ew_offset = none.ew_offset;
        p->ew_scale = none.ew_scale;
        p->ew_atom_bytes = none.ew_atom_bytes;
        p->ew_surf_stride = none.ew_surf_stride;
    }
    p->out_scale = std::ldexp(static_cast<double>(d.out_scale), -d.out_shift);
    p->out_offset = d.out_offset;
    p->out_atom_bytes = d.dst.atom_bytes;
    p->out_surf_stride = d.dst.surf_stride;
    // A multiplier read from a tensor changes with the data.
    *plan = ew_mul && e.from_tensor ? folded_once(*p) : memoised_plan(*p);
    fused_pass_tasks.fetch_add(1, std::memory_order_relaxed);
    return true;
}

// The general integer pipeline (any stage configuration), in int64 lanes.
void run_int_rows_generic(const TaskContext& ctx, const Dpu& d, const Source& src, const ConvOutput* conv,
                          int64_t grain) {
    const int n = d.channels;
    const IntStage bs = resolve_int_stage(d.bs, true, n);
    const IntStage bn = resolve_int_stage(d.bn, false, n);
    std::vector<int64_t> ow(static_cast<size_t>(n), d.ow_reg);
    if (d.ow_per_channel) {
        for (size_t c = 0; c < ow.size(); ++c) ow[c] = static_cast<int16_t>(d.bs.ow[c]);
    }
    parallel_for(d.height, grain, [&](int64_t y0, int64_t y1) {
        run_int_rows(ctx, d, src, conv, bs, bn, ow, static_cast<int>(y0), static_cast<int>(y1));
    });
}

// Row y of an int8 flying-mode source cube as the fused pass's int32 lanes,
// [pixel][channel] back to back.
const int32_t* widen_source_row(const Source& src, const Dpu& d, int y, int32_t* out) {
    const int n = d.channels, c2 = src.cube.c2();
    for (int c0 = 0; c0 < n; c0 += c2) {
        const int lanes = std::min(c2, n - c0);
        const auto* atom = reinterpret_cast<const int8_t*>(src.data + src.cube.offset(c0, y, 0));
        for (int x = 0; x < d.width; ++x, atom += src.cube.atom_bytes) {
            int32_t* dst = out + static_cast<size_t>(x) * n + c0;
            for (int l = 0; l < lanes; ++l) dst[l] = atom[l];
        }
    }
    return out;
}

// One output row of int8 codes, [pixel][channel] back to back, into its atoms.
void write_atoms(const Dpu& d, const int8_t* codes, int y) {
    const int n = d.channels, c2 = d.dst.c2();
    for (int c0 = 0; c0 < n; c0 += c2) {
        uint8_t* atom = d.dst_bytes + d.dst.offset(c0, y, 0);
        const int8_t* src = codes + c0;
        if (c2 == 16 && n - c0 >= 16) {  // whole atoms: one 16-byte move each
            for (int x = 0; x < d.width; ++x, atom += d.dst.atom_bytes, src += n) std::memcpy(atom, src, 16);
        } else {
            const size_t lanes = static_cast<size_t>(std::min(c2, n - c0));
            for (int x = 0; x < d.width; ++x, atom += d.dst.atom_bytes, src += n) std::memcpy(atom, src, lanes);
        }
    }
}

// How a task's integer rows run: the fused pass (kernels/dpu_requant.h), LUT
// tasks that pass's first half and a memo of the rest (lut_memo.h), every
// other one the general pipeline.
struct RowPlan {
    enum class Kind { kGeneral, kFused, kLut } kind = Kind::kGeneral;
    std::shared_ptr<const DpuRequantPlan> plan;  // folded (plan_memo.h)
    LutTail tail;
};

void plan_rows(const Dpu& d, const Source& src, RowPlan* rp) {
    rp->kind = RowPlan::Kind::kGeneral;
    if (!plan_fused_requant(d, src, &rp->plan)) return;
    if (rp->plan->ew != DpuRequantPlan::Ew::kLut) {
        rp->kind = RowPlan::Kind::kFused;
        return;
    }
    rp->kind = RowPlan::Kind::kLut;
    LutTail& tail = rp->tail;
    tail.lut = d.ew.lut;
    tail.relu = !d.ew.relu_bypass;
    tail.relux = d.ew.relux;
    tail.relux_cap = static_cast<int32_t>(d.ew.relux_reg);
    tail.out_scale = d.out_scale;
    tail.out_shift = d.out_shift;
    tail.out_round = d.out_round;
    tail.out_offset = d.out_offset;
}

// Accumulator row y: the convolution's, or the flying-mode source widened
// into `widened`.
const int32_t* accumulator_row(const Dpu& d, const Source& src, int y, UninitVector<int32_t>* widened) {
    if (src.conv != nullptr) return src.conv->acc.data() + static_cast<size_t>(y) * d.width * src.conv->channels;
    widened->resize(static_cast<size_t>(d.width) * d.channels);
    return widen_source_row(src, d, y, widened->data());
}

// Whether the plan's int32 form runs the task: an int8 source cube, and
// 16-byte atoms in the source, the operand and the output (which the plan's
// layout fields checked for the latter two).
bool int8_lanes_apply(const Dpu& d, const Source& src, const DpuRequantPlan& plan) {
    return plan.int8_lanes != nullptr && src.conv == nullptr && src.cube.elem_bytes == 1 && src.cube.atom_bytes == 16 &&
           d.dst.atom_bytes == 16 && plan.channels == d.channels;
}

// Rows [y0, y1) of a fused or LUT task.
void planned_rows(const TaskContext& ctx, const Dpu& d, const Source& src, const RowPlan& rp, int y0, int y1) {
    thread_local UninitVector<int32_t> widened;
    if (rp.kind == RowPlan::Kind::kFused && int8_lanes_apply(d, src, *rp.plan)) {
        const bool add = rp.plan->ew == DpuRequantPlan::Ew::kAddInt8;
        int8_lane_bands.fetch_add(1, std::memory_order_relaxed);
        for (int y = y0; y < y1; ++y) {
            dpu_int8_lanes_row(*rp.plan->int8_lanes, reinterpret_cast<const int8_t*>(src.data + src.cube.offset(0, y, 0)),
                               src.cube.surf_stride, d.width,
                               add ? reinterpret_cast<const int8_t*>(d.ew.data + d.ew.cube.offset(0, y, 0)) : nullptr,
                               add ? d.ew.cube.surf_stride : 0, d.dst_bytes + d.dst.offset(0, y, 0), d.dst.surf_stride);
        }
        return;
    }
    if (rp.kind == RowPlan::Kind::kFused) {
        for (int y = y0; y < y1; ++y) {
            const int8_t* ew = rp.plan->ew == DpuRequantPlan::Ew::kAddInt8
                                   ? reinterpret_cast<const int8_t*>(d.ew.data + d.ew.cube.offset(0, y, 0))
                                   : nullptr;
            dpu_requant_row(*rp.plan, accumulator_row(d, src, y, &widened), d.width, ew,
                            d.dst_bytes + d.dst.offset(0, y, 0));
        }
        return;
    }
    thread_local UninitVector<int32_t> values;
    thread_local std::vector<int8_t> codes;
    LutMemo& memo = lut_memo_for(ctx.lut, rp.tail);
    const int n = d.channels;
    const size_t row = static_cast<size_t>(d.width) * n;
    values.resize(row);
    codes.assign(row, 0);  // lanes beyond the real channels stay 0
    for (int y = y0; y < y1; ++y) {
        dpu_stage_a_row(*rp.plan, accumulator_row(d, src, y, &widened), d.width, values.data());
        if (rp.plan->real_channels == n) {
            memo.codes(values.data(), static_cast<int>(row), codes.data());
        } else {
            for (int x = 0; x < d.width; ++x) {
                const size_t at = static_cast<size_t>(x) * n;
                memo.codes(values.data() + at, rp.plan->real_channels, codes.data() + at);
            }
        }
        write_atoms(d, codes.data(), y);
    }
}

// Rows are independent: large cubes share them out over the host's threads.
void run_int_pipeline(const TaskContext& ctx, const Dpu& d, const Source& src, const RowPlan& rp) {
    const int64_t elements = static_cast<int64_t>(d.width) * d.height * d.channels;
    const int64_t grain = elements >= kParallelElements ? 1 : d.height;
    if (rp.kind == RowPlan::Kind::kGeneral) {
        run_int_rows_generic(ctx, d, src, src.conv, grain);
        return;
    }
    parallel_for(d.height, grain, [&](int64_t y0, int64_t y1) {
        planned_rows(ctx, d, src, rp, static_cast<int>(y0), static_cast<int>(y1));
    });
}

// A decoded task's rows, in the float or the integer pipeline.
void run_decoded(const TaskContext& ctx, const Dpu& d, const Source& src, const RowPlan& rp) {
    if (is_float(d.proc)) {
        run_float_pipeline(d, src, src.conv);
    } else {
        run_int_pipeline(ctx, d, src, rp);
    }
}

// Whether two byte ranges of device memory overlap.
bool overlap(uint64_t a, uint64_t a_bytes, uint64_t b, uint64_t b_bytes) { return a < b + b_bytes && b < a + a_bytes; }

}  // namespace

void set_dpu_fused_passes(bool enabled) { fused_passes.store(enabled, std::memory_order_relaxed); }

uint64_t dpu_fused_pass_tasks() { return fused_pass_tasks.load(std::memory_order_relaxed); }

uint64_t dpu_int8_lane_bands() { return int8_lane_bands.load(std::memory_order_relaxed); }

Status run_dpu_unit(TaskContext& ctx, const ConvOutput* conv) {
    Dpu d;
    RKNN_RETURN_IF_ERROR(decode(ctx, conv, &d));
    Source src;
    RKNN_RETURN_IF_ERROR(decode_source(ctx, d, conv, &src));
    RowPlan rp;
    if (!is_float(d.proc)) plan_rows(d, src, &rp);
    run_decoded(ctx, d, src, rp);
    return Status::ok();
}

struct DpuRowPass::State {
    Dpu d;
    Source src;
    RowPlan rp;
    FloatOffsets offsets;  // float tasks
    bool decoded = false;
};

DpuRowPass::DpuRowPass() : state_(std::make_unique<State>()) {}
DpuRowPass::~DpuRowPass() = default;

void DpuRowPass::reset(TaskContext* ctx) {
    ctx_ = ctx;
    state_->decoded = false;
}

Status DpuRowPass::begin(const ConvOutput& out, bool* by_rows) {
    *by_rows = false;
    State& st = *state_;
    st.d = Dpu();
    RKNN_RETURN_IF_ERROR(decode(*ctx_, &out, &st.d));
    st.src = Source();
    RKNN_RETURN_IF_ERROR(decode_source(*ctx_, st.d, &out, &st.src));
    st.decoded = true;
    // Rows written while the convolution still reads its input must not land on it.
    const bool apart = !overlap(st.d.dst.base, st.d.dst.span(), out.input_base, out.input_span);
    if (is_float(st.d.proc)) {
        plan_float_offsets(st.d, st.src, &out, &st.offsets);
        *by_rows = apart;
        return Status::ok();
    }
    plan_rows(st.d, st.src, &st.rp);
    *by_rows = st.rp.kind != RowPlan::Kind::kGeneral && apart;
    return Status::ok();
}

void DpuRowPass::rows(int y0, int y1) {
    const State& st = *state_;
    if (is_float(st.d.proc)) {
        float_rows(st.d, st.src, st.src.conv, st.offsets, y0, y1);
        return;
    }
    planned_rows(*ctx_, st.d, st.src, st.rp, y0, y1);
}

Status DpuRowPass::finish(const ConvOutput& out) {
    const State& st = *state_;
    if (!st.decoded) return run_dpu_unit(*ctx_, &out);
    if (!out.rows_delivered) run_decoded(*ctx_, st.d, st.src, st.rp);
    return Status::ok();
}

}  // namespace rknn::emulator
