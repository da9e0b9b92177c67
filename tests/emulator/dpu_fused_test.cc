// The DPU's fused integer pass (emulator/kernels/dpu_requant.h) against the
// general int64 pipeline it stands in for: the same convolution task run with
// the pass on and off must write the same bytes. The epilogue registers are
// drawn far beyond what the code generator emits (biases and clip bounds up to
// the int32 limits, negative multipliers, clip bounds that cross, large
// shifts, OUT_CVT scales), so saturation, rounding ties and the folding of the
// clamps are all exercised; the kernels themselves are also checked lane by
// lane against an int64 model of the plan, on every implementation this CPU has.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "common/quantized_conv.h"
#include "emulator/dpu_unit.h"
#include "emulator/fixed_point.h"
#include "emulator/kernels/dpu_requant.h"
#include "emulator/plan_memo.h"
#include "npu_harness.h"

namespace {

namespace et = rknn::emutest;
namespace em = rknn::emulator;
namespace r = rknn::hw::reg;
namespace f = rknn::hw::field;

constexpr uint64_t kStream = 0x10000, kInput = 0x100000, kWeights = 0x200000, kRecords = 0x300000,
                   kOutput = 0x400000, kResidual = 0x500000;

int32_t draw_int32(std::mt19937& rng) {
    switch (rng() % 5) {
    case 0: return std::numeric_limits<int32_t>::min() + static_cast<int32_t>(rng() % 3);
    case 1: return std::numeric_limits<int32_t>::max() - static_cast<int32_t>(rng() % 3);
    case 2: return static_cast<int32_t>(rng() % 2001) - 1000;
    default: return static_cast<int32_t>(rng());
    }
}

int16_t draw_int16(std::mt19937& rng) {
    switch (rng() % 4) {
    case 0: return rng() % 2 ? std::numeric_limits<int16_t>::min() : std::numeric_limits<int16_t>::max();
    case 1: return static_cast<int16_t>(static_cast<int>(rng() % 7) - 3);
    default: return static_cast<int16_t>(rng());
    }
}

// The output bytes of one task with random extreme epilogue registers.
struct TaskBytes {
    std::vector<uint8_t> out;
    bool completed = false;
    std::string message;
};

class FusedCase {
public:
    explicit FusedCase(uint32_t seed) : rng_(seed) {
        spec_.depthwise = rng_() % 3 == 0;
        spec_.c_in = 1 + static_cast<int>(rng_() % 40);
        spec_.c_out = 1 + static_cast<int>(rng_() % 40);
        spec_.h = 1 + static_cast<int>(rng_() % 9);
        spec_.w = 1 + static_cast<int>(rng_() % 9);
        spec_.kh = spec_.kw = 1 + static_cast<int>(rng_() % 3);
        spec_.h = std::max(spec_.h, spec_.kh);
        spec_.w = std::max(spec_.w, spec_.kw);
        spec_.residual = rng_() % 2 == 0;
        made_ = rknn::testing::make_quant_conv(spec_, seed, &layer_);
    }

    const rknn::testing::QuantConvSpec& spec() const { return spec_; }
    const rknn::Status& made() const { return made_; }

    // Draws the registers once; run() may then be called with the pass on and off.
    void draw_registers() {
        const int oc = spec_.out_c();
        regs_ = et::EpilogueRegs{};
        for (int c = 0; c < oc; ++c) {
            regs_.bias.push_back(draw_int32(rng_));
            regs_.mult.push_back(draw_int16(rng_));
        }
        regs_.shift = static_cast<int>(rng_() % 41);
        regs_.clip = rng_() % 2 == 0;
        regs_.clip_lo = draw_int32(rng_);
        regs_.clip_hi = draw_int32(rng_);
        regs_.relu = rng_() % 2 == 0;
        regs_.residual = spec_.residual;
        regs_.residual_addr = kResidual;
        // The emitter negates the zero point into CVT_OFFSET: keep -zp an int32.
        regs_.residual_zp = rng_() % 2 ? std::max(draw_int32(rng_), -std::numeric_limits<int32_t>::max())
                                       : static_cast<int32_t>(rng_() % 256) - 128;
        regs_.residual_mult = draw_int16(rng_);
        regs_.residual_shift = static_cast<int>(rng_() % 41);
        regs_.out_zp = rng_() % 3 == 0 ? draw_int32(rng_) : static_cast<int32_t>(rng_() % 301) - 150;
        out_scale_ = rng_() % 2 ? draw_int16(rng_) : int16_t{1};
        out_shift_ = rng_() % 2 ? static_cast<int>(rng_() % 50) : 0;
    }

