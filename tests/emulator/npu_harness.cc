#include "npu_harness.h"

#include <algorithm>
#include <cstring>

#include "base/half.h"
#include "cpu/int8/requant.h"

namespace rknn::emutest {

namespace f = hw::field;
namespace r = hw::reg;

int align_up(int v, int a) { return (v + a - 1) / a * a; }

std::vector<uint8_t> pack_int8_cube(const int8_t* nchw, int c, int h, int w, int channels, int8_t fill) {
    const int surfaces = align_up(channels, 16) / 16;
    std::vector<uint8_t> out(static_cast<size_t>(surfaces) * h * w * 16, static_cast<uint8_t>(fill));
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                out[((static_cast<size_t>(ch / 16) * h + y) * w + x) * 16 + ch % 16] =
                    static_cast<uint8_t>(nchw[(static_cast<size_t>(ch) * h + y) * w + x]);
    return out;
}

std::vector<int8_t> unpack_int8_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    std::vector<int8_t> out(static_cast<size_t>(c) * h * w);
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                out[(static_cast<size_t>(ch) * h + y) * w + x] =
                    static_cast<int8_t>(bytes[static_cast<size_t>(ch / 16) * surf_stride +
                                              (static_cast<size_t>(y) * w + x) * 16 + ch % 16]);
    return out;
}

std::vector<uint8_t> pack_fp16_cube(const float* nchw, int c, int h, int w, int channels) {
    const int surfaces = align_up(channels, 8) / 8;
    std::vector<uint8_t> out(static_cast<size_t>(surfaces) * h * w * 16, 0);
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const uint16_t v = float_to_half(nchw[(static_cast<size_t>(ch) * h + y) * w + x]);
                std::memcpy(&out[((static_cast<size_t>(ch / 8) * h + y) * w + x) * 16 + (ch % 8) * 2], &v, 2);
            }
    return out;
}

namespace {
template <typename T, int kC2>
std::vector<float> unpack_float_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    std::vector<float> out(static_cast<size_t>(c) * h * w);
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                T v;
                std::memcpy(&v, bytes + static_cast<size_t>(ch / kC2) * surf_stride +
                                    (static_cast<size_t>(y) * w + x) * 16 + (ch % kC2) * sizeof(T),
                            sizeof(T));
                float fv;
                if constexpr (sizeof(T) == 2) {
                    fv = half_to_float(v);
                } else {
                    fv = v;
                }
                out[(static_cast<size_t>(ch) * h + y) * w + x] = fv;
            }
    return out;
}
}  // namespace

std::vector<float> unpack_fp16_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    return unpack_float_cube<uint16_t, 8>(bytes, c, h, w, surf_stride);
}

std::vector<float> unpack_fp32_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    return unpack_float_cube<float, 4>(bytes, c, h, w, surf_stride);
}

namespace {
template <typename T, typename S>
std::vector<T> pack_blocks(const S* w, int oc, int ic, int kh, int kw, int ic_aligned, int oc_block, T (*conv)(S)) {
    std::vector<T> out;
    out.reserve(static_cast<size_t>(oc) * ic_aligned * kh * kw);
    for (int o0 = 0; o0 < oc; o0 += oc_block) {
        const int on = std::min(oc_block, oc - o0);
        for (int i0 = 0; i0 < ic_aligned; i0 += 32) {
            const int in = std::min(32, ic_aligned - i0);
            for (int y = 0; y < kh; ++y)
                for (int x = 0; x < kw; ++x)
                    for (int o = 0; o < on; ++o)
                        for (int i = 0; i < in; ++i) {
                            const int oi = o0 + o, ii = i0 + i;
                            out.push_back(ii < ic ? conv(w[((static_cast<size_t>(oi) * ic + ii) * kh + y) * kw + x])
                                                  : conv(S{}));
                        }
        }
    }
    return out;
}
int8_t same_int8(int8_t v) { return v; }
uint16_t to_half(float v) { return float_to_half(v); }
}  // namespace

std::vector<int8_t> pack_conv_weights_int8(const int8_t* w, int oc, int ic, int kh, int kw, int ic_aligned) {
    return pack_blocks<int8_t, int8_t>(w, oc, ic, kh, kw, ic_aligned, 32, same_int8);
}

