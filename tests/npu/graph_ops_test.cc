// Graph ops other than convolutions, lowered from the graph (prepare_op) and
// run on the emulated NPU through the mock driver, compared bit for bit with
// the int8 reference: element-wise ops (same shape, per-channel operands as
// features or constants, either operand order), standalone activations
// through the DPU's LUT, and PPU pools. Ops the NPU cannot run exactly are
// placed on the CPU with a reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <map>
#include <random>

#include "base/half.h"
#include "common/test_graphs.h"
#include "cpu/graph_executor.h"
#include "hw/soc_profile.h"
#include "npu/dpu_regs.h"
#include "npu/placement.h"
#include "npu_runner.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::Attributes;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::OpType;
using rknn::graph::QuantParams;
using rknn::graph::Shape;
using rknn::testing::add_tensor;
using rknn::testing::per_tensor;
using rknn::testing::random_int8;
namespace npu = rknn::npu;

struct Operand {
    Shape shape;
    QuantParams quant;  // empty: a float16 operand
    bool constant = false;
};

HostTensor random_operand(const Operand& o, uint32_t seed) {
    if (o.quant.is_quantized()) return random_int8(o.shape, o.quant, seed);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    HostTensor t(DType::kFloat16, o.shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<uint16_t>()[i] = rknn::float_to_half(dist(rng));
    return t;
}

struct OneOp {
    Graph g;
    std::map<int32_t, HostTensor> values;  // graph inputs by tensor id
    HostTensor reference;
};

// One op over random int8 operands, with the reference's output (computed by
// its int8 kernel, except for ops that only move data).
OneOp make_op(OpType type, const std::vector<Operand>& operands, const Shape& out_shape, const QuantParams& qy,
              const Attributes& attrs = {}, uint32_t seed = 1) {
    const bool moves_data = type == OpType::kFlatten;
    const bool fp16 = !qy.is_quantized();
    const DType dtype = fp16 ? DType::kFloat16 : DType::kInt8;
    OneOp o;
    rknn::graph::Op op{type, "op", "", {}, {}, attrs};
    std::vector<HostTensor> feeds;
    for (size_t i = 0; i < operands.size(); ++i) {
        HostTensor data = random_operand(operands[i], seed + static_cast<uint32_t>(i));
        int32_t id;
        if (operands[i].constant) {
            id = o.g.add_constant("c" + std::to_string(i), dtype, operands[i].shape,
                                  rknn::graph::Buffer::copy_of(data.raw(), data.byte_size()));
            o.g.tensors[static_cast<size_t>(id)].quant = operands[i].quant;
        } else {
            id = add_tensor(&o.g, "x" + std::to_string(i), dtype, operands[i].shape, operands[i].quant);
            o.g.inputs.push_back(id);
            feeds.push_back(data);
            o.values[id] = data;
        }
        op.inputs.push_back(id);
    }
    const int32_t y = add_tensor(&o.g, "y", dtype, out_shape, qy);
    op.outputs = {y};
    o.g.add_op(op);
    o.g.outputs = {y};
    auto exec = rknn::cpu::GraphExecutor::create(o.g);
    EXPECT_TRUE(exec.is_ok()) << exec.status().message();
    std::vector<HostTensor> out;
    rknn::cpu::GraphExecutor::RunStats stats;
    EXPECT_TRUE(exec.value()->run(feeds, &out, nullptr, &stats).is_ok());
    EXPECT_EQ(stats.int8_ops, moves_data || fp16 ? 0 : 1);
    o.reference = out[0];
    return o;
}

::testing::AssertionResult npu_matches(const OneOp& o, const char* soc = "rk3588") {
    const auto placement = npu::place_op(o.g, o.g.ops[0], *rknn::hw::find_soc(soc));
    if (placement.target != npu::Target::kNpu) return ::testing::AssertionFailure() << "placed on the CPU: " << placement.reason;
    auto run = npu::testing::run_graph_op(o.g, o.g.ops[0], [&o](int32_t id) -> const HostTensor& { return o.values.at(id); },
                                          0, false, soc);
    if (!run.is_ok()) return ::testing::AssertionFailure() << run.status().message();
    int differ = 0;
    for (size_t i = 0; i < run.value().output.size(); ++i) differ += run.value().output[i] != o.reference.data<uint8_t>()[i];
    if (differ != 0) return ::testing::AssertionFailure() << differ << " of " << run.value().output.size() << " outputs differ";
    return ::testing::AssertionSuccess();
}

// fp16 outputs within `ulps` units in the last place of the larger value.
::testing::AssertionResult npu_close_fp16(const OneOp& o, double ulps) {
    const auto placement = npu::place_op(o.g, o.g.ops[0], rknn::hw::default_soc());
    if (placement.target != npu::Target::kNpu) return ::testing::AssertionFailure() << "placed on the CPU: " << placement.reason;
    auto run = npu::testing::run_graph_op(o.g, o.g.ops[0], [&o](int32_t id) -> const HostTensor& { return o.values.at(id); });
    if (!run.is_ok()) return ::testing::AssertionFailure() << run.status().message();
    const auto* got = reinterpret_cast<const uint16_t*>(run.value().output.data());
    const size_t n = run.value().output.size() / 2;
    double worst = 0;
    for (size_t i = 0; i < n; ++i) {
        const double a = rknn::half_to_float(got[i]), b = rknn::half_to_float(o.reference.data<uint16_t>()[i]);
        const double ulp = std::ldexp(1.0, std::ilogb(std::max({std::fabs(a), std::fabs(b), 6.1e-5})) - 10);
        worst = std::max(worst, std::fabs(a - b) / ulp);
    }
    if (worst > ulps) return ::testing::AssertionFailure() << "largest difference " << worst << " ulps";
    return ::testing::AssertionSuccess();
}

std::string cpu_reason(const OneOp& o, const char* soc = "rk3588") {
    const auto placement = npu::place_op(o.g, o.g.ops[0], *rknn::hw::find_soc(soc));
    return placement.target == npu::Target::kCpu ? placement.reason : std::string();
}

const Shape kCube = {1, 40, 6, 9};

// A square pooling window, stride and padding.
Attributes pool_attrs(int k, int s, int p) {
    Attributes a;
    a.set_ints("kernel_shape", {k, k});
    a.set_ints("strides", {s, s});
    a.set_ints("pads", {p, p, p, p});
    return a;
}
const QuantParams kQa = per_tensor(0.04f, -3), kQb = per_tensor(0.07f, 6), kQy = per_tensor(0.09f, -2);

TEST(NpuGraphOps, BinaryElementwiseOpsAreBitExact) {
    for (OpType type : {OpType::kAdd, OpType::kSub, OpType::kMul, OpType::kMax, OpType::kMin}) {
        SCOPED_TRACE(rknn::graph::op_type_name(type));
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, kQa}, {kCube, kQb}}, kCube, kQy)));
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, kQa}, {{1, 40, 1, 1}, kQb}}, kCube, kQy, {}, 5)))
            << "per-channel feature operand";
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, kQa}, {{1, 40, 1, 1}, kQb, true}}, kCube, kQy, {}, 9)))
            << "per-channel constant operand";
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, kQa}, {kCube, kQb, true}}, kCube, kQy, {}, 13)))
            << "full-size constant operand";
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, kQa}, {{}, kQb, true}}, kCube, kQy, {}, 17)))
            << "scalar constant operand";
        EXPECT_TRUE(npu_matches(make_op(type, {{{1, 40, 1, 1}, kQa}, {{1}, kQb, true}}, {1, 40, 1, 1}, kQy, {}, 19)))
            << "scalar constant operand of a one-pixel cube";
    }
    // The broadcast operand first: swapped for the commutative ops.
    EXPECT_TRUE(npu_matches(make_op(OpType::kAdd, {{{1, 40, 1, 1}, kQb}, {kCube, kQa}}, kCube, kQy)));
    EXPECT_TRUE(npu_matches(make_op(OpType::kMul, {{{1, 40, 1, 1}, kQb}, {kCube, kQa}}, kCube, kQy)));
    EXPECT_NE(cpu_reason(make_op(OpType::kSub, {{{1, 40, 1, 1}, kQb}, {kCube, kQa}}, kCube, kQy)), "");
}