    TaskBytes run() const {
        const int oc = spec_.out_c(), oh = spec_.out_h(), ow = spec_.out_w();
        et::ConvGeometry geo;
        geo.in_c = spec_.c_in;
        geo.in_h = spec_.h;
        geo.in_w = spec_.w;
        geo.out_c = oc;
        geo.kh = spec_.kh;
        geo.kw = spec_.kw;
        geo.depthwise = spec_.depthwise;
        et::ConvAddresses addr{kInput, kWeights, kRecords, kOutput};
        et::TaskEmitter b;
        et::emit_conv_int8(&b, geo, addr, regs_, 0);
        // OUT_CVT beyond the code generator's (scale 1, shift 0 without a LUT).
        b.write_fields(r::DPU_OUT_CVT_SCALE, {{f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, static_cast<uint16_t>(out_scale_)}});
        b.write_fields(r::DPU_OUT_CVT_SHIFT, {{f::DPU_OUT_CVT_SHIFT_OUT_CVT_SHIFT, static_cast<uint32_t>(out_shift_)}});
        b.tail(0, 0, 0x1d);
        TaskBytes result;
        if (!b.finish().is_ok()) {
            result.message = b.finish().message();
            return result;
        }
        et::Device dev;
        const int c_aligned = et::align_up(spec_.c_in, 16);
        dev.put(kInput, et::pack_int8_cube(layer_.input.data<int8_t>(), spec_.c_in, spec_.h, spec_.w, c_aligned, 0).data(),
                static_cast<size_t>(c_aligned) * spec_.h * spec_.w);
        const std::vector<int8_t> packed =
            spec_.depthwise ? et::pack_dw_weights_int8(layer_.weights.data(), oc, spec_.kh, spec_.kw, c_aligned)
                            : et::pack_conv_weights_int8(layer_.weights.data(), oc, spec_.c_in, spec_.kh, spec_.kw, c_aligned);
        dev.put(kWeights, packed.data(), packed.size());
        const int oc_aligned = et::align_up(oc, 16);
        const std::vector<uint8_t> records = et::bs_records(regs_, oc_aligned);
        dev.put(kRecords, records.data(), records.size());
        if (spec_.residual) {
            const auto res = et::pack_int8_cube(layer_.residual.data<int8_t>(), oc, oh, ow, oc_aligned, 0);
            dev.put(kResidual, res.data(), res.size());
        }
        const size_t out_bytes = static_cast<size_t>(oc_aligned) * oh * ow;
        uint8_t* out = dev.zeros(kOutput, out_bytes);
        dev.words(kStream, b.words());
        const auto ran = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
        result.completed = ran.completed;
        result.message = ran.message;
        result.out.assign(out, out + out_bytes);
        return result;
    }

private:
    std::mt19937 rng_;
    rknn::testing::QuantConvSpec spec_;
    rknn::testing::QuantConvCase layer_;
    rknn::Status made_ = rknn::Status::ok();
    et::EpilogueRegs regs_;
    int16_t out_scale_ = 1;
    int out_shift_ = 0;
};

// Restores the fused pass whatever a test does.
struct FusedPassGuard {
    ~FusedPassGuard() { em::set_dpu_fused_passes(true); }
};

// Bytes that differ between the two runs' outputs; counts the general
// pipeline's saturated and mid-range codes on the way.
size_t count_differences(const TaskBytes& fused, const TaskBytes& general, int* saturated, int* middling) {
    size_t differ = 0;
    for (size_t i = 0; i < fused.out.size() && i < general.out.size(); ++i) {
        differ += fused.out[i] != general.out[i];
        const auto v = static_cast<int8_t>(general.out[i]);
        *saturated += v == -128 || v == 127;
        *middling += v > -100 && v < 100 && v != 0;
    }
    return differ;
}

TEST(EmulatorDpuFused, ExtremeEpiloguesGiveTheGeneralPipelinesBytes) {
    FusedPassGuard guard;
    int compared = 0, saturated = 0, middling = 0;
    for (uint32_t seed = 1; seed <= 160; ++seed) {
        FusedCase fc(seed * 7919u);
        ASSERT_TRUE(fc.made().is_ok()) << fc.made().message();
        SCOPED_TRACE(fc.spec().describe() + " seed " + std::to_string(seed));
        fc.draw_registers();
        em::set_dpu_fused_passes(true);
        const uint64_t before = em::dpu_fused_pass_tasks();
        const TaskBytes fused = fc.run();
        EXPECT_EQ(em::dpu_fused_pass_tasks(), before + 1) << "the fused pass ran the task";
        em::set_dpu_fused_passes(false);
        const TaskBytes general = fc.run();
        EXPECT_EQ(em::dpu_fused_pass_tasks(), before + 1) << "the general pipeline ran it";
        ASSERT_TRUE(fused.completed) << fused.message;
        ASSERT_TRUE(general.completed) << general.message;
        ASSERT_EQ(fused.out.size(), general.out.size());
        const size_t differ = count_differences(fused, general, &saturated, &middling);
        EXPECT_EQ(differ, 0u) << differ << " of " << fused.out.size() << " bytes differ";
        ++compared;
    }
    EXPECT_EQ(compared, 160);
    // The draws must reach both the saturated and the in-range outputs.
    EXPECT_GT(saturated, 1000);
    EXPECT_GT(middling, 1000);
}

// A DPU-only task that multiplies an int8 cube by one operand per channel
// (a per-channel tensor through ERDMA, or the EW_OP_VALUE register), as the
// SE gates' channel-wise Mul does: the fused pass takes the multiply as its
// BS multiplier when nothing clamps between the BS add and the EW multiply.
// Registers are drawn far beyond the code generator's (converter offsets and
// scales, truncate shifts, huge register operands, OUT_CVT), and some draws
// put a clamp or multiplier in BS, a LUT-free but BN-active stage, or unequal
// truncate shifts, which the fused pass must leave to the general pipeline.
struct EwMulCase {
    int c = 0, h = 0, w = 0;
    std::vector<int8_t> input, operand;
    et::DpuTask task;
    int truncate = 0, truncate_neg = 0;
    bool fusable = true;  // the draw has the form the fused pass takes (operands aside)