std::vector<uint16_t> pack_conv_weights_fp16(const float* w, int oc, int ic, int kh, int kw, int ic_aligned) {
    return pack_blocks<uint16_t, float>(w, oc, ic, kh, kw, ic_aligned, 16, to_half);
}

std::vector<int8_t> pack_dw_weights_int8(const int8_t* w, int c, int kh, int kw, int c_aligned) {
    std::vector<int8_t> out;
    for (int c0 = 0; c0 < c_aligned; c0 += 64) {
        const int cn = std::min(64, c_aligned - c0);
        for (int y = 0; y < kh; ++y)
            for (int x = 0; x < kw; ++x)
                for (int i = 0; i < cn; ++i) {
                    const int ch = c0 + i;
                    out.push_back(ch < c ? w[(static_cast<size_t>(ch) * kh + y) * kw + x] : 0);
                }
    }
    return out;
}

// ---- device --------------------------------------------------------------------

Device::Device(const hw::SocProfile& soc, int core_index)
    : soc_(soc), core_(std::make_unique<emulator::NpuCore>(soc, core_index, &mem_, true)), core_index_(core_index) {}

void Device::use_core(int core_index) {
    core_ = std::make_unique<emulator::NpuCore>(soc_, core_index, &mem_, true);
    core_index_ = core_index;
}

uint8_t* Device::put(uint64_t addr, const void* bytes, size_t size) {
    uint8_t* p = mem_.add(addr, size);
    if (p != nullptr && size > 0) std::memcpy(p, bytes, size);
    return p;
}

uint8_t* Device::zeros(uint64_t addr, size_t size) { return mem_.add(addr, size); }

uint8_t* Device::words(uint64_t addr, const std::vector<uint64_t>& stream) {
    return put(addr, stream.data(), stream.size() * 8);
}

emulator::ProgramResult Device::run(uint64_t addr, uint32_t first_body_words, uint32_t tasks) {
    emulator::NpuCore& c = *core_;
    c.mmio_write(r::PC_BASE_ADDRESS, 1);
    // As the vendor driver does on multi-core SoCs: the core index at bit 28.
    const uint32_t s_pointer = hw::s_pointer::kPingPong | (static_cast<uint32_t>(core_index_) << hw::s_pointer::kCoreIndexShift);
    c.mmio_write(r::CNA_S_POINTER, s_pointer);
    c.mmio_write(r::CORE_S_POINTER, s_pointer);
    c.mmio_write(r::PC_BASE_ADDRESS, static_cast<uint32_t>(addr));
    c.mmio_write(r::PC_REGISTER_AMOUNTS, hw::pc_data_amount(first_body_words, soc_.pc_amount_scale));
    c.mmio_write(r::PC_INTERRUPT_MASK, hw::irq::kDpu0 | hw::irq::kDpu1 | hw::irq::kPpu0 | hw::irq::kPpu1);
    c.mmio_write(r::PC_INTERRUPT_CLEAR, hw::irq::kClearAll);
    c.mmio_write(r::PC_TASK_CON, (0x6u << soc_.task_number_bits) | tasks);
    c.mmio_write(r::PC_TASK_DMA_BASE_ADDR, 0);
    const bool started = c.mmio_write(r::PC_OPERATION_ENABLE, 1);
    emulator::ProgramResult result;
    if (started) result = c.run();
    c.mmio_write(r::PC_OPERATION_ENABLE, 0);
    return result;
}

// ---- task builders ---------------------------------------------------------------

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
    std::vector<uint8_t> out(std::max(e.bias.size(), static_cast<size_t>(channels)) * 8, 0);
    for (size_t c = 0; c < e.bias.size(); ++c) {
        std::memcpy(&out[c * 8], &e.bias[c], 4);
        std::memcpy(&out[c * 8 + 4], &e.mult[c], 2);
    }
    return out;
}