// Sums, differences, products, maxima and minima of two fp16 values are exact
// in fp32: the float pipeline's one rounding matches the reference bit for bit.
TEST(NpuGraphOps, Fp16ElementwiseOpsAreBitExact) {
    const QuantParams none;
    for (OpType type : {OpType::kAdd, OpType::kSub, OpType::kMul, OpType::kMax, OpType::kMin}) {
        SCOPED_TRACE(rknn::graph::op_type_name(type));
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, none}, {kCube, none}}, kCube, none)));
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, none}, {{1, 40, 1, 1}, none, true}}, kCube, none, {}, 3)))
            << "per-channel constant operand";
        EXPECT_TRUE(npu_matches(make_op(type, {{kCube, none}, {{1, 1, 1, 1}, none, true}}, kCube, none, {}, 7)))
            << "scalar constant operand";
    }
}

TEST(NpuGraphOps, StandaloneActivationsRunThroughTheLut) {
    Attributes clip;
    clip.set_float("min", -1.0f);
    clip.set_float("max", 2.0f);
    Attributes leaky;
    leaky.set_float("alpha", 0.15f);
    const struct {
        OpType type;
        Attributes attrs;
    } cases[] = {{OpType::kRelu, {}},     {OpType::kClip, clip},    {OpType::kLeakyRelu, leaky},
                 {OpType::kSigmoid, {}},  {OpType::kTanh, {}},      {OpType::kSilu, {}},
                 {OpType::kHardSwish, {}}, {OpType::kHardSigmoid, {}}};
    uint32_t seed = 20;
    for (const auto& c : cases) {
        SCOPED_TRACE(rknn::graph::op_type_name(c.type));
        EXPECT_TRUE(npu_matches(make_op(c.type, {{kCube, kQa}}, kCube, per_tensor(0.03f, -6), c.attrs, seed++)));
    }
}