    // `add`: an EW add of a whole int8 cube instead (prepare_binary's Add,
    // with its BS multiplier and converter drawn widely); every such draw
    // takes the fused pass, small ones its int32 lanes.
    EwMulCase(std::mt19937& rng, bool add = false) {
        c = 1 + static_cast<int>(rng() % 70);
        h = 1 + static_cast<int>(rng() % 9);
        w = 1 + static_cast<int>(rng() % 12);
        input.resize(static_cast<size_t>(c) * h * w);
        for (int8_t& v : input) v = static_cast<int8_t>(rng());
        operand.resize(static_cast<size_t>(et::align_up(c, 16)) * (add ? static_cast<size_t>(h * w) : 1));
        for (int8_t& v : operand) v = static_cast<int8_t>(rng());
        et::DpuTask& t = task;
        t.c = c;
        t.h = h;
        t.w = w;
        t.src = kInput;
        t.dst = kOutput;
        if (add) {
            draw_add(rng);
            return;
        }
        switch (rng() % 4) {
        case 0: break;  // BS bypassed
        default:
            t.bs.enabled = t.bs.alu = true;
            t.bs.alu_algo = rng() % 2 ? 2u : 4u;
            t.bs.alu_value = rng() % 2 ? draw_int32(rng) : static_cast<int32_t>(rng() % 256) - 128;
        }
        t.ew.enabled = t.ew.op = t.ew.op_mul = true;
        t.ew.tensor = rng() % 4 != 0;
        t.ew.per_channel = true;
        t.ew.operand_addr = kResidual;
        t.ew.value = rng() % 2 ? draw_int32(rng) : static_cast<int32_t>(rng() % 511) - 255;
        t.ew.cvt = rng() % 3 != 0;
        t.ew.cvt_offset = rng() % 2 ? static_cast<int32_t>(rng() % 256) - 128 : draw_int32(rng) / 2;
        t.ew.cvt_scale = rng() % 2 ? int16_t{1} : draw_int16(rng);
        t.ew.cvt_shift = rng() % 2 ? 0 : static_cast<int>(rng() % 32);
        t.ew.relu = rng() % 3 == 0;
        truncate = rng() % 2 ? 0 : static_cast<int>(rng() % 40);
        truncate_neg = truncate;
        t.out.offset = rng() % 3 == 0 ? draw_int32(rng) : static_cast<int32_t>(rng() % 301) - 150;
        t.out.scale = draw_int16(rng);
        t.out.shift = static_cast<int>(rng() % 50);
        // Forms the fused pass must refuse.
        switch (rng() % 10) {
        case 0:
            t.bs.enabled = t.bs.relu = true;
            fusable = false;
            break;
        case 1:
            t.bs.enabled = t.bs.mul = true;
            t.bs.mul_value = draw_int16(rng);
            t.bs.shift = static_cast<int>(rng() % 20);
            fusable = false;
            break;
        case 2:
            t.bn.enabled = t.bn.alu = true;
            t.bn.alu_algo = 0;  // a max: a clamp before the multiply
            t.bn.alu_value = static_cast<int32_t>(rng() % 200) - 100;
            fusable = false;
            break;
        case 3:
            truncate_neg = (truncate + 1) % 40;
            fusable = false;
            break;
        default: break;
        }
    }

    void draw_add(std::mt19937& rng) {
        et::DpuTask& t = task;
        t.bs.enabled = t.bs.alu = true;
        t.bs.alu_algo = rng() % 2 ? 2u : 4u;
        t.bs.alu_value = rng() % 4 == 0 ? draw_int32(rng) : static_cast<int32_t>(rng() % 256) - 128;
        t.bs.mul = rng() % 4 != 0;
        t.bs.mul_value = draw_int16(rng);
        t.bs.shift = rng() % 2 ? 0 : static_cast<int>(rng() % 24);
        t.ew.enabled = t.ew.op = t.ew.tensor = true;
        t.ew.operand_addr = kResidual;
        t.ew.cvt = rng() % 4 != 0;
        t.ew.cvt_offset = rng() % 4 == 0 ? draw_int32(rng) / 2 : static_cast<int32_t>(rng() % 256) - 128;
        t.ew.cvt_scale = draw_int16(rng);
        t.ew.cvt_shift = rng() % 2 ? 0 : static_cast<int>(rng() % 20);
        t.ew.relu = rng() % 3 == 0;
        t.out.offset = rng() % 4 == 0 ? draw_int32(rng) : static_cast<int32_t>(rng() % 301) - 150;
        t.out.scale = rng() % 2 ? int16_t{1} : draw_int16(rng);
        t.out.shift = static_cast<int>(rng() % 40);
    }