namespace {

uint32_t twos(int32_t v) { return static_cast<uint32_t>(v); }

constexpr uint32_t kBypassedStage = 0x53;  // BYPASS | ALU_BYPASS | MUL_BYPASS | RELU_BYPASS
constexpr uint32_t kBypassedEw = 0x383;    // BYPASS | OP_BYPASS | LUT_BYPASS | CVT_BYPASS | RELU_BYPASS

void emit_input_side(hw::RegcmdBuilder* b, const ConvGeometry& g, const ConvAddresses& a, int c_aligned, int esize,
                     uint32_t pad_value) {
    const uint32_t prec = g.fp16 ? 2 : 0;
    b->write_fields(r::CNA_CONV_CON1, {{f::CNA_CONV_CON1_CONV_MODE, g.depthwise ? 3u : 0u},
                                       {f::CNA_CONV_CON1_IN_PRECISION, prec},
                                       {f::CNA_CONV_CON1_PROC_PRECISION, prec}});
    b->write(r::DPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::DPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write_fields(r::CNA_CONV_CON2, {{f::CNA_CONV_CON2_FEATURE_GRAINS, 50u + g.stride + 1u}});
    b->write_fields(r::CNA_CONV_CON3, {{f::CNA_CONV_CON3_CONV_X_STRIDE, static_cast<uint32_t>(g.stride)},
                                       {f::CNA_CONV_CON3_CONV_Y_STRIDE, static_cast<uint32_t>(g.stride)}});
    b->write_fields(r::CNA_DATA_SIZE0, {{f::CNA_DATA_SIZE0_DATAIN_WIDTH, static_cast<uint32_t>(g.in_w)},
                                        {f::CNA_DATA_SIZE0_DATAIN_HEIGHT, static_cast<uint32_t>(g.in_h)}});
    b->write_fields(r::CNA_DATA_SIZE1, {{f::CNA_DATA_SIZE1_DATAIN_CHANNEL, static_cast<uint32_t>(c_aligned)},
                                        {f::CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, static_cast<uint32_t>(g.in_c - 1)}});
    b->write_fields(r::CNA_DATA_SIZE2, {{f::CNA_DATA_SIZE2_DATAOUT_WIDTH, static_cast<uint32_t>(g.out_w())}});
    b->write_fields(r::CNA_DATA_SIZE3,
                    {{f::CNA_DATA_SIZE3_DATAOUT_ATOMICS, static_cast<uint32_t>(g.out_w() * g.out_h())}});
    const uint32_t taps = static_cast<uint32_t>(g.kh * g.kw);
    const uint32_t per_kernel = taps * static_cast<uint32_t>(c_aligned * esize);
    const uint32_t kernels = g.depthwise ? 1u : static_cast<uint32_t>(g.out_c);
    b->write(r::CNA_WEIGHT_SIZE0, per_kernel * kernels);
    b->write(r::CNA_WEIGHT_SIZE1, per_kernel);
    b->write_fields(r::CNA_WEIGHT_SIZE2, {{f::CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, static_cast<uint32_t>(g.kw)},
                                          {f::CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, static_cast<uint32_t>(g.kh)},
                                          {f::CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, kernels}});
    b->write_fields(r::CNA_CBUF_CON0, {{f::CNA_CBUF_CON0_DATA_BANK, 7}, {f::CNA_CBUF_CON0_WEIGHT_BANK, 5}});
    b->write_fields(r::CNA_CVT_CON0, {{f::CNA_CVT_CON0_CVT_BYPASS, 1},
                                      {f::CNA_CVT_CON0_CVT_TYPE, 1},
                                      {f::CNA_CVT_CON0_DATA_SIGN, 1}});
    for (uint16_t reg : {r::CNA_CVT_CON1, r::CNA_CVT_CON2, r::CNA_CVT_CON3, r::CNA_CVT_CON4}) b->write(reg, 1u << 16);
    b->write_fields(r::CNA_PAD_CON0, {{f::CNA_PAD_CON0_PAD_TOP, static_cast<uint32_t>(g.pad_top)},
                                      {f::CNA_PAD_CON0_PAD_LEFT, static_cast<uint32_t>(g.pad_left)}});
    b->write(r::CNA_FEATURE_DATA_ADDR, a.input);
    b->write_fields(r::CNA_DMA_CON0, {{f::CNA_DMA_CON0_DATA_BURST_LEN, 15}, {f::CNA_DMA_CON0_WEIGHT_BURST_LEN, 15}});
    // Vendor captures: LINE_STRIDE = 4 W, SURF_STRIDE = W (H - 4) (wrapping in 28 bits for H < 4).
    const uint32_t line = static_cast<uint32_t>(4 * g.in_w);
    const uint32_t surf = static_cast<uint32_t>(g.in_w * g.in_h - 4 * g.in_w) & 0x0fffffffu;
    b->write(r::CNA_DMA_CON1, line);
    b->write(r::CNA_DMA_CON2, surf);
    b->write(r::CNA_DCOMP_CTRL, 0);
    b->write(r::CNA_DCOMP_ADDR0, a.weights);
    b->write(r::CNA_CVT_CON5, 0);
    b->write(r::CNA_PAD_CON1, pad_value);
    b->write_fields(r::CORE_MISC_CFG, {{f::CORE_MISC_CFG_QD_EN, g.fp16 ? 0u : 1u},
                                       {f::CORE_MISC_CFG_DW_EN, g.depthwise ? 1u : 0u},
                                       {f::CORE_MISC_CFG_PROC_PRECISION, prec}});
}

void emit_output_cube(hw::RegcmdBuilder* b, const ConvGeometry& g, const ConvAddresses& a, int oc_aligned,
                      uint32_t surf_bytes) {
    b->write_fields(r::CORE_DATAOUT_SIZE_0, {{f::CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, static_cast<uint32_t>(g.out_w() - 1)},
                                            {f::CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, static_cast<uint32_t>(g.out_h() - 1)}});
    b->write(r::CORE_DATAOUT_SIZE_1, static_cast<uint32_t>(oc_aligned - 1));
    b->write(r::CORE_CLIP_TRUNCATE, 0);
    b->write(r::DPU_DST_BASE_ADDR, a.output);
    b->write(r::DPU_DST_SURF_STRIDE, surf_bytes);
    b->write(r::DPU_DATA_CUBE_WIDTH, static_cast<uint32_t>(g.out_w() - 1));
    b->write(r::DPU_DATA_CUBE_HEIGHT, static_cast<uint32_t>(g.out_h() - 1));
    b->write_fields(r::DPU_DATA_CUBE_CHANNEL, {{f::DPU_DATA_CUBE_CHANNEL_CHANNEL, static_cast<uint32_t>(oc_aligned - 1)},
                                              {f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, static_cast<uint32_t>(g.out_c - 1)}});
    b->write(r::DPU_WDMA_SIZE_0, static_cast<uint32_t>(oc_aligned - 1));
    b->write_fields(r::DPU_WDMA_SIZE_1, {{f::DPU_WDMA_SIZE_1_WIDTH_WDMA, static_cast<uint32_t>(g.out_w() - 1)},
                                         {f::DPU_WDMA_SIZE_1_HEIGHT_WDMA, static_cast<uint32_t>(g.out_h() - 1)}});
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_WIDTH, static_cast<uint32_t>(g.out_w() - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, static_cast<uint32_t>(g.out_h() - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL, static_cast<uint32_t>(oc_aligned - 1));
}

}  // namespace

void emit_lut_load(hw::RegcmdBuilder* b, const std::vector<int16_t>& le, const std::vector<int16_t>& lo) {
    for (uint32_t table = 0; table < 2; ++table) {
        b->write_fields(r::DPU_LUT_ACCESS_CFG, {{f::DPU_LUT_ACCESS_CFG_LUT_ACCESS_TYPE, 1},
                                                {f::DPU_LUT_ACCESS_CFG_LUT_TABLE_ID, table},
                                                {f::DPU_LUT_ACCESS_CFG_LUT_ADDR, 0}});
        for (int16_t v : table ? lo : le) b->write(r::DPU_LUT_ACCESS_DATA, static_cast<uint16_t>(v));
    }
}

namespace {

void emit_stage(hw::RegcmdBuilder* b, bool bs, const StageRegs& s) {
    const uint16_t cfg = bs ? r::DPU_BS_CFG : r::DPU_BN_CFG;
    if (!s.enabled) {
        b->write(cfg, kBypassedStage);
        return;
    }
    if (bs) {
        b->write_fields(cfg, {{f::DPU_BS_CFG_BS_ALU_BYPASS, s.alu ? 0u : 1u},
                              {f::DPU_BS_CFG_BS_ALU_ALGO, s.alu_algo},
                              {f::DPU_BS_CFG_BS_ALU_SRC, s.alu_per_channel ? 1u : 0u},
                              {f::DPU_BS_CFG_BS_MUL_BYPASS, s.mul ? 0u : 1u},
                              {f::DPU_BS_CFG_BS_MUL_PRELU, s.prelu ? 1u : 0u},
                              {f::DPU_BS_CFG_BS_RELU_BYPASS, s.relu ? 0u : 1u},
                              {f::DPU_BS_CFG_BS_RELUX_EN, s.relux ? 1u : 0u}});
        b->write_fields(r::DPU_BS_MUL_CFG, {{f::DPU_BS_MUL_CFG_BS_MUL_SRC, s.mul_per_channel ? 1u : 0u},
                                            {f::DPU_BS_MUL_CFG_BS_MUL_SHIFT_VALUE, static_cast<uint32_t>(s.shift)},
                                            {f::DPU_BS_MUL_CFG_BS_MUL_OPERAND, static_cast<uint16_t>(s.mul_value)}});
        b->write(r::DPU_BS_ALU_CFG, twos(s.alu_value));
        b->write(r::DPU_BS_RELUX_CMP_VALUE, twos(s.relux_value));
        b->write_fields(r::DPU_RDMA_RDMA_BRDMA_CFG, {{f::DPU_RDMA_RDMA_BRDMA_CFG_BRDMA_DATA_USE, s.records ? 3u : 0u}});
        b->write(r::DPU_RDMA_RDMA_BS_BASE_ADDR, s.records);
        return;
    }
    b->write_fields(cfg, {{f::DPU_BN_CFG_BN_ALU_BYPASS, s.alu ? 0u : 1u},
                          {f::DPU_BN_CFG_BN_ALU_ALGO, s.alu_algo},
                          {f::DPU_BN_CFG_BN_ALU_SRC, s.alu_per_channel ? 1u : 0u},
                          {f::DPU_BN_CFG_BN_MUL_BYPASS, s.mul ? 0u : 1u},
                          {f::DPU_BN_CFG_BN_MUL_PRELU, s.prelu ? 1u : 0u},
                          {f::DPU_BN_CFG_BN_RELU_BYPASS, s.relu ? 0u : 1u},
                          {f::DPU_BN_CFG_BN_RELUX_EN, s.relux ? 1u : 0u}});
    b->write_fields(r::DPU_BN_MUL_CFG, {{f::DPU_BN_MUL_CFG_BN_MUL_SRC, s.mul_per_channel ? 1u : 0u},
                                        {f::DPU_BN_MUL_CFG_BN_MUL_SHIFT_VALUE, static_cast<uint32_t>(s.shift)},
                                        {f::DPU_BN_MUL_CFG_BN_MUL_OPERAND, static_cast<uint16_t>(s.mul_value)}});
    b->write(r::DPU_BN_ALU_CFG, twos(s.alu_value));
    b->write(r::DPU_BN_RELUX_CMP_VALUE, twos(s.relux_value));
    b->write_fields(r::DPU_RDMA_RDMA_NRDMA_CFG, {{f::DPU_RDMA_RDMA_NRDMA_CFG_NRDMA_DATA_USE, s.records ? 3u : 0u}});
    b->write(r::DPU_RDMA_RDMA_BN_BASE_ADDR, s.records);
}

void emit_ew(hw::RegcmdBuilder* b, const EwRegs& e, uint32_t surf_bytes) {
    if (!e.enabled) {
        b->write(r::DPU_EW_CFG, kBypassedEw);
        b->write_fields(r::DPU_RDMA_RDMA_ERDMA_CFG, {{f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1}});
        return;
    }
    const uint32_t size = e.op && e.tensor ? 1u : 0u;
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
        b->write(r::DPU_RDMA_RDMA_EW_BASE_ADDR, e.operand_addr);
        b->write(r::DPU_RDMA_RDMA_EW_SURF_STRIDE, surf_bytes);
    } else {
        b->write_fields(r::DPU_RDMA_RDMA_ERDMA_CFG, {{f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1}});
    }
}

void emit_out_cvt(hw::RegcmdBuilder* b, const OutCvt& o) {
    b->write(r::DPU_OUT_CVT_OFFSET, twos(o.offset));
    b->write_fields(r::DPU_OUT_CVT_SCALE, {{f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, static_cast<uint16_t>(o.scale)}});
    b->write_fields(r::DPU_OUT_CVT_SHIFT, {{f::DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, static_cast<uint32_t>(o.shift)}});
}

void emit_shift_negatives(hw::RegcmdBuilder* b, const StageRegs& bs, const StageRegs& bn) {
    // Negative products use the _NEG shifts: keep them equal to the positive ones.
    b->write_fields(r::DPU_DATA_FORMAT, {{f::DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(bs.shift)},
                                         {f::DPU_DATA_FORMAT_BN_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(bn.shift)}});
}

void emit_lut_window(hw::RegcmdBuilder* b, int sel, int32_t le_start, int32_t lo_start, int32_t lo_end) {
    b->write_fields(r::DPU_LUT_INFO, {{f::DPU_LUT_INFO_LUT_LE_INDEX_SELECT, static_cast<uint32_t>(sel)},
                                      {f::DPU_LUT_INFO_LUT_LO_INDEX_SELECT, static_cast<uint32_t>(sel)}});
    b->write(r::DPU_LUT_LE_START, twos(le_start));
    b->write(r::DPU_LUT_LE_END, twos(lo_start));
    b->write(r::DPU_LUT_LO_START, twos(lo_start));
    b->write(r::DPU_LUT_LO_END, twos(lo_end));
}

}  // namespace

void emit_conv_int8(hw::RegcmdBuilder* b, const ConvGeometry& g, const ConvAddresses& a, const EpilogueRegs& e,
                    int8_t input_zp) {
    const int c_aligned = align_up(g.in_c, 16);
    const int oc_aligned = align_up(g.out_c, 16);
    const uint32_t zx = static_cast<uint8_t>(input_zp);
    emit_input_side(b, g, a, c_aligned, 1, zx | (zx << 8));
    b->write_fields(r::DPU_FEATURE_MODE_CFG, {{f::DPU_FEATURE_MODE_CFG_BURST_LEN, 15},
                                              {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2},
                                              {f::DPU_FEATURE_MODE_CFG_CONV_MODE, g.depthwise ? 3u : 0u}});
    const uint32_t surf = static_cast<uint32_t>(g.out_w() * g.out_h() * 16);
    emit_output_cube(b, g, a, oc_aligned, surf);
    // BS: per-channel bias (ALU add) and multiplier, from 8-byte records.
    StageRegs bs;
    bs.enabled = bs.alu = bs.alu_per_channel = bs.mul = bs.mul_per_channel = true;
    bs.shift = e.shift;
    bs.records = a.records;
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
    }
    EwRegs ew;
    ew.enabled = e.residual || e.lut != nullptr || e.relu;
    ew.op = ew.tensor = ew.cvt = e.residual;
    ew.operand_addr = e.residual_addr;
    ew.cvt_offset = -e.residual_zp;
    ew.cvt_scale = e.residual_mult;
    ew.cvt_shift = e.residual_shift;
    ew.lut = e.lut != nullptr;
    ew.relu = e.relu;
    emit_shift_negatives(b, bs, bn);
    emit_stage(b, true, bs);
    b->write_fields(r::DPU_BS_OW_CFG, {{f::DPU_BS_OW_CFG_OD_BYPASS, 1},
                                       {f::DPU_BS_OW_CFG_SIZE_E_0, 1},
                                       {f::DPU_BS_OW_CFG_SIZE_E_1, 1},
                                       {f::DPU_BS_OW_CFG_SIZE_E_2, 1}});
    emit_stage(b, false, bn);
    emit_ew(b, ew, surf);
    OutCvt out;
    out.offset = e.out_zp;
    if (e.lut != nullptr) {
        out.scale = static_cast<int16_t>(e.lut->out.multiplier(0));
        out.shift = e.lut->out.shift;
        const auto& t = e.lut->table;
        emit_lut_load(b, std::vector<int16_t>(t.begin(), t.begin() + 513), std::vector<int16_t>(t.begin() + 512, t.end()));
        emit_lut_window(b, 5, -16384, 0, 16384);
    }
    emit_out_cvt(b, out);
    b->write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_CONV_MODE,
                                                        g.depthwise ? 3u : 0u},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, 15}});
}