// A code table's two LUT halves give every code its result whichever way
// the DPU picks the table: from LO_START on (the emulator's rule) or by the
// sign of the value (measured on a board for the fp16 pipeline), code 0
// included, where either table may be read.
TEST(NpuGraphOps, CodeTablesAgreeUnderEitherTableChoice) {
    std::vector<int16_t> results(256);
    for (int i = 0; i < 256; ++i) results[static_cast<size_t>(i)] = static_cast<int16_t>(i * 37 - 3000);
    const rknn::npu::CodeLut t = rknn::npu::code_lut(results);
    ASSERT_EQ(t.le.size(), 513u);
    ASSERT_EQ(t.lo.size(), 513u);
    auto le_at = [&](int x) { return t.le[static_cast<size_t>(x - t.le_start)]; };
    auto lo_at = [&](int x) { return t.lo[static_cast<size_t>(x - t.lo_start)]; };
    for (int x = -128; x <= 127; ++x) {
        const int16_t want = results[static_cast<size_t>(x + 128)];
        EXPECT_EQ(x >= t.lo_start ? lo_at(x) : le_at(x), want) << "by LO_START, code " << x;
        EXPECT_EQ(x > 0 ? lo_at(x) : le_at(x), want) << "by sign, 0 in LE, code " << x;
        EXPECT_EQ(x >= 0 ? lo_at(x) : le_at(x), want) << "by sign, 0 in LO, code " << x;
    }
}

