// Test support for the emulator: a device address space, a core driven the
// way the vendor kernel drives it, NC1HWC2 and weight packing, and builders
// for hand-assembled tasks (the register recipes of spec/hw-facts.md 3.6 and
// docs/emulator.md) whose parameters come from the int8 reference's own
// requantisation, so emulator and reference can be compared bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cpu/host_tensor.h"
#include "cpu/int8/epilogue.h"
#include "emulator/dma_port.h"
#include "emulator/npu_core.h"
#include "hw/regcmd.h"
#include "hw/soc_profile.h"

namespace rknn::emutest {

using cpu::HostTensor;

// ---- layouts -------------------------------------------------------------------

int align_up(int v, int a);
// NCHW (N = 1) int8 -> NC1HWC2 bytes with C2 = 16; `channels` >= C lanes
// (extra lanes filled with `fill`).
std::vector<uint8_t> pack_int8_cube(const int8_t* nchw, int c, int h, int w, int channels, int8_t fill);
std::vector<int8_t> unpack_int8_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride);
// fp16 cubes (C2 = 8) and fp32 cubes (C2 = 4), from/to float NCHW.
std::vector<uint8_t> pack_fp16_cube(const float* nchw, int c, int h, int w, int channels);
std::vector<float> unpack_fp16_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride);
std::vector<float> unpack_fp32_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride);

// Weights [oc][ic][kh][kw] in the hardware layout (hw-facts 3.7): blocks of
// `oc_block` kernels (32 int8, 16 fp16) by 32 channels, [ky][kx][kernel][channel];
// ic padded with zeros to `ic_aligned`.
std::vector<int8_t> pack_conv_weights_int8(const int8_t* w, int oc, int ic, int kh, int kw, int ic_aligned);
std::vector<uint16_t> pack_conv_weights_fp16(const float* w, int oc, int ic, int kh, int kw, int ic_aligned);
// Depthwise weights [c][1][kh][kw]: groups of 64 channels, [ky][kx][channel].
std::vector<int8_t> pack_dw_weights_int8(const int8_t* w, int c, int kh, int kw, int c_aligned);

// ---- a core driven like the vendor driver does -----------------------------------

class Device {
public:
    explicit Device(const hw::SocProfile& soc = hw::default_soc(), int core_index = 0);

    emulator::FlatDmaSpace& memory() { return mem_; }
    emulator::NpuCore& core() { return *core_; }
    // Places bytes at `addr` (a fresh buffer) and returns its host copy.
    uint8_t* put(uint64_t addr, const void* bytes, size_t size);
    uint8_t* zeros(uint64_t addr, size_t size);
    uint8_t* words(uint64_t addr, const std::vector<uint64_t>& stream);
    // Programs the PC (hw-facts 1.6) for `tasks` tasks starting at `addr`
    // whose first stream has `first_body_words` words before its tail, and runs.
    emulator::ProgramResult run(uint64_t addr, uint32_t first_body_words, uint32_t tasks = 1);
    // Runs on another core of the SoC (a fresh core model, same memory).
    void use_core(int core_index);

private:
    const hw::SocProfile& soc_;
    emulator::FlatDmaSpace mem_;
    std::unique_ptr<emulator::NpuCore> core_;
    int core_index_ = 0;
};

// ---- task builders ------------------------------------------------------------

// The DPU epilogue expressed in registers: BS (bias + per-channel multiplier),
// BN (clip / leaky), EW (residual, LUT, ReLU), OUT_CVT.
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
    bool residual = false;       // EW add of a requantised int8 tensor
    uint32_t residual_addr = 0;
    int32_t residual_zp = 0;
    int16_t residual_mult = 0;
    int residual_shift = 0;
    const cpu::int8::LutStage* lut = nullptr;  // EW LUT, with OUT_CVT = lut->out
    int32_t out_zp = 0;
};

// From the reference's epilogue (cpu/int8/epilogue.h) and the quantised
// weights: folds -zx * sum(w) into the bias.
EpilogueRegs epilogue_regs(const cpu::int8::Epilogue& e, const int8_t* w, int oc, int taps_per_kernel, int32_t zx);

struct ConvGeometry {
    int in_c = 0, in_h = 0, in_w = 0;
    int out_c = 0;
    int kh = 1, kw = 1, stride = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool depthwise = false;
    bool fp16 = false;
    int out_h() const { return (in_h + pad_top + pad_bottom - kh) / stride + 1; }
    int out_w() const { return (in_w + pad_left + pad_right - kw) / stride + 1; }
};

struct ConvAddresses {
    uint32_t input = 0, weights = 0, records = 0, output = 0;
};

// The 8-byte per-channel BS records (docs/emulator.md): bias, multiplier;
// `channels` (the aligned count the DPU reads) >= the real channels, rest zero.
std::vector<uint8_t> bs_records(const EpilogueRegs& e, int channels);

// DPU stages in register terms (docs/emulator.md has the semantics).
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
    uint32_t records = 0;  // per-channel operand records (DATA_USE 3)
};

struct EwRegs {
    bool enabled = false;
    bool op = false;
    bool op_mul = false;
    uint32_t algo = 2;
    bool tensor = false;       // operand from ERDMA (else EW_OP_VALUE_0)
    bool per_channel = false;  // ERDMA mode 0
    uint32_t operand_addr = 0;
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

// A DPU-only (flying mode, op-enable 0x18) int8 task over a c x h x w cube.
struct DpuTask {
    int c = 0, h = 0, w = 0;
    uint32_t src = 0, dst = 0;
    StageRegs bs, bn;
    EwRegs ew;
    OutCvt out;
};
void emit_dpu_task(hw::RegcmdBuilder* b, const DpuTask& t);

// A PPU pooling task over a packed int8 (or fp16) cube (op-enable 0x60).
struct PoolTask {
    int method = 1;  // 0 average, 1 max, 2 min
    int k = 2, stride = 2, pad = 0;
    int in_h = 0, in_w = 0;
    int c = 0;
    int32_t pad_value = 0;
    bool fp16 = false;
    int out_h() const { return (in_h + 2 * pad - k) / stride + 1; }
    int out_w() const { return (in_w + 2 * pad - k) / stride + 1; }
};
void emit_pool(hw::RegcmdBuilder* b, const PoolTask& p, uint32_t src, uint32_t dst);

// One int8 convolution task (op-enable 0x1d) ending in `tail`.
void emit_conv_int8(hw::RegcmdBuilder* b, const ConvGeometry& g, const ConvAddresses& a, const EpilogueRegs& e,
                    int8_t input_zp);
// One fp16 convolution task writing fp16 (or fp32 with `fp32_out`) without post-processing.
void emit_conv_fp16(hw::RegcmdBuilder* b, const ConvGeometry& g, const ConvAddresses& a, bool fp32_out);
// Loads a DPU LUT (both tables, 513 entries each) from the reference's table.
void emit_lut_load(hw::RegcmdBuilder* b, const std::vector<int16_t>& le, const std::vector<int16_t>& lo);

}  // namespace rknn::emutest
