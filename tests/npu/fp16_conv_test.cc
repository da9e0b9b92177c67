// fp16 convolutions from the graph on the emulated NPU, against the CPU
// reference (float32 arithmetic on the fp16 values, one rounding to fp16):
// seeded random direct and depthwise shapes with bias, residual adds and each fused activation the float
// pipeline runs. Both sum in fp32 in different orders: the documented
// tolerance is 2 fp16 ulps of the result plus the fp32 summation bound
// n * 2^-23 * sum |x * w| (which only matters where terms cancel).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/half.h"
#include "common/test_graphs.h"
#include "cpu/fused_ops.h"
#include "cpu/graph_executor.h"
#include "emulator/conv_unit.h"
#include "hw/soc_profile.h"
#include "npu/activation_split.h"
#include "npu/placement.h"
#include "npu_runner.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::OpType;
using rknn::testing::add_tensor;
namespace npu = rknn::npu;

double ulp_of(double v) { return std::ldexp(1.0, std::ilogb(std::max(std::fabs(v), 6.1e-5)) - 10); }

struct Fp16Case {
    int c_in, c_out, h, w, k, stride, pad;
    OpType activation;
    bool depthwise;
    bool residual;  // a fused fp16 add before the activation (none or ReLU)
    bool packed = false;  // the input as a channel-packed NHWC image
    // post_scale * act(y) + post_bias after ReLU, HardSigmoid or HardSwish.
    float post_scale = 1.0f, post_bias = 0.0f;
    uint32_t core_mask = 0;
};

// The activation's largest slope near y, and its value there: how far an
// error in y (the sums, an fp16 intermediate) moves the result.
double slope_near(OpType type, double y, double alpha) {
    switch (type) {
    case OpType::kHardSwish: return std::fabs(y) < 3.0 ? (2.0 * std::fabs(y) + 3.0) / 6.0 : 1.0;
    case OpType::kHardSigmoid: return alpha;
    default: return 1.0;
    }
}