TEST(NpuGraphOps, PoolsRunOnThePpu) {
    const QuantParams q0 = per_tensor(0.05f, 0), q5 = per_tensor(0.05f, 5);
    const Shape x = {1, 24, 11, 11};
    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, {1, 24, 6, 6}, q5, pool_attrs(3, 2, 1))));
    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, {1, 24, 5, 5}, q5, pool_attrs(2, 2, 0))));
    EXPECT_TRUE(npu_matches(make_op(OpType::kAveragePool, {{x, q0}}, {1, 24, 3, 3}, q0, pool_attrs(3, 3, 0))));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalAveragePool, {{{1, 24, 7, 7}, q0}}, {1, 24, 1, 1}, q0)));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalMaxPool, {{{1, 24, 7, 7}, q5}}, {1, 24, 1, 1}, q5)));

    // fp16 maxima are exact; fp16 averages multiply by fp16 reciprocals of
    // the window: within 2 ulps.
    const QuantParams none;
    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, none}}, {1, 24, 6, 6}, none, pool_attrs(3, 2, 1))));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalMaxPool, {{{1, 24, 7, 7}, none}}, {1, 24, 1, 1}, none)));
    EXPECT_TRUE(npu_close_fp16(make_op(OpType::kAveragePool, {{x, none}}, {1, 24, 3, 3}, none, pool_attrs(3, 3, 0)), 2.0));
    EXPECT_TRUE(npu_close_fp16(make_op(OpType::kGlobalAveragePool, {{{1, 24, 7, 7}, none}}, {1, 24, 1, 1}, none), 2.0));
    EXPECT_TRUE(npu_close_fp16(make_op(OpType::kAveragePool, {{x, none}}, {1, 24, 5, 5}, none, pool_attrs(2, 2, 0)), 2.0));
    EXPECT_NE(cpu_reason(make_op(OpType::kGlobalAveragePool, {{{1, 24, 1, 1}, none}}, {1, 24, 1, 1}, none)).find("1x1"),
              std::string::npos);

    // Averages with a zero point: the PPU averages the codes, the zero point
    // comes off in the requantisation (as in mobilenet_v2 and resnet18).
    const QuantParams qm = per_tensor(0.05f, -37);
    EXPECT_TRUE(npu_matches(make_op(OpType::kAveragePool, {{x, q5}}, {1, 24, 3, 3}, q5, pool_attrs(3, 3, 0))));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalAveragePool, {{{1, 24, 7, 7}, qm}}, {1, 24, 1, 1}, qm)));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalAveragePool, {{{1, 24, 7, 7}, qm}}, {1, 24, 1, 1}, per_tensor(0.01f, 9))));
    // What stays on the CPU, and why.
    EXPECT_NE(cpu_reason(make_op(OpType::kAveragePool, {{x, q5}}, {1, 24, 6, 6}, q5, pool_attrs(3, 2, 1))).find("padding"),
              std::string::npos);
    // A different output quantisation: a DPU task requantises the pooled codes.
    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, {1, 24, 5, 5}, per_tensor(0.08f, -7), pool_attrs(2, 2, 0))));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalAveragePool, {{{1, 24, 7, 7}, q0}}, {1, 24, 1, 1}, per_tensor(0.02f, 3))));
    EXPECT_NE(cpu_reason(make_op(OpType::kGlobalAveragePool, {{{1, 24, 20, 20}, q0}}, {1, 24, 1, 1}, q0)).find("1..16"),
              std::string::npos);
}