void emit_dpu_task(hw::RegcmdBuilder* b, const DpuTask& t) {
    b->write(r::DPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::DPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write_fields(r::DPU_FEATURE_MODE_CFG, {{f::DPU_FEATURE_MODE_CFG_FLYING_MODE, 1},
                                              {f::DPU_FEATURE_MODE_CFG_BURST_LEN, 15},
                                              {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2}});
    emit_shift_negatives(b, t.bs, t.bn);
    const int c_aligned = align_up(t.c, 16);
    const uint32_t surf = static_cast<uint32_t>(t.w * t.h * 16);
    b->write(r::DPU_DST_BASE_ADDR, t.dst);
    b->write(r::DPU_DST_SURF_STRIDE, surf);
    b->write(r::DPU_DATA_CUBE_WIDTH, static_cast<uint32_t>(t.w - 1));
    b->write(r::DPU_DATA_CUBE_HEIGHT, static_cast<uint32_t>(t.h - 1));
    b->write_fields(r::DPU_DATA_CUBE_CHANNEL, {{f::DPU_DATA_CUBE_CHANNEL_CHANNEL, static_cast<uint32_t>(c_aligned - 1)},
                                              {f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, static_cast<uint32_t>(t.c - 1)}});
    emit_stage(b, true, t.bs);
    b->write_fields(r::DPU_BS_OW_CFG, {{f::DPU_BS_OW_CFG_OD_BYPASS, 1}});
    emit_stage(b, false, t.bn);
    emit_ew(b, t.ew, surf);
    emit_out_cvt(b, t.out);
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_WIDTH, static_cast<uint32_t>(t.w - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, static_cast<uint32_t>(t.h - 1));
    b->write(r::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL, static_cast<uint32_t>(c_aligned - 1));
    b->write(r::DPU_RDMA_RDMA_SRC_BASE_ADDR, t.src);
    b->write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE, 1},
                                                       {f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_BURST_LEN, 15}});
}