    TaskBytes run() const {
        et::TaskEmitter b;
        et::emit_dpu_task(&b, task);
        // The EW truncate shifts (the code generator leaves them at 0).
        b.write_fields(r::DPU_EW_CVT_SCALE_VALUE,
                       {{f::DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, static_cast<uint16_t>(task.ew.cvt_scale)},
                        {f::DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SHIFT, static_cast<uint32_t>(task.ew.cvt_shift)},
                        {f::DPU_EW_CVT_SCALE_VALUE_EW_TRUNCATE, static_cast<uint32_t>(truncate)}});
        b.write_fields(r::DPU_DATA_FORMAT,
                       {{f::DPU_DATA_FORMAT_BS_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(task.bs.shift)},
                        {f::DPU_DATA_FORMAT_BN_MUL_SHIFT_VALUE_NEG, static_cast<uint32_t>(task.bn.shift)},
                        {f::DPU_DATA_FORMAT_EW_TRUNCATE_NEG, static_cast<uint32_t>(truncate_neg)}});
        b.tail(0, 0, 0x18);
        TaskBytes result;
        if (!b.finish().is_ok()) {
            result.message = b.finish().message();
            return result;
        }
        et::Device dev;
        const int ca = et::align_up(c, 16);
        const auto in = et::pack_int8_cube(input.data(), c, h, w, ca, 0);
        dev.put(kInput, in.data(), in.size());
        if (operand.size() == in.size()) {  // a whole cube: in the NPU's layout
            const auto cube = et::pack_int8_cube(operand.data(), c, h, w, ca, 0);
            dev.put(kResidual, cube.data(), cube.size());
        } else {
            dev.put(kResidual, operand.data(), operand.size());
        }
        uint8_t* out = dev.zeros(kOutput, in.size());
        dev.words(kStream, b.words());
        const auto ran = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
        result.completed = ran.completed;
        result.message = ran.message;
        result.out.assign(out, out + in.size());
        return result;
    }
};

// Runs the task with the fused pass on, then off, and checks that both write
// the same bytes; true when the fused pass took it.
bool run_both_ways(const EwMulCase& task, int* saturated, int* middling) {
    em::set_dpu_fused_passes(true);
    const uint64_t before = em::dpu_fused_pass_tasks();
    const TaskBytes fused = task.run();
    const bool took = em::dpu_fused_pass_tasks() == before + 1;
    em::set_dpu_fused_passes(false);
    const TaskBytes general = task.run();
    EXPECT_TRUE(fused.completed) << fused.message;
    EXPECT_TRUE(general.completed) << general.message;
    EXPECT_EQ(fused.out.size(), general.out.size());
    const size_t differ = count_differences(fused, general, saturated, middling);
    EXPECT_EQ(differ, 0u) << differ << " of " << fused.out.size() << " bytes differ";
    return took;
}

TEST(EmulatorDpuFused, ChannelMultipliesGiveTheGeneralPipelinesBytes) {
    FusedPassGuard guard;
    std::mt19937 rng(4711);
    int fused_tasks = 0, refused_forms = 0, refused_operands = 0, saturated = 0, middling = 0;
    for (int round = 0; round < 400; ++round) {
        const EwMulCase mc(rng);
        SCOPED_TRACE("round " + std::to_string(round));
        const bool took = run_both_ways(mc, &saturated, &middling);
        if (!mc.fusable) {
            EXPECT_FALSE(took) << "the fused pass took a form it cannot run";
            ++refused_forms;
        } else {
            fused_tasks += took;
            refused_operands += !took;
        }
    }
    // Most draws of the right form take the pass; huge operands do not.
    EXPECT_GT(fused_tasks, 130);
    EXPECT_GT(refused_operands, 20);
    EXPECT_GT(refused_forms, 120);
    EXPECT_GT(saturated, 1000);
    EXPECT_GT(middling, 1000);
}

// Standalone int8 Adds through the fused pass (int32 lanes when the draw's
// values allow, else double lanes) give the general pipeline's bytes.
TEST(EmulatorDpuFused, StandaloneAddsGiveTheGeneralPipelinesBytes) {
    FusedPassGuard guard;
    std::mt19937 rng(8086);
    int saturated = 0, middling = 0;
    const uint64_t lane_bands = em::dpu_int8_lane_bands();
    for (int round = 0; round < 300; ++round) {
        const EwMulCase ac(rng, true);
        SCOPED_TRACE("round " + std::to_string(round));
        EXPECT_TRUE(run_both_ways(ac, &saturated, &middling)) << "the fused pass ran the task";
    }
    EXPECT_GT(saturated, 1000);
    EXPECT_GT(middling, 1000);
    EXPECT_GT(em::dpu_int8_lane_bands(), lane_bands + 60) << "the int32 lanes ran a third of them, the double lanes the rest";
}

// ---- the kernels against an int64 model of the plan

// A plan's channels and BS stage, drawn far beyond what the code generator emits.
void draw_bs_stage(std::mt19937& rng, em::DpuRequantPlan* p) {
    p->channels = 1 + static_cast<int>(rng() % 70);
    p->acc_stride = p->channels + static_cast<int>(rng() % 3);
    p->bs_alu = rng() % 4 != 0;
    p->bs_mul = rng() % 4 != 0;
    const size_t padded = static_cast<size_t>((p->channels + 3) & ~3);
    for (size_t c = 0; c < padded; ++c) {
        p->bias.push_back(draw_int32(rng));
        p->scale.push_back(std::ldexp(static_cast<double>(draw_int16(rng)), -static_cast<int>(rng() % 40)));
    }
    double lo = draw_int32(rng), hi = draw_int32(rng);
    if (lo > hi) std::swap(lo, hi);
    p->bs_lo = lo;
    p->bs_hi = hi;
}

// BS and BN of one lane.
int64_t model_stage_a(const em::DpuRequantPlan& p, int32_t acc, size_t c) {
    int64_t v = acc;
    if (p.bs_alu) v = em::sat32(v + static_cast<int64_t>(p.bias[c]));
    if (p.bs_mul) {
        // scale = m / 2^s; recover m and s exactly.
        int s = 0;
        double m = p.scale[c];
        while (m != static_cast<double>(static_cast<int64_t>(m))) {
            m *= 2.0;
            ++s;
        }
        v = em::shift_round(v * static_cast<int64_t>(m), s);
    }
    return std::min<int64_t>(std::max<int64_t>(v, static_cast<int64_t>(p.bs_lo)), static_cast<int64_t>(p.bs_hi));
}

int64_t model_lane(const em::DpuRequantPlan& p, int32_t acc, int8_t operand, size_t c) {
    int64_t v = model_stage_a(p, acc, c);
    if (p.ew == em::DpuRequantPlan::Ew::kAddInt8) {
        int64_t op = operand;
        if (p.ew_cvt) op = em::shift_round((op + static_cast<int64_t>(p.ew_offset)) * static_cast<int64_t>(p.ew_scale * 1024.0), 10);
        v = std::min<int64_t>(std::max<int64_t>(v + op, static_cast<int64_t>(p.ew_lo)), static_cast<int64_t>(p.ew_hi));
    } else if (p.ew == em::DpuRequantPlan::Ew::kClamp) {
        v = std::min<int64_t>(std::max<int64_t>(v, static_cast<int64_t>(p.ew_lo)), static_cast<int64_t>(p.ew_hi));
    }
    const int64_t code = em::shift_round(v * static_cast<int64_t>(p.out_scale * 4096.0), 12) + static_cast<int64_t>(p.out_offset);
    return em::saturate(code, -128, 127);
}

TEST(EmulatorDpuFused, KernelsMatchAnInt64ModelOfThePlan) {
    std::mt19937 rng(2024);
    using Row = void (*)(const em::DpuRequantPlan&, const int32_t*, int, const int8_t*, uint8_t*);
    std::vector<std::pair<const char*, Row>> kernels = {{"generic", em::detail::dpu_requant_row_generic}};
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) kernels.emplace_back("avx2", em::detail::dpu_requant_row_avx2);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        kernels.emplace_back("avx512", em::detail::dpu_requant_row_avx512);
#endif
    int checked = 0;
    for (int round = 0; round < 300; ++round) {
        em::DpuRequantPlan p;
        draw_bs_stage(rng, &p);
        p.real_channels = rng() % 4 == 0 ? static_cast<int>(rng() % (p.channels + 1)) : p.channels;
        p.ew = static_cast<em::DpuRequantPlan::Ew>(rng() % 3);
        p.ew_cvt = rng() % 2 == 0;
        p.ew_offset = draw_int32(rng);
        p.ew_scale = std::ldexp(static_cast<double>(draw_int16(rng)), -10);  // the model rescales by 2^10
        p.ew_lo = rng() % 2 ? 0.0 : -2147483648.0;
        p.ew_hi = 2147483647.0;
        p.ew_atom_bytes = 16;
        // The model rescales by 2^12; scale 1 takes the kernels' one-rounding chain.
        p.out_scale = rng() % 3 == 0 ? 1.0 : std::ldexp(static_cast<double>(draw_int16(rng)), -12);
        p.out_offset = static_cast<int32_t>(rng() % 401) - 200;
        p.out_atom_bytes = rng() % 2 ? 16 : 8;
        if (rng() % 3 != 0) em::fold_code_bounds(&p);  // unfolded plans take the staged chain
        const int width = 1 + static_cast<int>(rng() % 5);
        const int surfaces = (p.channels + p.out_atom_bytes - 1) / p.out_atom_bytes;
        p.out_surf_stride = static_cast<uint64_t>(width) * p.out_atom_bytes;
        const int ew_surfaces = (p.channels + 15) / 16;
        p.ew_surf_stride = static_cast<uint64_t>(width) * 16;

        std::vector<int32_t> acc(static_cast<size_t>(width) * p.acc_stride);
        for (int32_t& a : acc) a = draw_int32(rng);
        std::vector<int8_t> ew(static_cast<size_t>(ew_surfaces) * p.ew_surf_stride);
        for (int8_t& e : ew) e = static_cast<int8_t>(rng());
        for (const auto& [name, kernel] : kernels) {
            SCOPED_TRACE(std::string(name) + " round " + std::to_string(round));
            std::vector<uint8_t> out(static_cast<size_t>(surfaces) * p.out_surf_stride, 0xAA);
            kernel(p, acc.data(), width, ew.data(), out.data());
            for (int x = 0; x < width; ++x) {
                for (int c = 0; c < p.channels; ++c) {
                    const uint8_t got = out[static_cast<size_t>(c / p.out_atom_bytes) * p.out_surf_stride +
                                            static_cast<size_t>(x) * p.out_atom_bytes + static_cast<size_t>(c % p.out_atom_bytes)];
                    const int8_t operand = ew[static_cast<size_t>(c / 16) * p.ew_surf_stride + static_cast<size_t>(x) * 16 +
                                              static_cast<size_t>(c % 16)];
                    const int64_t want = c < p.real_channels
                                             ? model_lane(p, acc[static_cast<size_t>(x) * p.acc_stride + c], operand,
                                                          static_cast<size_t>(c))
                                             : 0;
                    ASSERT_EQ(static_cast<int8_t>(got), want) << "pixel " << x << " channel " << c;
                    ++checked;
                }
            }
        }
    }
    EXPECT_GT(checked, 10000);
}