// Checks every output against the tolerance; `worst` receives the largest
// difference as a fraction of its tolerance.
::testing::AssertionResult check(const Fp16Case& c, uint32_t seed, double* worst) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    Graph g;
    const int32_t x = add_tensor(&g, "x", DType::kFloat16, {1, c.c_in, c.h, c.w});
    g.inputs = {x};
    const int per_group = c.depthwise ? 1 : c.c_in;
    std::vector<uint16_t> w(static_cast<size_t>(c.c_out) * per_group * c.k * c.k);
    for (uint16_t& v : w) v = rknn::float_to_half(dist(rng) * 0.5f);
    const int32_t wt = g.add_constant("w", DType::kFloat16, {c.c_out, per_group, c.k, c.k},
                                      rknn::graph::Buffer::copy_of(w.data(), w.size() * 2));
    std::vector<float> b(static_cast<size_t>(c.c_out));
    for (float& v : b) v = dist(rng);
    const int32_t bt = g.add_constant("b", DType::kFloat32, {c.c_out}, rknn::graph::Buffer::copy_of(b.data(), b.size() * 4));
    const int oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
    const int32_t y = add_tensor(&g, "y", DType::kFloat16, {1, c.c_out, oh, ow});
    rknn::graph::Op op{OpType::kConv, "conv", "", {x, wt, bt}, {y}, {}};
    op.attrs.set_ints("strides", {c.stride, c.stride});
    op.attrs.set_ints("pads", {c.pad, c.pad, c.pad, c.pad});
    if (c.depthwise) op.attrs.set_int("group", c.c_in);
    rknn::cpu::kernels::Activation act;
    act.type = c.activation;
    act.min = -0.5f;
    act.max = 1.5f;
    act.alpha = c.activation == OpType::kHardSigmoid ? 0.2f : 0.1f;
    act.beta = 0.5f;
    act.post_scale = c.post_scale;
    act.post_bias = c.post_bias;
    if (c.activation != OpType::kIdentity) rknn::cpu::set_fused_activation(&op, act);
    HostTensor input(DType::kFloat16, {1, c.c_in, c.h, c.w});
    for (int64_t i = 0; i < input.numel(); ++i) input.data<uint16_t>()[i] = rknn::float_to_half(dist(rng));
    HostTensor residual(DType::kFloat16, {1, c.c_out, oh, ow});
    for (int64_t i = 0; i < residual.numel(); ++i) residual.data<uint16_t>()[i] = rknn::float_to_half(dist(rng));
    std::vector<HostTensor> feeds = {input};
    int32_t r = -1;
    if (c.residual) {
        r = add_tensor(&g, "r", DType::kFloat16, {1, c.c_out, oh, ow});
        g.inputs.push_back(r);
        op.inputs.push_back(r);
        rknn::cpu::set_fused_residual(&op, r);
        feeds.push_back(residual);
    }
    g.add_op(op);
    g.outputs = {y};
    auto exec = rknn::cpu::GraphExecutor::create(g);
    if (!exec.is_ok()) return ::testing::AssertionFailure() << exec.status().message();
    std::vector<HostTensor> ref;
    if (!exec.value()->run(feeds, &ref).is_ok()) return ::testing::AssertionFailure() << "reference failed";

    const auto placement = npu::place_op(g, g.ops[0], rknn::hw::default_soc());
    if (placement.target != npu::Target::kNpu) return ::testing::AssertionFailure() << "CPU: " << placement.reason;
    auto run = npu::testing::run_graph_op(
        g, g.ops[0], [&](int32_t id) -> const HostTensor& { return id == r ? residual : input; }, c.core_mask, c.packed);
    if (!run.is_ok()) return ::testing::AssertionFailure() << run.status().message();
    const auto* got = reinterpret_cast<const uint16_t*>(run.value().output.data());
    const int taps = per_group * c.k * c.k;
    for (int o = 0; o < c.c_out; ++o)
        for (int yy = 0; yy < oh; ++yy)
            for (int xx = 0; xx < ow; ++xx) {
                const size_t i = (static_cast<size_t>(o) * oh + yy) * ow + xx;
                const double r_value = c.residual ? rknn::half_to_float(residual.data<uint16_t>()[i]) : 0.0;
                double magnitude = std::fabs(b[static_cast<size_t>(o)]) + std::fabs(r_value);
                double y_exact = b[static_cast<size_t>(o)] + r_value;
                for (int j = 0; j < per_group; ++j)
                    for (int ky = 0; ky < c.k; ++ky)
                        for (int kx = 0; kx < c.k; ++kx) {
                            const int ci = c.depthwise ? o : j;
                            const int iy = yy * c.stride + ky - c.pad, ix = xx * c.stride + kx - c.pad;
                            if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                            const double product =
                                static_cast<double>(rknn::half_to_float(input.data<uint16_t>()[(ci * c.h + iy) * c.w + ix])) *
                                rknn::half_to_float(w[((static_cast<size_t>(o) * per_group + j) * c.k + ky) * c.k + kx]);
                            magnitude += std::fabs(product);
                            y_exact += product;
                        }
                const double rv = rknn::half_to_float(ref[0].data<uint16_t>()[i]);
                const double v = rknn::half_to_float(got[i]);
                // The result's 2 ulps, plus the sums' bound carried through the
                // activation and the affine; activations the NPU runs in
                // passes add y's and the product's fp16 roundings, and every
                // multiplier its fp16 rounding (2 ulps of the activation's value).
                const double sums = (taps + 2) * std::ldexp(1.0, -23) * magnitude;
                const double slope = slope_near(c.activation, y_exact, act.alpha);
                const double activated = std::fabs(rknn::cpu::kernels::apply_activation(
                    [&] { auto a = act; a.post_scale = 1.0f; a.post_bias = 0.0f; return a; }(), static_cast<float>(y_exact)));
                const bool passes = c.activation == OpType::kHardSwish;
                const bool rounded_multiplier = passes || c.activation == OpType::kHardSigmoid || c.post_scale != 1.0f;
                // HardSigmoid's fp16 alpha multiplies y: its rounding scales with alpha * y.
                const double alpha_rounding =
                    c.activation == OpType::kHardSigmoid ? 2.0 * ulp_of(act.alpha * y_exact) : 0.0;
                const double tolerance =
                    2.0 * ulp_of(std::max(std::fabs(rv), std::fabs(v))) +
                    std::fabs(c.post_scale) * (slope * (sums + (passes ? ulp_of(y_exact) : 0.0)) + alpha_rounding +
                                               (rounded_multiplier ? 2.0 * ulp_of(activated) : 0.0));
                *worst = std::max(*worst, std::fabs(v - rv) / tolerance);
            }
    return ::testing::AssertionSuccess();
}