void emit_conv_fp16(hw::RegcmdBuilder* b, const ConvGeometry& g, const ConvAddresses& a, bool fp32_out) {
    const int c_aligned = align_up(g.in_c, 8);
    const int out_c2 = fp32_out ? 4 : 8;
    const int oc_aligned = align_up(g.out_c, out_c2);
    emit_input_side(b, g, a, c_aligned, 2, 0);
    b->write_fields(r::DPU_FEATURE_MODE_CFG, {{f::DPU_FEATURE_MODE_CFG_BURST_LEN, 15},
                                              {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2},
                                              {f::DPU_FEATURE_MODE_CFG_CONV_MODE, g.depthwise ? 3u : 0u}});
    b->write_fields(r::DPU_DATA_FORMAT, {{f::DPU_DATA_FORMAT_PROC_PRECISION, 2},
                                         {f::DPU_DATA_FORMAT_IN_PRECISION, 2},
                                         {f::DPU_DATA_FORMAT_OUT_PRECISION, fp32_out ? 5u : 2u}});
    emit_output_cube(b, g, a, oc_aligned, static_cast<uint32_t>(g.out_w() * g.out_h() * 16));
    b->write(r::DPU_BS_CFG, kBypassedStage);
    b->write_fields(r::DPU_BS_OW_CFG, {{f::DPU_BS_OW_CFG_OD_BYPASS, 1}});
    b->write(r::DPU_BN_CFG, kBypassedStage);
    b->write(r::DPU_EW_CFG, kBypassedEw);
    b->write(r::DPU_OUT_CVT_OFFSET, 0);
    b->write_fields(r::DPU_OUT_CVT_SCALE, {{f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, 1},
                                           {f::DPU_OUT_CVT_SCALE_FP32TOFP16_EN, fp32_out ? 0u : 1u}});
    b->write(r::DPU_OUT_CVT_SHIFT, 0);
    b->write_fields(r::DPU_RDMA_RDMA_ERDMA_CFG, {{f::DPU_RDMA_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1}});
    b->write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1}});
}