TEST(EmulatorDpuFused, StageAKernelsMatchTheModel) {
    std::mt19937 rng(2025);
    using StageA = void (*)(const em::DpuRequantPlan&, const int32_t*, int, int32_t*);
    std::vector<std::pair<const char*, StageA>> kernels = {{"generic", em::detail::dpu_stage_a_row_generic}};
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) kernels.emplace_back("avx2", em::detail::dpu_stage_a_row_avx2);
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        kernels.emplace_back("avx512", em::detail::dpu_stage_a_row_avx512);
#endif
    int checked = 0;
    for (int round = 0; round < 200; ++round) {
        em::DpuRequantPlan p;
        draw_bs_stage(rng, &p);
        p.real_channels = p.channels;
        const int width = 1 + static_cast<int>(rng() % 5);
        std::vector<int32_t> acc(static_cast<size_t>(width) * p.acc_stride);
        for (int32_t& a : acc) a = draw_int32(rng);
        for (const auto& [name, kernel] : kernels) {
            std::vector<int32_t> values(static_cast<size_t>(width) * p.channels, 0x5A5A5A5A);
            kernel(p, acc.data(), width, values.data());
            for (int x = 0; x < width; ++x)
                for (int c = 0; c < p.channels; ++c) {
                    ASSERT_EQ(values[static_cast<size_t>(x) * p.channels + c],
                              model_stage_a(p, acc[static_cast<size_t>(x) * p.acc_stride + c], static_cast<size_t>(c)))
                        << name << " round " << round << " pixel " << x << " channel " << c;
                    ++checked;
                }
        }
    }
    EXPECT_GT(checked, 5000);
}