// A seeded random shape: 1-40 channels, a 1-5 kernel, strides up to
// `max_stride`, sides up to `max_side`, one in three depthwise.
Fp16Case random_case(std::mt19937& rng, int max_stride, int max_side, OpType activation) {
    auto pick = [&rng](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
    Fp16Case c;
    c.c_in = pick(1, 40);
    c.c_out = pick(1, 40);
    c.k = pick(1, 5);
    c.stride = pick(1, max_stride);
    c.pad = pick(0, c.k - 1);
    c.h = pick(std::max(1, c.k - 2 * c.pad), max_side);
    c.w = pick(std::max(1, c.k - 2 * c.pad), max_side);
    c.activation = activation;
    c.depthwise = rng() % 3 == 0;
    if (c.depthwise) c.c_out = c.c_in;
    c.residual = false;
    return c;
}

TEST(NpuFp16Conv, RandomFp16ConvolutionsStayWithinTolerance) {
    std::mt19937 rng(2024);
    const OpType acts[] = {OpType::kIdentity, OpType::kRelu, OpType::kClip, OpType::kLeakyRelu};
    double worst = 0;
    for (int i = 0; i < 120; ++i) {
        Fp16Case c = random_case(rng, 3, 14, acts[rng() % 4]);
        c.residual = !c.depthwise && rng() % 4 == 0;
        if (c.residual && c.activation != OpType::kIdentity) c.activation = OpType::kRelu;
        const auto ok = check(c, 100u + static_cast<uint32_t>(i), &worst);
        ASSERT_TRUE(ok) << "case " << i << ": " << c.c_in << "->" << c.c_out << " " << c.h << "x" << c.w << " k" << c.k
                        << " s" << c.stride << " p" << c.pad << (c.depthwise ? " dw" : "") << (c.residual ? " +residual" : "");
    }
    std::printf("fp16 conv: 120 random layers (direct, depthwise, residual adds), largest difference %.2f of the tolerance\n", worst);
    EXPECT_LE(worst, 1.0);
}

// HardSwish (the convolution, then DPU passes over its output), HardSigmoid
// and ReLU (in the epilogue), with and without an affine after them, as
// PP-OCRv4's LearnableAffineBlocks leave them; across several cores too
// (the passes put every task on the first).
TEST(NpuFp16Conv, HardActivationsAndAffinesStayWithinTolerance) {
    std::mt19937 rng(77);
    std::uniform_real_distribution<float> scale(0.1f, 4.8f), bias(-1.0f, 1.0f);
    const OpType acts[] = {OpType::kHardSwish, OpType::kHardSigmoid, OpType::kRelu};
    double worst = 0;
    for (int i = 0; i < 60; ++i) {
        Fp16Case c = random_case(rng, 2, 16, acts[i % 3]);
        if (i % 4 != 0) c.post_scale = scale(rng);
        if (i % 4 == 1 || i % 4 == 2) c.post_bias = bias(rng);
        if (i % 5 == 4) c.core_mask = 7;
        const auto ok = check(c, 500u + static_cast<uint32_t>(i), &worst);
        ASSERT_TRUE(ok) << "case " << i << ": " << rknn::graph::op_type_name(c.activation) << " " << c.c_in << "->"
                        << c.c_out << " " << c.h << "x" << c.w << " k" << c.k << (c.depthwise ? " dw" : "");
    }
    std::printf("fp16 conv: 60 layers with HardSwish, HardSigmoid or ReLU and affines, largest difference %.2f of the tolerance\n",
                worst);
    EXPECT_LE(worst, 1.0);
}

// PP-OCRv4 rec's 5x5 depthwise layers over 480 channels: five fp16 rows of
// all channels (384000 bytes) do not fit the CBUF, so they run in chunks of
// 32-channel groups (with HardSwish's passes over the whole output after them).
TEST(NpuFp16Conv, WideDepthwiseLayersRunInChannelChunks) {
    double worst = 0;
    int i = 0;
    for (OpType act : {OpType::kIdentity, OpType::kHardSwish}) {
        for (int stride : {1, 2}) {
            Fp16Case c{480, 480, 6, 80, 5, stride, 2, act, true, false};
            const auto ok = check(c, 900u + static_cast<uint32_t>(i++), &worst);
            ASSERT_TRUE(ok) << rknn::graph::op_type_name(act) << " stride " << stride;
        }
    }
    std::printf("fp16 conv: 480-channel 5x5 depthwise layers in chunks, largest difference %.2f of the tolerance\n", worst);
    EXPECT_LE(worst, 1.0);
}

// The emulator reads fp16 depthwise inputs from the cube a surface at a time
// (emulator/depthwise_fp16.h); with the cube paths off it builds a padded
// fp32 image first. Both sum each output's taps in window order from the
// same exact products: the outputs must be the same bits. Seeded random
// shapes: channels that fill part of a surface and many surfaces, kernels up
// to 7 wide and tall apart, unequal strides and pads, row tiles over cores.
TEST(NpuFp16Conv, DepthwiseFromTheCubeMatchesThePaddedImageBitForBit) {
    struct Guard {
        ~Guard() { rknn::emulator::set_conv_cube_paths(true); }
    } guard;
    std::mt19937 rng(4321);
    auto pick = [&rng](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    int compared = 0;
    for (int i = 0; i < 80; ++i) {
        const int c = i % 10 == 9 ? pick(200, 480) : pick(2, 70);  // one channel is a direct convolution
        const int kh = pick(1, 7), kw = pick(1, 7), sy = pick(1, 3), sx = pick(1, 3);
        const int pt = pick(0, kh - 1), pb = pick(0, kh - 1), pl = pick(0, kw - 1), pr = pick(0, kw - 1);
        const int h = pick(std::max(1, kh - pt - pb), 24), w = pick(std::max(1, kw - pl - pr), 40);
        const int oh = (h + pt + pb - kh) / sy + 1, ow = (w + pl + pr - kw) / sx + 1;
        Graph g;
        const int32_t x = add_tensor(&g, "x", DType::kFloat16, {1, c, h, w});
        g.inputs = {x};
        std::vector<uint16_t> wv(static_cast<size_t>(c) * kh * kw);
        for (uint16_t& v : wv) v = rknn::float_to_half(dist(rng));
        const int32_t wt = g.add_constant("w", DType::kFloat16, {c, 1, kh, kw},
                                          rknn::graph::Buffer::copy_of(wv.data(), wv.size() * 2));
        std::vector<float> b(static_cast<size_t>(c));
        for (float& v : b) v = dist(rng);
        const int32_t bt = g.add_constant("b", DType::kFloat32, {c}, rknn::graph::Buffer::copy_of(b.data(), b.size() * 4));
        const int32_t y = add_tensor(&g, "y", DType::kFloat16, {1, c, oh, ow});
        rknn::graph::Op op{OpType::kConv, "dw", "", {x, wt, bt}, {y}, {}};
        op.attrs.set_ints("kernel_shape", {kh, kw});
        op.attrs.set_ints("strides", {sy, sx});
        op.attrs.set_ints("pads", {pt, pl, pb, pr});
        op.attrs.set_int("group", c);
        if (i % 3 == 1) {
            rknn::cpu::kernels::Activation act;
            act.type = i % 2 ? OpType::kHardSwish : OpType::kRelu;
            rknn::cpu::set_fused_activation(&op, act);
        }
        g.add_op(op);
        g.outputs = {y};
        HostTensor input(DType::kFloat16, {1, c, h, w});
        for (int64_t j = 0; j < input.numel(); ++j) input.data<uint16_t>()[j] = rknn::float_to_half(dist(rng));
        const auto placement = npu::place_op(g, g.ops[0], rknn::hw::default_soc());
        if (placement.target != npu::Target::kNpu) continue;
        const uint32_t mask = i % 4 == 3 ? 7u : 0u;
        const auto value = [&](int32_t) -> const HostTensor& { return input; };
        const uint64_t before = rknn::emulator::conv_cube_path_tasks();
        auto cube = npu::testing::run_graph_op(g, g.ops[0], value, mask);
        ASSERT_TRUE(cube.is_ok()) << cube.status().message();
        ASSERT_GT(rknn::emulator::conv_cube_path_tasks(), before) << "case " << i << ": the cube path did not run";
        rknn::emulator::set_conv_cube_paths(false);
        auto image = npu::testing::run_graph_op(g, g.ops[0], value, mask);
        rknn::emulator::set_conv_cube_paths(true);
        ASSERT_TRUE(image.is_ok()) << image.status().message();
        ASSERT_EQ(cube.value().output.size(), image.value().output.size());
        EXPECT_TRUE(cube.value().output == image.value().output)
            << "case " << i << ": " << c << " channels " << h << "x" << w << " kernel " << kh << "x" << kw << " stride "
            << sy << "," << sx << " pads " << pt << "," << pl << "," << pb << "," << pr;
        ++compared;
    }
    std::printf("fp16 depthwise: %d random layers, the cube path against the padded image\n", compared);
    EXPECT_GE(compared, 60);
}

// Inputs of 1, 3 or 4 channels as channel-packed NHWC images (how the
// runtime keeps such model inputs), with row bands on the larger ones.
TEST(NpuFp16Conv, PackedImageInputsStayWithinTolerance) {
    std::mt19937 rng(88);
    auto pick = [&rng](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
    const OpType acts[] = {OpType::kIdentity, OpType::kRelu, OpType::kClip, OpType::kLeakyRelu};
    double worst = 0;
    for (int i = 0; i < 40; ++i) {
        Fp16Case c;
        const int channels[] = {1, 3, 4};
        c.c_in = channels[rng() % 3];
        c.c_out = pick(1, 40);
        c.k = pick(1, 6);
        c.stride = pick(1, 3);
        c.pad = pick(0, c.k - 1);
        const int big = i % 8 == 0 ? 200 : 14;  // some need several row bands
        c.h = pick(std::max(1, c.k - 2 * c.pad), big);
        c.w = pick(std::max(1, c.k - 2 * c.pad), big);
        c.activation = acts[rng() % 4];
        c.depthwise = false;
        c.residual = rng() % 4 == 0;
        if (c.residual && c.activation != OpType::kIdentity) c.activation = OpType::kRelu;
        c.packed = true;
        const auto ok = check(c, 500u + static_cast<uint32_t>(i), &worst);
        ASSERT_TRUE(ok) << "case " << i << ": " << c.c_in << "->" << c.c_out << " " << c.h << "x" << c.w << " k" << c.k
                        << " s" << c.stride << " p" << c.pad;
    }
    std::printf("fp16 conv, packed inputs: 40 random layers, largest difference %.2f of the tolerance\n", worst);
    EXPECT_LE(worst, 1.0);
}

// An fp16 matrix product on the NPU as M one-pixel rows against the CPU
// reference: within 2 ulps plus the fp32 summation bound. `batch_of_one`:
// [1, M, K] x [K, N] as a MatMul, else [M, K] x [N, K]^T + bias as a Gemm.
void expect_fp16_product_within_tolerance(bool batch_of_one, int m, int k, int n, std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const rknn::graph::Shape a_shape = batch_of_one ? rknn::graph::Shape{1, m, k} : rknn::graph::Shape{m, k};
    const rknn::graph::Shape y_shape = batch_of_one ? rknn::graph::Shape{1, m, n} : rknn::graph::Shape{m, n};
    Graph g;
    const int32_t a = add_tensor(&g, "a", DType::kFloat16, a_shape);
    g.inputs = {a};
    std::vector<uint16_t> w(static_cast<size_t>(n * k));
    for (uint16_t& v : w) v = rknn::float_to_half(dist(rng));
    std::vector<float> b(batch_of_one ? 0 : static_cast<size_t>(n));
    for (float& v : b) v = dist(rng);
    const rknn::graph::Shape w_shape = batch_of_one ? rknn::graph::Shape{k, n} : rknn::graph::Shape{n, k};
    const int32_t wid = g.add_constant("w", DType::kFloat16, w_shape, rknn::graph::Buffer::copy_of(w.data(), w.size() * 2));
    const int32_t y = add_tensor(&g, "y", DType::kFloat16, y_shape);
    if (batch_of_one) {
        g.add_op(rknn::graph::Op{OpType::kMatMul, "matmul", "", {a, wid}, {y}, {}});
    } else {
        const int32_t bid = g.add_constant("b", DType::kFloat32, {n}, rknn::graph::Buffer::copy_of(b.data(), b.size() * 4));
        rknn::graph::Op op{OpType::kGemm, "gemm", "", {a, wid, bid}, {y}, {}};
        op.attrs.set_int("transB", 1);
        g.add_op(op);
    }
    g.outputs = {y};
    HostTensor x(DType::kFloat16, a_shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<uint16_t>()[i] = rknn::float_to_half(dist(rng));
    auto exec = rknn::cpu::GraphExecutor::create(g);
    ASSERT_TRUE(exec.is_ok());
    std::vector<HostTensor> ref;
    ASSERT_TRUE(exec.value()->run({x}, &ref).is_ok());
    const auto placement = npu::place_op(g, g.ops[0], rknn::hw::default_soc());
    ASSERT_EQ(placement.target, npu::Target::kNpu) << placement.reason;
    auto run = npu::testing::run_graph_op(g, g.ops[0], [&](int32_t) -> const HostTensor& { return x; });
    ASSERT_TRUE(run.is_ok()) << run.status().message();
    const auto* got = reinterpret_cast<const uint16_t*>(run.value().output.data());
    for (int r = 0; r < m; ++r)
        for (int o = 0; o < n; ++o) {
            double magnitude = b.empty() ? 0.0 : std::fabs(b[static_cast<size_t>(o)]);
            for (int j = 0; j < k; ++j) {
                const size_t wi = static_cast<size_t>(batch_of_one ? j * n + o : o * k + j);
                magnitude += std::fabs(rknn::half_to_float(x.data<uint16_t>()[r * k + j]) * rknn::half_to_float(w[wi]));
            }
            const size_t i = static_cast<size_t>(r * n + o);
            const double rv = rknn::half_to_float(ref[0].data<uint16_t>()[i]);
            const double v = rknn::half_to_float(got[i]);
            EXPECT_LE(std::fabs(v - rv), 2.0 * ulp_of(std::max(std::fabs(rv), std::fabs(v))) +
                                             (k + 2) * std::ldexp(1.0, -23) * magnitude)
                << "M=" << m << " row " << r << " output " << o;
        }
}

TEST(NpuFp16Conv, MultiRowGemmStaysWithinTolerance) {
    std::mt19937 rng(77);
    for (int m : {1, 3, 17}) expect_fp16_product_within_tolerance(false, m, 37, 21, rng);
}

// The batch-of-one MatMul sequence models export (PP-OCR rec's neck).
TEST(NpuFp16Conv, BatchOfOneMatMulStaysWithinTolerance) {
    std::mt19937 rng(78);
    for (int m : {3, 40}) expect_fp16_product_within_tolerance(true, m, 24, 19, rng);
}

// A convolution with a fused SiLU (PP-OCRv4 rec's fp16 layers): the runtime
// splits the activation off, so the NPU runs the products and the CPU the
// SiLU; the split graph's result stays within an fp16 ulp or two of the fused
// one (one more rounding to fp16, before the activation).
TEST(NpuFp16Conv, ActivationsTheFloatPipelineLacksAreSplitOff) {
    Graph g;
    const int32_t x = add_tensor(&g, "x", DType::kFloat16, {1, 8, 6, 6});
    g.inputs = {x};
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
    std::vector<uint16_t> w(12 * 8 * 9);
    for (uint16_t& v : w) v = rknn::float_to_half(dist(rng));
    const int32_t wt = g.add_constant("w", DType::kFloat16, {12, 8, 3, 3}, rknn::graph::Buffer::copy_of(w.data(), w.size() * 2));
    const int32_t y = add_tensor(&g, "y", DType::kFloat16, {1, 12, 4, 4});
    rknn::graph::Op op{OpType::kConv, "conv", "", {x, wt}, {y}, {}};
    rknn::cpu::kernels::Activation act;
    act.type = OpType::kSilu;
    act.post_scale = 0.5f;
    act.post_bias = 0.25f;
    rknn::cpu::set_fused_activation(&op, act);
    g.add_op(op);
    g.outputs = {y};
    Graph split = g;
    const auto& soc = rknn::hw::default_soc();
    EXPECT_EQ(npu::split_activations_the_npu_lacks(&split, soc), 1);
    ASSERT_EQ(split.ops.size(), 2u);
    EXPECT_EQ(npu::place_op(split, split.ops[0], soc).target, npu::Target::kNpu);
    EXPECT_FALSE(split.ops[0].attrs.has("activation"));
    EXPECT_EQ(split.ops[1].type, OpType::kSilu);
    EXPECT_EQ(split.ops[1].outputs[0], y);
    EXPECT_EQ(split.ops[1].attrs.get_float("post_scale", 1.0f), 0.5f);
    EXPECT_EQ(npu::split_activations_the_npu_lacks(&split, soc), 0) << "nothing left to split";

    HostTensor input(DType::kFloat16, {1, 8, 6, 6});
    for (int64_t i = 0; i < input.numel(); ++i) input.data<uint16_t>()[i] = rknn::float_to_half(dist(rng) * 4.0f);
    std::vector<HostTensor> fused, parted;
    ASSERT_TRUE(rknn::cpu::GraphExecutor::create(g).value()->run({input}, &fused).is_ok());
    split.outputs = {y, split.ops[0].outputs[0]};  // and the convolution's own output
    ASSERT_TRUE(rknn::cpu::GraphExecutor::create(split).value()->run({input}, &parted).is_ok());
    ASSERT_EQ(parted.size(), 2u);
    for (int64_t i = 0; i < fused[0].numel(); ++i) {
        const double a = rknn::half_to_float(fused[0].data<uint16_t>()[i]), b = rknn::half_to_float(parted[0].data<uint16_t>()[i]);
        // The rounded input moves SiLU (slope < 1.1) by half an ulp of it, scaled by 0.5.
        const double before = std::fabs(rknn::half_to_float(parted[1].data<uint16_t>()[i]));
        EXPECT_LE(std::fabs(a - b), 2.0 * ulp_of(std::max(std::fabs(a), std::fabs(b))) + 0.5 * 1.1 * 0.5 * ulp_of(before)) << i;
    }
}

TEST(NpuFp16Conv, WhatTheFloatPipelineCannotRunStaysOnTheCpu) {
    Graph g;
    const int32_t x = add_tensor(&g, "x", DType::kFloat16, {1, 8, 6, 6});
    g.inputs = {x};
    std::vector<uint16_t> w(8 * 8 * 9, rknn::float_to_half(0.1f));
    const int32_t wt = g.add_constant("w", DType::kFloat16, {8, 8, 3, 3}, rknn::graph::Buffer::copy_of(w.data(), w.size() * 2));
    const int32_t y = add_tensor(&g, "y", DType::kFloat16, {1, 8, 4, 4});
    rknn::graph::Op op{OpType::kConv, "conv", "", {x, wt}, {y}, {}};
    rknn::cpu::kernels::Activation act;
    act.type = OpType::kSilu;
    rknn::cpu::set_fused_activation(&op, act);
    g.add_op(op);
    const auto placement = npu::place_op(g, g.ops[0], rknn::hw::default_soc());
    EXPECT_EQ(placement.target, npu::Target::kCpu);
    EXPECT_NE(placement.reason.find("LUT"), std::string::npos) << placement.reason;
}

}  // namespace