// ceil_mode max pools (squeezenet's): the last windows run past the input,
// into extra padding at the end that the PPU's pad value keeps out of the
// maximum. A sweep of sizes, windows, strides and padding, bit-exact with
// the int8 reference (and exact in fp16), on both SoCs.
TEST(NpuGraphOps, CeilModeMaxPoolsRunOnThePpu) {
    const QuantParams q5 = per_tensor(0.05f, 5), none;
    int lowered = 0;
    for (int size : {5, 8, 13, 27}) {
        for (int k : {2, 3, 4}) {
            for (int stride : {1, 2, 3}) {
                for (int pad : {0, 1}) {
                    if (pad >= k || size + 2 * pad < k) continue;
                    const int span = size + 2 * pad - k;
                    int out = (span + stride - 1) / stride + 1;
                    if ((out - 1) * stride >= size + pad) --out;  // a window must start inside
                    Attributes a = pool_attrs(k, stride, pad);
                    a.set_int("ceil_mode", 1);
                    SCOPED_TRACE("size " + std::to_string(size) + " k " + std::to_string(k) + " stride " +
                                 std::to_string(stride) + " pad " + std::to_string(pad));
                    const Shape x = {1, 20, size, size}, y = {1, 20, out, out};
                    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, y, q5, a)));
                    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, y, per_tensor(0.08f, -7), a)));
                    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, none}}, y, none, a)));
                    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, y, q5, a), "rk3568"));
                    ++lowered;
                }
            }
        }
    }
    EXPECT_GT(lowered, 50);
    Attributes a = pool_attrs(3, 2, 0);
    a.set_int("ceil_mode", 1);
    EXPECT_NE(cpu_reason(make_op(OpType::kAveragePool, {{{1, 24, 8, 8}, q5}}, {1, 24, 4, 4}, q5, a)).find("ceil_mode"),
              std::string::npos);
}

// RK3568 (8-byte atoms, padded surfaces): pools that keep the quantisation
// run on its PPU; what needs a DPU-only task or the LUT stays on the CPU.
TEST(NpuGraphOps, Rk3568PoolsRunOnItsPpu) {
    const QuantParams q0 = per_tensor(0.05f, 0), q5 = per_tensor(0.05f, 5), qm = per_tensor(0.05f, -37);
    const char* rk3568 = "rk3568";
    const Shape x = {1, 21, 11, 11};  // 121 pixels: surfaces padded to 124
    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, {1, 21, 6, 6}, q5, pool_attrs(3, 2, 1)), rk3568));
    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{x, q5}}, {1, 21, 5, 5}, q5, pool_attrs(2, 2, 0)), rk3568));
    EXPECT_TRUE(npu_matches(make_op(OpType::kMaxPool, {{{1, 40, 9, 7}, qm}}, {1, 40, 4, 3}, qm, pool_attrs(3, 2, 0)), rk3568));
    EXPECT_TRUE(npu_matches(make_op(OpType::kAveragePool, {{x, q0}}, {1, 21, 3, 3}, q0, pool_attrs(3, 3, 0)), rk3568));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalAveragePool, {{{1, 24, 7, 7}, qm}}, {1, 24, 1, 1}, qm), rk3568));
    EXPECT_TRUE(npu_matches(make_op(OpType::kGlobalMaxPool, {{{1, 24, 7, 7}, q5}}, {1, 24, 1, 1}, q5), rk3568));
    EXPECT_NE(cpu_reason(make_op(OpType::kGlobalAveragePool, {{{1, 24, 7, 7}, q0}}, {1, 24, 1, 1}, per_tensor(0.02f, 3)),
                         rk3568).find("DPU-only"),
              std::string::npos);
    EXPECT_NE(cpu_reason(make_op(OpType::kRelu, {{x, q5}}, x, q5), rk3568).find("not lowered for rk3568"),
              std::string::npos);
}