bool has_avx512_requant() {
#if defined(__x86_64__)
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
    return false;
#endif
}

// Plans the code generator's way (normalised 16-bit multipliers with shifts
// of 12..26, biases worth up to 200 codes, ReLU-style bounds, OUT_CVT scale 1) take the float lanes;
// accumulators a step from a rounding tie (where one float rounding is
// enough to round the other way), at the float-exact limit of 2^24 and at
// the int32 extremes give the int64 model's codes.
TEST(EmulatorDpuFused, FloatLanesGiveTheModelsCodesNearTies) {
    if (!has_avx512_requant()) GTEST_SKIP() << "the float lanes are the AVX-512 kernel's";
    ASSERT_TRUE(em::float_windows_enabled());
    std::mt19937 rng(77);
    int planned = 0, near_ties = 0, checked = 0;
    for (int round = 0; round < 400; ++round) {
        em::DpuRequantPlan p;
        p.channels = p.real_channels = 1 + static_cast<int>(rng() % 40);
        p.acc_stride = p.channels;
        p.bs_alu = rng() % 8 != 0;
        p.bs_mul = rng() % 8 != 0;
        const size_t padded = static_cast<size_t>((p.channels + 3) & ~3);
        for (size_t c = 0; c < padded; ++c) {
            // A normalised multiplier, and a bias worth up to 200 codes.
            const int m = (rng() % 2 ? 1 : -1) * static_cast<int>(8192 + rng() % 24576);
            const double scale = std::ldexp(static_cast<double>(m), -static_cast<int>(12 + rng() % 15));
            p.scale.push_back(scale);
            p.bias.push_back(std::round((static_cast<double>(rng() % 401) - 200.0) / scale));
        }
        p.bs_lo = rng() % 2 ? 0.0 : -2147483648.0;
        p.bs_hi = rng() % 3 ? 2147483647.0 : static_cast<double>(rng() % 5000);
        p.out_scale = 1.0;
        p.out_offset = static_cast<double>(static_cast<int>(rng() % 256) - 128);
        p.out_surf_stride = 0;
        em::fold_code_bounds(&p);
        if (!p.float_windows) continue;
        ++planned;
        const int width = 64;
        p.out_surf_stride = static_cast<uint64_t>(width) * 16;
        std::vector<int32_t> acc(static_cast<size_t>(width) * p.acc_stride);
        for (int x = 0; x < width; ++x) {
            for (int c = 0; c < p.channels; ++c) {
                const double bias = p.bs_alu ? p.bias[static_cast<size_t>(c)] : 0.0;
                const double scale = p.bs_mul ? p.scale[static_cast<size_t>(c)] : 1.0;
                int64_t a = 0;
                switch (rng() % 6) {
                case 0: a = static_cast<int32_t>(rng()); break;
                case 1: a = rng() % 2 ? INT32_MIN : INT32_MAX; break;
                case 2: a = (rng() % 2 ? 1 : -1) * ((int64_t{1} << 24) + static_cast<int64_t>(rng() % 5) - 2); break;
                default: {  // next to the tie j + 1/2 of (a + bias) * scale, j among the codes
                    const double j = static_cast<double>(static_cast<int>(rng() % 300) - 150) - p.out_offset;
                    a = static_cast<int64_t>(std::floor((j + 0.5) / (scale == 0.0 ? 1.0 : scale) - bias)) +
                        static_cast<int64_t>(rng() % 3) - 1;
                    ++near_ties;
                }
                }
                acc[static_cast<size_t>(x) * p.acc_stride + c] =
                    static_cast<int32_t>(std::clamp<int64_t>(a, INT32_MIN, INT32_MAX));
            }
        }
        const int surfaces = (p.channels + 15) / 16;
        std::vector<uint8_t> out(static_cast<size_t>(surfaces) * p.out_surf_stride, 0xAA);
#if defined(__x86_64__)
        em::detail::dpu_requant_row_avx512(p, acc.data(), width, nullptr, out.data());
#endif
        for (int x = 0; x < width; ++x)
            for (int c = 0; c < p.channels; ++c) {
                const uint8_t got = out[static_cast<size_t>(c / 16) * p.out_surf_stride + static_cast<size_t>(x) * 16 +
                                        static_cast<size_t>(c % 16)];
                ASSERT_EQ(static_cast<int8_t>(got), model_lane(p, acc[static_cast<size_t>(x) * p.acc_stride + c], 0,
                                                               static_cast<size_t>(c)))
                    << "round " << round << " pixel " << x << " channel " << c;
                ++checked;
            }
    }
    EXPECT_GT(planned, 300);  // nearly every such plan takes the float lanes
    EXPECT_GT(near_ties, 100000);
    EXPECT_GT(checked, 300000);
}

