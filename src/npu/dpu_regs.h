// The DPU (and its RDMA) in register terms: the BS and BN stages, the EW
// stage with its second operand, the LUT and the output converter
// (spec/hw-facts.md 3.5 and 3.8; docs/emulator.md has the semantics the
// emulator gives them). A DPU-only task (flying mode) is built from the same
// pieces as a convolution's epilogue.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/int8/epilogue.h"
#include "npu/task_emitter.h"

namespace rknn::npu {

struct StageRegs {
    bool enabled = false;
    bool alu = false;
    uint32_t alu_algo = 2;  // 0 max, 1 min, 2 add, 4 sub
    bool alu_per_channel = false;
    int32_t alu_value = 0;
    bool mul = false;
    bool mul_per_channel = false;
    int16_t mul_value = 0;
    int shift = 0;
    bool prelu = false;
    bool relu = false;
    bool relux = false;
    int32_t relux_value = 0;
    BufferRef records;  // per-channel operand records; none when 0
    uint32_t records_use = 3;  // their DATA_USE: 3 ALU + MUL (8-byte records), 7 the RK356x groups

    bool uses_records() const { return records.relocatable() || records.offset != 0; }
};

struct EwRegs {
    bool enabled = false;
    bool op = false;
    bool op_mul = false;
    uint32_t algo = 2;
    bool tensor = false;       // operand from ERDMA (else EW_OP_VALUE_0)
    bool per_channel = false;  // ERDMA mode 0
    BufferRef operand_addr;
    int operand_bytes = 1;     // element size of a tensor operand (1 int8, 2 fp16)
    int32_t value = 0;
    bool cvt = false;
    int32_t cvt_offset = 0;
    int16_t cvt_scale = 1;
    int cvt_shift = 0;
    bool lut = false;
    bool relu = false;
};

struct OutCvt {
    int32_t offset = 0;
    int16_t scale = 1;
    int shift = 0;
};

// A convolution's int8 epilogue in register terms: BS (bias + per-channel
// multiplier), BN (clip / leaky), EW (residual, LUT, ReLU), OUT_CVT.
struct EpilogueRegs {
    std::vector<int32_t> bias;   // per channel, after folding the input zero point
    std::vector<int16_t> mult;   // per channel
    int shift = 0;
    bool relu = false;           // EW ReLU (after a residual)
    bool clip = false;           // BN: max(lo), min(hi)
    int32_t clip_lo = 0, clip_hi = 0;
    bool leaky = false;          // BN PRELU multiplier
    int16_t leaky_mult = 0;
    int leaky_shift = 0;
    bool prelu = false;          // BN PRELU, one multiplier per channel from BN records
    std::vector<int16_t> prelu_mult;
    int prelu_shift = 0;
    BufferRef prelu_records;     // those records (prelu_records()), bound at lowering
    bool residual = false;       // EW add of a requantised int8 tensor
    BufferRef residual_addr;
    int32_t residual_zp = 0;
    int16_t residual_mult = 0;
    int residual_shift = 0;
    const cpu::int8::LutStage* lut = nullptr;  // EW LUT, with OUT_CVT = lut->out
    int32_t out_zp = 0;
    // The DPU writes int32 (4 channels per atom) instead of int8: the sums
    // plus the bias, for the matmul API's INT8_MM_INT8_TO_INT32 (multipliers
    // 1, shift 0, OUT_CVT the identity).
    bool out_int32 = false;
};

// From the reference's epilogue (cpu/int8/epilogue.h) and the quantised
// weights [oc][taps_per_kernel]: folds -zx * sum(w) into the bias.
EpilogueRegs epilogue_regs(const cpu::int8::Epilogue& e, const int8_t* w, int oc, int taps_per_kernel, int32_t zx);

// The 8-byte per-channel BS records (docs/emulator.md): bias, multiplier;
// `channels` (the aligned count the DPU reads) >= the real channels, rest zero.
std::vector<uint8_t> bs_records(const EpilogueRegs& e, int channels);
constexpr int kBsRecordBytes = 8;
// RK3566/RK3568 per-channel BS records (docs/rk3568.md 3, BRDMA DATA_USE 7):
// groups of four channels in 32 bytes, [bias i32 x 4][weight offset i16 x 4]
// [multiplier u16 x 4], the stream padded to align(C, 32) channels. The
// weight offsets are 0: the weights are symmetric and the tasks bypass the
// weight-offset term (BS_OW_CFG OD_BYPASS).
std::vector<uint8_t> bs_records_rk356x(const EpilogueRegs& e);
constexpr int kRk356xRecordGroupBytes = 32;
// The BN records of a fused per-channel PRelu (the slopes' multipliers in the
// same 8-byte form), empty without one.
std::vector<uint8_t> prelu_records(const EpilogueRegs& e, int channels);

constexpr uint32_t kBypassedStage = 0x53;  // BYPASS | ALU_BYPASS | MUL_BYPASS | RELU_BYPASS
constexpr uint32_t kBypassedEw = 0x383;    // BYPASS | OP_BYPASS | LUT_BYPASS | CVT_BYPASS | RELU_BYPASS

// BS (bs = true) or BN stage registers, with their RDMA record source.
void emit_stage(TaskEmitter* b, bool bs, const StageRegs& s);
// EW stage; `surf_bytes` is the operand cube's surface stride.
void emit_ew(TaskEmitter* b, const EwRegs& e, uint32_t surf_bytes);
void emit_out_cvt(TaskEmitter* b, const OutCvt& o);
// Negative products use the _NEG shifts: keeps them equal to the positive ones.
void emit_shift_negatives(TaskEmitter* b, const StageRegs& bs, const StageRegs& bn);
// Loads a DPU LUT (both tables, 513 entries each) and selects its window.
void emit_lut_load(TaskEmitter* b, const std::vector<int16_t>& le, const std::vector<int16_t>& lo);
void emit_lut_window(TaskEmitter* b, int sel, int32_t le_start, int32_t lo_start, int32_t lo_end);
// The 256 results of an int8 code table (from code -128) as the two LUT
// tables with index select 0: LE from -128 holds the negative codes' results
// and then code 0's, LO from 0 the others, so both tables give code 0's
// result at their join. Each code gets its result whether the DPU picks LO
// from LO_START on (our model) or by the sign of the value (a board
// measurement of the fp16 pipeline, docs/codegen.md).
struct CodeLut {
    std::vector<int16_t> le, lo;
    int32_t le_start = -128, lo_start = 0, lo_end = 512;
};
CodeLut code_lut(const std::vector<int16_t>& results);
// The BS/BN/EW/OUT_CVT registers of a convolution epilogue; `records` and
// `bn_records` (a fused PRelu's) point at the task's first record,
// `residual_offset` is added to the residual address. The LUT table is
// written only with `load_lut` (it stays in the core's DPU for the tasks
// that follow).
// `bs_records_use` is the BS records' DATA_USE (7 for bs_records_rk356x).
void emit_conv_epilogue(TaskEmitter* b, const EpilogueRegs& e, const BufferRef& records, const BufferRef& bn_records,
                        uint64_t residual_offset, uint32_t surf_bytes, bool depthwise, bool load_lut,
                        uint32_t bs_records_use = 3);

// A DPU-only task's op-enable bits (DPU | DPU_RDMA) and the interrupts a
// task with a DPU raises at its end (DPU groups 0 and 1 done).
constexpr uint32_t kDpuEnable = 0x18;
constexpr uint32_t kDpuInterrupts = 0x300;

// A DPU-only (flying mode, op-enable 0x18) int8 or fp16 task over a c x h x w cube.
struct DpuTask {
    int c = 0, h = 0, w = 0;
    bool fp16 = false;  // fp16 cubes through the float pipeline (else int8)
    BufferRef src, dst;
    StageRegs bs, bn;
    EwRegs ew;
    OutCvt out;
};
void emit_dpu_task(TaskEmitter* b, const DpuTask& t);

}  // namespace rknn::npu