// An int8 [M, K] x [K, N] product (Gemm with transB and a bias, or MatMul)
// with per-channel symmetric weights: the NPU runs it as a 1x1 convolution
// over M one-pixel rows.
OneOp make_matrix_product(bool matmul, int m, int k, int n, uint32_t seed) {
    OneOp o;
    std::mt19937 rng(seed);
    const int32_t a = add_tensor(&o.g, "a", DType::kInt8, {m, k}, per_tensor(0.05f, 3));
    o.g.inputs = {a};
    const Shape w_shape = matmul ? Shape{k, n} : Shape{n, k};
    QuantParams qw;
    for (int i = 0; i < n; ++i) {
        qw.scales.push_back(0.002f + 0.0001f * static_cast<float>(rng() % 50));
        qw.zero_points.push_back(0);
    }
    qw.axis = matmul ? 1 : 0;
    const HostTensor w = random_int8(w_shape, qw, seed + 1);
    const int32_t wid = o.g.add_constant("w", DType::kInt8, w_shape, rknn::graph::Buffer::copy_of(w.raw(), w.byte_size()));
    o.g.tensors[static_cast<size_t>(wid)].quant = qw;
    rknn::graph::Op op{matmul ? OpType::kMatMul : OpType::kGemm, "op", "", {a, wid}, {}, {}};
    if (!matmul) {
        std::vector<int32_t> bias(static_cast<size_t>(n));
        for (int32_t& b : bias) b = static_cast<int32_t>(rng() % 2001) - 1000;
        const int32_t bid = o.g.add_constant("b", DType::kInt32, {n}, rknn::graph::Buffer::copy_of(bias.data(), bias.size() * 4));
        op.inputs.push_back(bid);
        op.attrs.set_int("transB", 1);
    }
    const int32_t y = add_tensor(&o.g, "y", DType::kInt8, {m, n}, per_tensor(0.08f, -5));
    op.outputs = {y};
    o.g.add_op(op);
    o.g.outputs = {y};
    const HostTensor x = random_int8({m, k}, per_tensor(0.05f, 3), seed + 2);
    o.values[a] = x;
    auto exec = rknn::cpu::GraphExecutor::create(o.g);
    std::vector<HostTensor> out;
    rknn::cpu::GraphExecutor::RunStats stats;
    EXPECT_TRUE(exec.is_ok() && exec.value()->run({x}, &out, nullptr, &stats).is_ok());
    EXPECT_EQ(stats.int8_ops, 1);
    o.reference = out[0];
    return o;
}

TEST(NpuGraphOps, MultiRowMatrixProductsAreBitExact) {
    for (bool matmul : {false, true}) {
        for (int m : {1, 2, 7, 33, 300}) {
            SCOPED_TRACE((matmul ? "MatMul M=" : "Gemm M=") + std::to_string(m));
            const OneOp o = make_matrix_product(matmul, m, 40 + m % 7, 24 + m % 5, static_cast<uint32_t>(m));
            EXPECT_TRUE(npu_matches(o));
            // RK3568: M one-pixel rows in surfaces of align(M, 4) pixels.
            EXPECT_TRUE(npu_matches(o, "rk3568"));
        }
    }
}

// int8 PRelu with a float32 slope per channel ([C, 1, 1] as ONNX exports it,
// or [1, C, 1, 1]) or one slope for all: bit-exact with the reference.
OneOp make_prelu(const Shape& slope_shape, uint32_t seed) {
    OneOp o;
    std::mt19937 rng(seed);
    const int32_t x = add_tensor(&o.g, "x", DType::kInt8, kCube, kQa);
    o.g.inputs = {x};
    std::vector<float> slopes(static_cast<size_t>(rknn::graph::num_elements(slope_shape)));
    for (float& v : slopes) v = static_cast<float>(static_cast<int>(rng() % 200) - 60) / 100.0f;  // -0.6 .. 1.4
    const int32_t sid = o.g.add_constant("slope", DType::kFloat32, slope_shape,
                                         rknn::graph::Buffer::copy_of(slopes.data(), slopes.size() * 4));
    const int32_t y = add_tensor(&o.g, "y", DType::kInt8, kCube, kQy);
    o.g.add_op({OpType::kPRelu, "op", "", {x, sid}, {y}, {}});
    o.g.outputs = {y};
    const HostTensor data = random_int8(kCube, kQa, seed + 1);
    o.values[x] = data;
    auto exec = rknn::cpu::GraphExecutor::create(o.g);
    std::vector<HostTensor> out;
    rknn::cpu::GraphExecutor::RunStats stats;
    const rknn::Status ran = exec.is_ok() ? exec.value()->run({data}, &out, nullptr, &stats) : exec.status();
    EXPECT_TRUE(ran.is_ok()) << ran.message();
    EXPECT_EQ(stats.int8_ops, 1);
    if (!out.empty()) o.reference = out[0];
    return o;
}

