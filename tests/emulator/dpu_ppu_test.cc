// DPU-only tasks (element-wise ops and activations) and PPU pooling on the
// emulator, compared bit for bit with the int8 reference.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "base/half.h"
#include "cpu/graph_executor.h"
#include "cpu/int8/requant.h"
#include "common/test_graphs.h"
#include "npu_harness.h"

namespace {

using rknn::testing::add_tensor;
using rknn::testing::per_tensor;
using rknn::testing::random_int8;

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::Op;
using rknn::graph::OpType;
using rknn::graph::QuantParams;
using rknn::graph::Shape;
namespace et = rknn::emutest;
namespace i8 = rknn::cpu::int8;

constexpr uint32_t kStream = 0x10000, kA = 0x100000, kB = 0x200000, kRec = 0x300000, kOut = 0x400000;
constexpr int kC = 24, kH = 5, kW = 7;



// Runs one reference op on int8 (or float, for PRelu's slope) inputs.
HostTensor reference(OpType type, const std::vector<HostTensor>& inputs, const Shape& out_shape, const QuantParams& qy,
                     const rknn::graph::Attributes& attrs = {}) {
    Graph g;
    Op op{type, "op", "", {}, {}, attrs};
    for (size_t i = 0; i < inputs.size(); ++i) {
        rknn::graph::Tensor t;
        t.name = "in" + std::to_string(i);
        t.dtype = inputs[i].dtype();
        t.shape = inputs[i].shape();
        t.quant = inputs[i].quant;
        const int32_t id = g.add_tensor(t);
        g.inputs.push_back(id);
        op.inputs.push_back(id);
    }
    rknn::graph::Tensor y;
    y.name = "y";
    y.dtype = DType::kInt8;
    y.shape = out_shape;
    y.quant = qy;
    const int32_t yid = g.add_tensor(y);
    op.outputs = {yid};
    g.add_op(op);
    g.outputs = {yid};
    auto exec = rknn::cpu::GraphExecutor::create(g);
    EXPECT_TRUE(exec.is_ok()) << exec.status().message();
    std::vector<HostTensor> out;
    rknn::cpu::GraphExecutor::RunStats stats;
    EXPECT_TRUE(exec.value()->run(inputs, &out, nullptr, &stats).is_ok());
    EXPECT_EQ(stats.int8_ops, 1) << "the reference did not use its int8 kernel";
    return out[0];
}

// Runs a DPU task with `a` (and `b`, a cube or per-channel vector) in memory.
std::vector<int8_t> run_dpu(et::DpuTask t, const HostTensor& a, const std::vector<uint8_t>& b_bytes,
                            const std::vector<uint8_t>& records = {}) {
    et::Device dev;
    const int ca = et::align_up(kC, 16);
    const auto a_bytes = et::pack_int8_cube(a.data<int8_t>(), kC, kH, kW, ca, 0);
    dev.put(kA, a_bytes.data(), a_bytes.size());
    if (!b_bytes.empty()) dev.put(kB, b_bytes.data(), b_bytes.size());
    if (!records.empty()) dev.put(kRec, records.data(), records.size());
    uint8_t* out = dev.zeros(kOut, a_bytes.size());
    t.c = kC;
    t.h = kH;
    t.w = kW;
    t.src = kA;
    t.dst = kOut;
    et::TaskEmitter b;
    et::emit_dpu_task(&b, t);
    b.tail(0, 0, 0x18);
    EXPECT_TRUE(b.finish().is_ok()) << b.finish().message();
    dev.words(kStream, b.words());
    const auto result = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
    EXPECT_TRUE(result.completed) << result.message;
    return et::unpack_int8_cube(out, kC, kH, kW, static_cast<uint64_t>(kH) * kW * 16);
}

void expect_same(const std::vector<int8_t>& got, const HostTensor& ref, const char* what) {
    ASSERT_EQ(static_cast<int64_t>(got.size()), ref.numel());
    int differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += got[i] != ref.data<int8_t>()[i];
    EXPECT_EQ(differ, 0) << what << ": outputs differing from the int8 reference";
}

// a requantised by (Ma, shift 0) in BS, b through the EW converter: one
// rounding at OUT_CVT, as the reference's element-wise kernels do.
TEST(EmulatorDpu, BinaryElementwiseOpsMatchTheInt8Reference) {
    const QuantParams qa = per_tensor(0.04f, -3), qb = per_tensor(0.07f, 6), qy = per_tensor(0.09f, -2);
    const HostTensor a = random_int8({1, kC, kH, kW}, qa, 1);
    const struct {
        OpType type;
        uint32_t algo;
    } ops[] = {{OpType::kAdd, 2}, {OpType::kSub, 4}, {OpType::kMax, 0}, {OpType::kMin, 1}, {OpType::kMul, 0}};
    for (bool per_channel : {false, true}) {
        const Shape b_shape = per_channel ? Shape{1, kC, 1, 1} : Shape{1, kC, kH, kW};
        const HostTensor bt = random_int8(b_shape, qb, 2);
        std::vector<uint8_t> b_bytes;
        if (per_channel) {
            b_bytes.assign(bt.data<uint8_t>(), bt.data<uint8_t>() + kC);
            b_bytes.resize(static_cast<size_t>(et::align_up(kC, 16)), 0);  // the DPU reads whole atoms
        } else {
            b_bytes = et::pack_int8_cube(bt.data<int8_t>(), kC, kH, kW, et::align_up(kC, 16), 0);
        }
        for (const auto& o : ops) {
            SCOPED_TRACE(std::string(rknn::graph::op_type_name(o.type)) + (per_channel ? " per-channel" : ""));
            const HostTensor ref = reference(o.type, {a, bt}, {1, kC, kH, kW}, qy);
            et::DpuTask t;
            t.bs.enabled = t.bs.alu = true;
            t.bs.alu_value = -qa.zero_points[0];
            t.ew.enabled = t.ew.op = t.ew.tensor = t.ew.cvt = true;
            t.ew.per_channel = per_channel;
            t.ew.operand_addr = kB;
            t.ew.cvt_offset = -qb.zero_points[0];
            t.out.offset = qy.zero_points[0];
            if (o.type == OpType::kMul) {
                const i8::Requant rq = i8::make_requant(0.04 * 0.07 / 0.09);
                t.ew.op_mul = true;
                t.out.scale = static_cast<int16_t>(rq.multiplier(0));
                t.out.shift = rq.shift;
            } else {
                const i8::Requant rq = i8::make_requant({0.04 / 0.09, 0.07 / 0.09});
                t.bs.mul = true;
                t.bs.mul_value = static_cast<int16_t>(rq.multiplier(0));
                t.ew.cvt_scale = static_cast<int16_t>(rq.multiplier(1));
                t.ew.algo = o.algo;
                t.out.shift = rq.shift;
            }
            expect_same(run_dpu(t, a, b_bytes), ref, rknn::graph::op_type_name(o.type));
        }
    }
}

TEST(EmulatorDpu, ReluClipLeakyAndPreluMatchTheInt8Reference) {
    const QuantParams qa = per_tensor(0.05f, 4), qy = per_tensor(0.03f, -6);
    const HostTensor a = random_int8({1, kC, kH, kW}, qa, 3);
    const i8::Requant rq = i8::make_requant(0.05 / 0.03);
    auto requant_task = [&]() {
        et::DpuTask t;
        t.bs.enabled = t.bs.alu = t.bs.mul = true;
        t.bs.alu_value = -qa.zero_points[0];
        t.bs.mul_value = static_cast<int16_t>(rq.multiplier(0));
        t.bs.shift = rq.shift;
        t.out.offset = qy.zero_points[0];
        return t;
    };
    {
        et::DpuTask t = requant_task();
        t.bs.relu = true;
        expect_same(run_dpu(t, a, {}), reference(OpType::kRelu, {a}, {1, kC, kH, kW}, qy), "Relu");
    }
    {
        rknn::graph::Attributes attrs;
        attrs.set_float("min", -1.0f);
        attrs.set_float("max", 2.0f);
        et::DpuTask t = requant_task();
        t.bn.enabled = t.bn.alu = t.bn.relux = true;
        t.bn.alu_algo = 0;  // max(x, lo), then ReLU-X min(x, hi)
        t.bn.alu_value = static_cast<int32_t>(i8::round_even(-1.0 / 0.03));
        t.bn.relux_value = static_cast<int32_t>(i8::round_even(2.0 / 0.03));
        expect_same(run_dpu(t, a, {}), reference(OpType::kClip, {a}, {1, kC, kH, kW}, qy, attrs), "Clip");
    }
    {
        rknn::graph::Attributes attrs;
        attrs.set_float("alpha", 0.15f);
        const i8::Requant slope = i8::make_requant(0.15f);
        et::DpuTask t = requant_task();
        t.bn.enabled = t.bn.mul = t.bn.prelu = true;
        t.bn.mul_value = static_cast<int16_t>(slope.multiplier(0));
        t.bn.shift = slope.shift;
        expect_same(run_dpu(t, a, {}), reference(OpType::kLeakyRelu, {a}, {1, kC, kH, kW}, qy, attrs), "LeakyRelu");
    }
    {
        HostTensor slope(DType::kFloat32, {kC, 1, 1});
        std::vector<double> slopes;
        for (int c = 0; c < kC; ++c) {
            slope.data<float>()[c] = 0.05f + 0.02f * static_cast<float>(c % 9);
            slopes.push_back(slope.data<float>()[c]);
        }
        const i8::Requant rs = i8::make_requant(slopes);
        // Per-channel BN multiplier records: ALU operand 0, multiplier, OW 0.
        std::vector<uint8_t> records(static_cast<size_t>(et::align_up(kC, 16)) * 8, 0);
        for (int c = 0; c < kC; ++c) {
            const auto m = static_cast<int16_t>(rs.multiplier(static_cast<size_t>(c)));
            std::memcpy(&records[static_cast<size_t>(c) * 8 + 4], &m, 2);
        }
        et::DpuTask t = requant_task();
        t.bn.enabled = t.bn.mul = t.bn.mul_per_channel = t.bn.prelu = true;
        t.bn.shift = rs.shift;
        t.bn.records = kRec;
        expect_same(run_dpu(t, a, {}, records), reference(OpType::kPRelu, {a, slope}, {1, kC, kH, kW}, qy), "PRelu");
    }
}

// Standalone non-linear activations are a 256-entry table indexed by the
// int8 input: the LUT's LE table with index select 0 from -128 holds it
// exactly (no interpolation ever happens).
TEST(EmulatorDpu, LutActivationsMatchTheInt8Reference) {
    const QuantParams qa = per_tensor(0.04f, -10), qy = per_tensor(1.0f / 255.0f, -128);
    const HostTensor a = random_int8({1, kC, kH, kW}, qa, 4);
    HostTensor all_codes(DType::kInt8, {1, 1, 16, 16});
    all_codes.quant = qa;
    for (int i = 0; i < 256; ++i) all_codes.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
    for (OpType type : {OpType::kSigmoid, OpType::kTanh, OpType::kSilu}) {
        SCOPED_TRACE(rknn::graph::op_type_name(type));
        const QuantParams q = type == OpType::kSigmoid ? qy : per_tensor(0.02f, 3);
        const HostTensor table = reference(type, {all_codes}, {1, 1, 16, 16}, q);
        std::vector<int16_t> le(513), lo(513, table.data<int8_t>()[255]);
        for (int i = 0; i < 513; ++i) le[static_cast<size_t>(i)] = table.data<int8_t>()[std::min(i, 255)];
        et::DpuTask t;
        t.ew.enabled = t.ew.lut = true;
        // The LUT tables and window are written by the same stream.
        et::Device dev;
        const int ca = et::align_up(kC, 16);
        const auto a_bytes = et::pack_int8_cube(a.data<int8_t>(), kC, kH, kW, ca, 0);
        dev.put(kA, a_bytes.data(), a_bytes.size());
        uint8_t* out = dev.zeros(kOut, a_bytes.size());
        t.c = kC;
        t.h = kH;
        t.w = kW;
        t.src = kA;
        t.dst = kOut;
        et::TaskEmitter b;
        et::emit_lut_load(&b, le, lo);
        namespace r = rknn::hw::reg;
        namespace f = rknn::hw::field;
        b.write_fields(r::DPU_LUT_INFO, {{f::DPU_LUT_INFO_LUT_LE_INDEX_SELECT, 0}, {f::DPU_LUT_INFO_LUT_LO_INDEX_SELECT, 0}});
        b.write(r::DPU_LUT_LE_START, static_cast<uint32_t>(-128));
        b.write(r::DPU_LUT_LO_START, 128);
        b.write(r::DPU_LUT_LO_END, 128 + 512);
        et::emit_dpu_task(&b, t);
        b.tail(0, 0, 0x18);
        ASSERT_TRUE(b.finish().is_ok());
        dev.words(kStream, b.words());
        const auto result = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
        ASSERT_TRUE(result.completed) << result.message;
        expect_same(et::unpack_int8_cube(out, kC, kH, kW, static_cast<uint64_t>(kH) * kW * 16),
                    reference(type, {a}, {1, kC, kH, kW}, q), rknn::graph::op_type_name(type));
    }
}

// ---- PPU ------------------------------------------------------------------------

std::vector<int8_t> run_pool(const et::PoolTask& p, const HostTensor& x) {
    et::Device dev;
    const auto in = et::pack_int8_cube(x.data<int8_t>(), p.c, p.in_h, p.in_w, et::align_up(p.c, 16), 0);
    dev.put(kA, in.data(), in.size());
    uint8_t* out = dev.zeros(kOut, static_cast<size_t>(et::align_up(p.c, 16)) * p.out_h() * p.out_w());
    et::TaskEmitter b;
    et::emit_pool(&b, p, kA, kOut);
    b.tail(0, 0, 0x60);
    EXPECT_TRUE(b.finish().is_ok()) << b.finish().message();
    dev.words(kStream, b.words());
    const auto result = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
    EXPECT_TRUE(result.completed) << result.message;
    return et::unpack_int8_cube(out, p.c, p.out_h(), p.out_w(), static_cast<uint64_t>(p.out_h()) * p.out_w() * 16);
}

TEST(EmulatorPpu, MaxAndAveragePoolsMatchTheInt8Reference) {
    // The PPU keeps the input's quantisation; average pools are exact against
    // the reference when the zero point is 0 and no padding is averaged in.
    const QuantParams q = per_tensor(0.05f, 0);
    const HostTensor x = random_int8({1, 20, 9, 9}, q, 5);
    for (const et::PoolTask& p : {et::PoolTask{1, 3, 2, 1, 9, 9, 20, -128}, et::PoolTask{1, 2, 2, 0, 9, 9, 20, -128},
                              et::PoolTask{0, 3, 3, 0, 9, 9, 20, 0}, et::PoolTask{0, 2, 1, 0, 9, 9, 20, 0}}) {
        SCOPED_TRACE("method " + std::to_string(p.method) + " k" + std::to_string(p.k) + " s" + std::to_string(p.stride));
        rknn::graph::Attributes attrs;
        attrs.set_ints("kernel_shape", {p.k, p.k});
        attrs.set_ints("strides", {p.stride, p.stride});
        attrs.set_ints("pads", {p.pad, p.pad, p.pad, p.pad});
        const HostTensor ref = reference(p.method == 1 ? OpType::kMaxPool : OpType::kAveragePool, {x},
                                         {1, 20, p.out_h(), p.out_w()}, q, attrs);
        expect_same(run_pool(p, x), ref, p.method == 1 ? "MaxPool" : "AveragePool");
    }
}

// An average pool's padded taps count with the pad value: the same codes as
// the pool over the image padded with that value by hand.
TEST(EmulatorPpu, AveragePoolsAddThePadValueForEachPaddedTap) {
    constexpr int8_t kPad = 37;
    HostTensor padded = random_int8({1, 16, 10, 10}, per_tensor(1.0f, 0), 7);
    HostTensor inner = random_int8({1, 16, 8, 8}, per_tensor(1.0f, 0), 7);
    for (int c = 0; c < 16; ++c)
        for (int y = 0; y < 10; ++y)
            for (int x = 0; x < 10; ++x) {
                int8_t& v = padded.data<int8_t>()[(c * 10 + y) * 10 + x];
                if (y == 0 || y == 9 || x == 0 || x == 9) {
                    v = kPad;
                } else {
                    inner.data<int8_t>()[(c * 8 + y - 1) * 8 + x - 1] = v;
                }
            }
    for (int k : {2, 3}) {
        SCOPED_TRACE("k" + std::to_string(k));
        const std::vector<int8_t> by_ppu = run_pool(et::PoolTask{0, k, 2, 1, 8, 8, 16, kPad}, inner);
        const std::vector<int8_t> by_hand = run_pool(et::PoolTask{0, k, 2, 0, 10, 10, 16, 0}, padded);
        EXPECT_EQ(by_ppu, by_hand);
    }
}

// ONNX has no min pool: compare with the definition, padding included.
TEST(EmulatorPpu, MinPoolFollowsItsDefinition) {
    const et::PoolTask p{2, 3, 2, 1, 8, 8, 16, 100};
    const HostTensor x = random_int8({1, 16, 8, 8}, per_tensor(1.0f, 0), 6);
    const std::vector<int8_t> got = run_pool(p, x);
    int differ = 0;
    for (int c = 0; c < 16; ++c)
        for (int oy = 0; oy < p.out_h(); ++oy)
            for (int ox = 0; ox < p.out_w(); ++ox) {
                int m = 1000;
                for (int ky = 0; ky < 3; ++ky)
                    for (int kx = 0; kx < 3; ++kx) {
                        const int iy = oy * 2 + ky - 1, ix = ox * 2 + kx - 1;
                        const bool in = iy >= 0 && iy < 8 && ix >= 0 && ix < 8;
                        m = std::min(m, in ? static_cast<int>(x.data<int8_t>()[(c * 8 + iy) * 8 + ix]) : 100);
                    }
                differ += got[(static_cast<size_t>(c) * p.out_h() + oy) * p.out_w() + ox] != m;
            }
    EXPECT_EQ(differ, 0);
}

}  // namespace