// The plan memo hands back the folded plan of equal inputs, and a new one
// when any input (or set_float_windows) differs.
TEST(EmulatorDpuFused, PlanMemoMatchesEveryInput) {
    em::DpuRequantPlan p;
    p.channels = p.real_channels = p.acc_stride = 20;
    p.bs_alu = p.bs_mul = true;
    for (int c = 0; c < 20; ++c) {
        p.bias.push_back(1000.0 * c - 7000.0);
        p.scale.push_back(std::ldexp(12345.0 + c, -20));
    }
    p.bs_lo = 0.0;
    p.out_offset = -128.0;
    p.out_surf_stride = 64;
    const auto first = em::memoised_plan(p);
    ASSERT_TRUE(first->folded);
    EXPECT_EQ(em::memoised_plan(p), first);
    em::DpuRequantPlan folded = p;
    em::fold_code_bounds(&folded);
    EXPECT_EQ(first->code_lo, folded.code_lo);
    EXPECT_EQ(first->code_hi, folded.code_hi);
    EXPECT_EQ(first->float_windows, folded.float_windows);
    EXPECT_EQ(first->fbase, folded.fbase);
    em::DpuRequantPlan other = p;
    other.bias[19] += 1.0;
    EXPECT_NE(em::memoised_plan(other), first);
    other = p;
    other.out_surf_stride = 128;
    EXPECT_NE(em::memoised_plan(other), first);
    other = p;
    other.ew_lo = -5.0;
    EXPECT_NE(em::memoised_plan(other), first);
    em::set_float_windows(false);
    const auto without = em::memoised_plan(p);
    em::set_float_windows(true);
    EXPECT_NE(without, first);
    EXPECT_FALSE(without->float_windows);
    EXPECT_EQ(em::memoised_plan(p), first);
}