TEST(NpuGraphOps, PReluWithPerChannelSlopesIsBitExact) {
    EXPECT_TRUE(npu_matches(make_prelu({40, 1, 1}, 3))) << "[C, 1, 1] slopes";
    EXPECT_TRUE(npu_matches(make_prelu({1, 40, 1, 1}, 7))) << "[1, C, 1, 1] slopes";
    EXPECT_TRUE(npu_matches(make_prelu({1}, 9))) << "one slope (through the LUT)";
    EXPECT_NE(cpu_reason(make_prelu({1, 1, 6, 9}, 11)), "") << "slopes over space stay on the CPU";
}

TEST(NpuGraphOps, ShapeOnlyOpsOnTheSameCubeAreAliases) {
    const QuantParams q = per_tensor(0.05f, 2);
    const OneOp flat = make_op(OpType::kFlatten, {{{1, 40, 1, 1}, q}}, {1, 40}, q);
    const auto placement = npu::place_op(flat.g, flat.g.ops[0], rknn::hw::default_soc());
    EXPECT_EQ(placement.target, npu::Target::kNpu) << placement.reason;
    EXPECT_NE(placement.reason.find("alias"), std::string::npos);
    // Flattening a 2x2 plane reorders the native bytes: not an alias.
    const OneOp wide = make_op(OpType::kFlatten, {{{1, 40, 2, 2}, q}}, {1, 160}, q);
    EXPECT_EQ(npu::place_op(wide.g, wide.g.ops[0], rknn::hw::default_soc()).target, npu::Target::kCpu);
}

// place_graph: an alias with no NPU op around it (graph input to graph output)
// runs on the CPU; one that reaches an NPU op through another alias keeps its cube.
TEST(NpuGraphOps, AnAliasWithNoNpuOpAroundItRunsOnTheCpu) {
    const QuantParams q = per_tensor(0.05f, 2);
    Graph g;
    const int32_t x = add_tensor(&g, "x", DType::kInt8, {1, 40, 1, 1}, q);
    const int32_t f = add_tensor(&g, "f", DType::kInt8, {1, 40}, q);
    g.add_op({OpType::kFlatten, "flatten", "", {x}, {f}, {}});
    g.inputs = {x};
    g.outputs = {f};
    const auto lone = npu::place_graph(g, rknn::hw::default_soc());
    EXPECT_EQ(lone[0].target, npu::Target::kCpu) << lone[0].reason;
    EXPECT_NE(lone[0].reason.find("no NPU op on either side"), std::string::npos) << lone[0].reason;

    const int32_t i = add_tensor(&g, "i", DType::kInt8, {1, 40, 1, 1}, q);
    const int32_t r = add_tensor(&g, "r", DType::kInt8, {1, 40, 1, 1}, q);
    g.add_op({OpType::kUnsqueeze, "unsqueeze", "", {f}, {i}, {}});
    g.ops.back().attrs.set_ints("axes", {2, 3});
    g.add_op({OpType::kRelu, "relu", "", {i}, {r}, {}});
    g.outputs = {r};
    const auto chained = npu::place_graph(g, rknn::hw::default_soc());
    ASSERT_EQ(chained[2].target, npu::Target::kNpu) << chained[2].reason;
    for (size_t k = 0; k < 2; ++k) {
        EXPECT_EQ(chained[k].target, npu::Target::kNpu) << g.ops[k].name << ": " << chained[k].reason;
        EXPECT_EQ(chained[k].form, npu::NpuForm::kAlias) << g.ops[k].name;
    }
}

}  // namespace