void emit_pool(hw::RegcmdBuilder* b, const PoolTask& p, uint32_t src, uint32_t dst) {
    const int c2 = p.fp16 ? 8 : 16;
    const uint32_t c = static_cast<uint32_t>(align_up(p.c, c2) - 1);
    b->write(r::PPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_DATA_CUBE_IN_WIDTH, static_cast<uint32_t>(p.in_w - 1));
    b->write(r::PPU_DATA_CUBE_IN_HEIGHT, static_cast<uint32_t>(p.in_h - 1));
    b->write(r::PPU_DATA_CUBE_IN_CHANNEL, c);
    b->write(r::PPU_DATA_CUBE_OUT_WIDTH, static_cast<uint32_t>(p.out_w() - 1));
    b->write(r::PPU_DATA_CUBE_OUT_HEIGHT, static_cast<uint32_t>(p.out_h() - 1));
    b->write(r::PPU_DATA_CUBE_OUT_CHANNEL, c);
    b->write_fields(r::PPU_OPERATION_MODE_CFG, {{f::PPU_OPERATION_MODE_CFG_POOLING_METHOD, static_cast<uint32_t>(p.method)},
                                                {f::PPU_OPERATION_MODE_CFG_FLYING_MODE, 1}});
    const uint32_t k = static_cast<uint32_t>(p.k - 1), s = static_cast<uint32_t>(p.stride - 1);
    b->write_fields(r::PPU_POOLING_KERNEL_CFG, {{f::PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH, k},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT, k},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH, s},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT, s}});
    const uint32_t recip = p.fp16 ? float_to_half(65536.0f / static_cast<float>(p.k))
                                  : static_cast<uint32_t>(cpu::int8::round_even(65536.0 / p.k));
    b->write(r::PPU_RECIP_KERNEL_WIDTH, p.method == 0 ? recip : 0);
    b->write(r::PPU_RECIP_KERNEL_HEIGHT, p.method == 0 ? recip : 0);
    const uint32_t pad = static_cast<uint32_t>(p.pad);
    b->write_fields(r::PPU_POOLING_PADDING_CFG, {{f::PPU_POOLING_PADDING_CFG_PAD_LEFT, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_TOP, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_RIGHT, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_BOTTOM, pad}});
    b->write(r::PPU_PADDING_VALUE_1_CFG, static_cast<uint32_t>(p.pad_value));
    b->write(r::PPU_DST_BASE_ADDR, dst);
    b->write(r::PPU_DST_SURF_STRIDE, static_cast<uint32_t>(p.out_h() * p.out_w() * 16));
    b->write_fields(r::PPU_DATA_FORMAT, {{f::PPU_DATA_FORMAT_PROC_PRECISION, p.fp16 ? 2u : 0u}});
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_WIDTH, static_cast<uint32_t>(p.in_w - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_HEIGHT, static_cast<uint32_t>(p.in_h - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_CHANNEL, c);
    b->write(r::PPU_RDMA_RDMA_SRC_BASE_ADDR, src);
    b->write(r::PPU_RDMA_RDMA_SRC_LINE_STRIDE, static_cast<uint32_t>(p.in_w * 16));
    b->write(r::PPU_RDMA_RDMA_SRC_SURF_STRIDE, static_cast<uint32_t>(p.in_w * p.in_h * 16));
    b->write(r::PPU_RDMA_RDMA_DATA_FORMAT, p.fp16 ? 2u : 1u);
}

}  // namespace rknn::emutest