// Plans whose multipliers come from a tensor are folded afresh each time,
// into a scratch plan that is reused only once no task holds it.
TEST(EmulatorDpuFused, DataDependentPlansAreFoldedEachTime) {
    em::DpuRequantPlan p;
    p.channels = p.real_channels = p.acc_stride = 32;
    p.int8_source = true;
    p.bs_mul = true;
    for (int c = 0; c < 32; ++c) p.scale.push_back(std::ldexp(static_cast<double>(c * 7 % 255), -8));
    p.out_scale = std::ldexp(20000.0, -22);
    p.out_surf_stride = 512;
    em::DpuRequantPlan folded = p;
    em::fold_code_bounds(&folded);
    std::shared_ptr<const em::DpuRequantPlan> held = em::folded_once(p);
    ASSERT_TRUE(held->folded);
    EXPECT_EQ(held->code_lo, folded.code_lo);
    EXPECT_EQ(held->code_hi, folded.code_hi);
    EXPECT_EQ(held->scale, p.scale);
    // Held: the next plan is another object, and the held one keeps its values.
    em::DpuRequantPlan next = p;
    next.scale[3] = 0.5;
    std::shared_ptr<const em::DpuRequantPlan> second = em::folded_once(next);
    EXPECT_NE(second, held);
    EXPECT_EQ(held->scale, p.scale);
    EXPECT_EQ(second->scale[3], 0.5);
    // Let go: the scratch plan comes back with the new values, folded again.
    const em::DpuRequantPlan* storage = second.get();
    second.reset();
    const auto third = em::folded_once(p);
    EXPECT_EQ(third.get(), storage);
    EXPECT_EQ(third->scale, p.scale);
    EXPECT_EQ(third->code_hi, folded.code_hi);
}

// A convolution whose output lands on its own input, a few rows further on:
// the DPU must not write a band of rows while later bands still read the
// input there, so the bytes equal those of the same task writing elsewhere.
TEST(EmulatorDpuFused, AnOutputOverTheInputWaitsForTheConvolution) {
    constexpr int kC = 16, kSize = 64;
    constexpr uint64_t kRowBytes = uint64_t{kSize} * kC, kShift = 8 * kRowBytes;
    et::ConvGeometry geo;  // 1x1, no padding: the cube is read in place
    geo.in_c = geo.out_c = kC;
    geo.in_h = geo.in_w = kSize;
    std::mt19937 rng(31);
    std::vector<int8_t> input(static_cast<size_t>(kC) * kSize * kSize), weights(static_cast<size_t>(kC) * kC);
    for (int8_t& v : input) v = static_cast<int8_t>(rng());
    for (int8_t& v : weights) v = static_cast<int8_t>(static_cast<int>(rng() % 31) - 15);
    et::EpilogueRegs regs;
    regs.bias.assign(kC, 100);
    regs.mult.assign(kC, 300);
    regs.shift = 12;
    std::vector<uint8_t> memory = et::pack_int8_cube(input.data(), kC, kSize, kSize, kC, 0);
    const size_t cube_bytes = memory.size();
    memory.resize(cube_bytes + kShift, 0);
    const std::vector<int8_t> packed = et::pack_conv_weights_int8(weights.data(), kC, kC, 1, 1, kC);
    const std::vector<uint8_t> records = et::bs_records(regs, kC);
    const auto run = [&](uint64_t output) {
        et::Device dev;
        uint8_t* in = dev.put(kInput, memory.data(), memory.size());
        dev.put(kWeights, packed.data(), packed.size());
        dev.put(kRecords, records.data(), records.size());
        uint8_t* out = output == kOutput ? dev.zeros(kOutput, cube_bytes) : in + (output - kInput);
        et::TaskEmitter b;
        et::emit_conv_int8(&b, geo, et::ConvAddresses{kInput, kWeights, kRecords, output}, regs, 0);
        b.tail(0, 0, 0x1d);
        EXPECT_TRUE(b.finish().is_ok());
        dev.words(kStream, b.words());
        const auto ran = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
        EXPECT_TRUE(ran.completed) << ran.message;
        return std::vector<uint8_t>(out, out + cube_bytes);
    };
    const std::vector<uint8_t> elsewhere = run(kOutput), over_input = run(kInput + kShift);
    size_t differ = 0;
    for (size_t i = 0; i < elsewhere.size(); ++i) differ += elsewhere[i] != over_input[i];
    EXPECT_EQ(differ, 0u) << differ << " of " << elsewhere.size() << " bytes differ";
    size_t changed = 0;
    for (size_t i = 0; i < cube_bytes; ++i) changed += memory[i] != elsewhere[i];
    EXPECT_GT(changed, cube_bytes / 2) << "the convolution changed the bytes";
}

}  // namespace
