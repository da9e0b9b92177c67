// The NPU-arithmetic int8 reference: requantisation maths, and each int8
// kernel against the float kernel on dequantised values (within the
// quantisation step), plus exact cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "cpu/int8/lut_stage.h"
#include "cpu/int8/requant.h"
#include "cpu/kernels/scalar_math.h"
#include "common/test_graphs.h"

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
namespace int8 = rknn::cpu::int8;

TEST(Requant, RoundShiftRoundsHalfToEven) {
    EXPECT_EQ(int8::round_shift(5, 1), 2);    // 2.5 -> 2
    EXPECT_EQ(int8::round_shift(7, 1), 4);    // 3.5 -> 4
    EXPECT_EQ(int8::round_shift(-5, 1), -2);  // -2.5 -> -2
    EXPECT_EQ(int8::round_shift(-7, 1), -4);  // -3.5 -> -4
    EXPECT_EQ(int8::round_shift(-6, 2), -2);  // -1.5 -> -2
    EXPECT_EQ(int8::round_shift(6, 2), 2);    // 1.5 -> 2
    EXPECT_EQ(int8::round_shift(9, 2), 2);    // 2.25 -> 2
    EXPECT_EQ(int8::round_shift(-9, 2), -2);
    EXPECT_EQ(int8::round_shift(11, 2), 3);   // 2.75 -> 3
    EXPECT_EQ(int8::round_shift(123, 0), 123);
    EXPECT_EQ(int8::round_shift(int64_t{1} << 40, 62), 0);
}

TEST(Requant, MultipliersAre16BitAndAccurate) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> log_factor(-20.0, 3.0);
    for (int i = 0; i < 1000; ++i) {
        const double f = std::exp2(log_factor(rng));
        const int8::Requant r = int8::make_requant(f);
        ASSERT_LE(std::abs(r.multipliers[0]), int8::kMaxMultiplier);
        ASSERT_GE(r.multipliers[0], 16384) << "the multiplier uses its 15 bits";
        EXPECT_NEAR(r.multipliers[0] * std::exp2(-r.shift), f, f / 16384.0);
    }
}

TEST(Requant, ChannelsShareOneShift) {
    const int8::Requant r = int8::make_requant(std::vector<double>{0.001, 0.01, 0.0005});
    ASSERT_EQ(r.multipliers.size(), 3u);
    // The largest factor sets the shift; the others keep their ratio.
    EXPECT_GE(r.multipliers[1], 16384);
    EXPECT_NEAR(r.multipliers[0] * std::exp2(-r.shift), 0.001, 0.01 / 16384.0);
    EXPECT_NEAR(r.multipliers[2] * std::exp2(-r.shift), 0.0005, 0.01 / 16384.0);
    const int8::Requant zero = int8::make_requant(0.0);
    EXPECT_EQ(zero.multipliers[0], 0);
}

TEST(LutStage, ReproducesTheActivationWithinOneOutputStep) {
    rknn::cpu::kernels::Activation silu;
    silu.type = OpType::kSilu;
    const float out_scale = 6.0f / 255.0f;
    const int8::LutStage lut = int8::make_lut_stage(silu, -8.0f, 6.0f, out_scale);
    ASSERT_EQ(lut.table.size(), static_cast<size_t>(int8::LutStage::kEntries));
    for (int v = -16384; v <= 16384; v += 37) {
        const double x = v * lut.in_scale;
        const double expected = x / (1.0 + std::exp(-x)) / out_scale;
        EXPECT_NEAR(static_cast<double>(lut.apply(v)), expected, 0.6) << "v=" << v;
    }
    EXPECT_EQ(lut.apply(1 << 20), lut.apply(16384)) << "inputs beyond the domain saturate";
}

// One op graph: quantised input(s) -> op -> quantised output, run with and
// without the int8 kernels.
struct OneOp {
    Graph g;
    std::vector<HostTensor> inputs;
};




std::vector<HostTensor> run(const Graph& g, const std::vector<HostTensor>& inputs, bool int8_kernels) {
    rknn::cpu::GraphExecutor::Options options;
    options.use_int8_kernels = int8_kernels;
    auto exec = rknn::cpu::GraphExecutor::create(g, options);
    EXPECT_TRUE(exec.is_ok()) << exec.status().message();
    std::vector<HostTensor> outputs;
    rknn::cpu::GraphExecutor::RunStats stats;
    const rknn::Status status = exec.value()->run(inputs, &outputs, nullptr, &stats);
    EXPECT_TRUE(status.is_ok()) << status.message();
    // The comparison means something only if the int8 kernels really ran.
    if (int8_kernels) {
        EXPECT_EQ(stats.int8_ops, static_cast<int>(g.ops.size())) << "an op fell back to float";
    }
    return outputs;
}

// Largest difference, in output steps, between the int8 kernel and the float
// kernel on the same quantised tensors.
int max_step_difference(const Graph& g, const std::vector<HostTensor>& inputs) {
    const std::vector<HostTensor> a = run(g, inputs, true);
    const std::vector<HostTensor> b = run(g, inputs, false);
    int worst = 0;
    for (size_t k = 0; k < a.size(); ++k) {
        for (int64_t i = 0; i < a[k].numel(); ++i)
            worst = std::max(worst, std::abs(a[k].data<int8_t>()[i] - b[k].data<int8_t>()[i]));
    }
    return worst;
}

// An int8 convolution graph with per-channel symmetric weights and int32 bias.
OneOp conv_case(int64_t c_in, int64_t c_out, int64_t size, int64_t k, int64_t stride, int64_t pad, int64_t group,
                uint32_t seed) {
    OneOp c;
    Graph& g = c.g;
    const QuantParams qx = per_tensor(0.05f, -7);
    const int32_t x = add_tensor(&g, "x", DType::kInt8, {1, c_in, size, size}, qx);
    g.inputs = {x};
    std::mt19937 rng(seed);
    const Shape wshape = {c_out, c_in / group, k, k};
    std::vector<int8_t> w(static_cast<size_t>(rknn::graph::num_elements(wshape)));
    for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    QuantParams qw;
    qw.axis = 0;
    for (int64_t o = 0; o < c_out; ++o) {
        qw.scales.push_back(0.002f + 0.001f * static_cast<float>(o % 5));
        qw.zero_points.push_back(0);
    }
    const int32_t wt = g.add_constant("w", DType::kInt8, wshape, rknn::graph::Buffer::copy_of(w.data(), w.size()));
    g.tensors[wt].quant = qw;
    std::vector<int32_t> b(static_cast<size_t>(c_out));
    for (int32_t& v : b) v = static_cast<int32_t>(rng() % 2001) - 1000;
    QuantParams qb = qw;
    for (float& s : qb.scales) s *= qx.scales[0];
    const int32_t bt = g.add_constant("b", DType::kInt32, {c_out}, rknn::graph::Buffer::copy_of(b.data(), b.size() * 4));
    g.tensors[bt].quant = qb;
    const int64_t out = (size + 2 * pad - k) / stride + 1;
    const int32_t y = add_tensor(&g, "y", DType::kInt8, {1, c_out, out, out}, per_tensor(0.08f, 3));
    Op op{OpType::kConv, "conv", "", {x, wt, bt}, {y}, {}};
    op.attrs.set_ints("strides", {stride, stride});
    op.attrs.set_ints("pads", {pad, pad, pad, pad});
    op.attrs.set_int("group", group);
    g.add_op(op);
    g.outputs = {y};
    c.inputs = {random_int8({1, c_in, size, size}, qx, seed + 1)};
    return c;
}

TEST(Int8Kernels, ConvolutionsMatchFloatWithinOneStep) {
    struct Shape5 {
        int64_t c_in, c_out, size, k, stride, pad, group;
    };
    const Shape5 shapes[] = {{3, 8, 9, 3, 1, 1, 1},   {16, 16, 8, 3, 2, 1, 1}, {8, 8, 7, 3, 1, 1, 8},
                             {32, 16, 5, 1, 1, 0, 1}, {6, 12, 11, 5, 2, 2, 3}, {4, 4, 6, 7, 1, 3, 1}};
    uint32_t seed = 100;
    for (const Shape5& s : shapes) {
        const OneOp c = conv_case(s.c_in, s.c_out, s.size, s.k, s.stride, s.pad, s.group, seed++);
        // The float path rounds once from exact real values; the int8 path
        // rounds the requantisation product: they may differ by one step.
        EXPECT_LE(max_step_difference(c.g, c.inputs), 1) << "conv " << s.c_in << "->" << s.c_out << " k" << s.k;
    }
}

TEST(Int8Kernels, FusedReluAndResidualMatchFloat) {
    OneOp c = conv_case(8, 8, 6, 3, 1, 1, 1, 7);
    const int32_t r = add_tensor(&c.g, "r", DType::kInt8, {1, 8, 6, 6}, per_tensor(0.06f, 10));
    c.g.inputs.push_back(r);
    c.inputs.push_back(random_int8({1, 8, 6, 6}, c.g.tensors[r].quant, 8));
    Op& conv = c.g.ops[0];
    conv.inputs.push_back(r);
    conv.attrs.set_int("fused_add", 1);
    conv.attrs.set_string("activation", "Relu");
    // Two rounded terms (conv and residual) against one rounding: within 2 steps.
    EXPECT_LE(max_step_difference(c.g, c.inputs), 2);
    const HostTensor y = run(c.g, c.inputs, true)[0];
    int at_zero_point = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
        EXPECT_GE(y.data<int8_t>()[i], 3) << "ReLU clamps at the output zero point";
        at_zero_point += y.data<int8_t>()[i] == 3;
    }
    EXPECT_GT(at_zero_point, 0) << "some outputs were clamped";
}

TEST(Int8Kernels, FusedLutActivationTracksTheFunction) {
    OneOp c = conv_case(8, 8, 6, 3, 1, 1, 1, 9);
    Op& conv = c.g.ops[0];
    conv.attrs.set_string("activation", "Silu");
    conv.attrs.set_floats("act_range", {-12.0f, 12.0f});
    c.g.tensors[c.g.outputs[0]].quant = per_tensor(0.05f, -100);
    EXPECT_LE(max_step_difference(c.g, c.inputs), 1);
}

// Resize (opset 11+: X, roi, scales) of a [1, C, H, W] int8 tensor.
OneOp resize_case(const Shape& in, float scale_h, float scale_w, const std::string& mode,
                  const std::string& coordinates, const std::string& nearest, const QuantParams& qx,
                  const QuantParams& qy, uint32_t seed) {
    OneOp c;
    const int32_t x = add_tensor(&c.g, "x", DType::kInt8, in, qx);
    const float scales[4] = {1.0f, 1.0f, scale_h, scale_w};
    const int32_t s = c.g.add_constant("scales", DType::kFloat32, {4}, rknn::graph::Buffer::copy_of(scales, sizeof(scales)));
    const Shape out = {in[0], in[1], static_cast<int64_t>(std::floor(static_cast<double>(in[2]) * scale_h)),
                       static_cast<int64_t>(std::floor(static_cast<double>(in[3]) * scale_w))};
    const int32_t y = add_tensor(&c.g, "y", DType::kInt8, out, qy);
    c.g.inputs = {x};
    c.g.outputs = {y};
    Op op{OpType::kResize, "resize", "", {x, -1, s}, {y}, {}};
    op.attrs.set_string("mode", mode);
    op.attrs.set_string("coordinate_transformation_mode", coordinates);
    op.attrs.set_string("nearest_mode", nearest);
    c.g.add_op(op);
    c.inputs = {random_int8(in, qx, seed)};
    return c;
}

TEST(Int8Kernels, NearestResizeEqualsTheFloatPath) {
    struct Case {
        Shape in;
        float sh, sw;
        const char* coordinates;
        const char* nearest;
        bool same_quant;
    };
    const Case cases[] = {
        {{1, 8, 10, 10}, 2.0f, 2.0f, "asymmetric", "floor", true},  // YOLO's upsample
        {{1, 96, 60, 60}, 2.0f, 2.0f, "asymmetric", "floor", false},  // PP-OCR's: rows over threads
        {{2, 7, 33, 45}, 1.75f, 3.0f, "half_pixel", "round_prefer_floor", true},
        {{1, 8, 10, 10}, 2.0f, 2.0f, "asymmetric", "floor", false},
        {{1, 3, 9, 7}, 1.5f, 0.5f, "half_pixel", "round_prefer_floor", false},
        {{1, 5, 6, 11}, 3.0f, 0.75f, "align_corners", "round_prefer_ceil", false},
        {{1, 2, 13, 4}, 0.4f, 2.5f, "pytorch_half_pixel", "ceil", true},
        {{1, 4, 7, 7}, 1.25f, 1.0f, "tf_half_pixel_for_nn", "floor", false},
        {{1, 24, 15, 15}, 8.0f, 8.0f, "asymmetric", "floor", true},  // PP-OCR's 8x and 4x upsamples
        {{1, 24, 30, 30}, 4.0f, 4.0f, "asymmetric", "floor", false},
        {{1, 3, 5, 9}, 4.0f, 8.0f, "asymmetric", "floor", false},
    };
    uint32_t seed = 300;
    for (const Case& k : cases) {
        const QuantParams qx = per_tensor(0.05f, -7);
        const QuantParams qy = k.same_quant ? qx : per_tensor(0.031f, 11);
        const OneOp c = resize_case(k.in, k.sh, k.sw, "nearest", k.coordinates, k.nearest, qx, qy, seed++);
        // run() checks that the int8 kernel ran; nearest neighbours move codes, so no step may differ.
        EXPECT_EQ(max_step_difference(c.g, c.inputs), 0) << k.coordinates << " " << k.nearest;
    }
    // The kernel really selects elements: an upsampled 2x2 block repeats its source code.
    const OneOp up = resize_case({1, 1, 3, 3}, 2.0f, 2.0f, "nearest", "asymmetric", "floor", per_tensor(0.1f, 0),
                                 per_tensor(0.1f, 0), 9);
    const HostTensor y = run(up.g, up.inputs, true)[0];
    const int8_t* x = up.inputs[0].data<int8_t>();
    for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(y.data<int8_t>()[i * 6 + j], x[(i / 2) * 3 + j / 2]);
}

// A pool whose one window is the whole plane (GlobalAveragePool, and
// GlobalMaxPool) sums or compares it in a vectorised loop, over threads;
// the general windowed loop gives the same window's code when one more
// output column is padded on (its first output covers the same plane).
TEST(Int8Kernels, WholePlanePoolsEqualTheWindowedLoop) {
    const QuantParams qx = per_tensor(0.05f, -9), qy = per_tensor(0.02f, 13);
    for (bool average : {true, false}) {
        for (const Shape& shape : {Shape{1, 96, 120, 120}, Shape{2, 5, 7, 3}}) {
            SCOPED_TRACE(std::string(average ? "average " : "max ") + rknn::graph::shape_to_string(shape));
            HostTensor x = rknn::testing::random_int8(shape, qx, 21);
            if (!average) {  // a cap per plane, so that the maxima differ
                const int64_t plane = shape[2] * shape[3];
                for (int64_t i = 0; i < x.numel(); ++i) {
                    const auto cap = static_cast<int8_t>((i / plane) * 37 % 200 - 100);
                    x.data<int8_t>()[i] = std::min(x.data<int8_t>()[i], cap);
                }
            }
            const auto pool = [&](bool global) {
                Graph g;
                const int32_t in = rknn::testing::add_tensor(&g, "x", DType::kInt8, shape, qx);
                Shape out_shape{shape[0], shape[1], 1, global ? 1 : 2};
                const int32_t out = rknn::testing::add_tensor(&g, "y", DType::kInt8, out_shape, qy);
                Op op{global ? (average ? OpType::kGlobalAveragePool : OpType::kGlobalMaxPool)
                             : (average ? OpType::kAveragePool : OpType::kMaxPool),
                      "pool", "", {in}, {out}, {}};
                if (!global) {
                    op.attrs.set_ints("kernel_shape", {shape[2], shape[3]});
                    op.attrs.set_ints("pads", {0, 0, 0, 1});
                }
                g.add_op(op);
                g.inputs = {in};
                g.outputs = {out};
                return run(g, {x}, true)[0];
            };
            const HostTensor whole = pool(true), windowed = pool(false);
            const int64_t planes = shape[0] * shape[1];
            ASSERT_EQ(whole.numel(), planes);
            int differ = 0;
            for (int64_t p = 0; p < planes; ++p) differ += whole.data<int8_t>()[p] != windowed.data<int8_t>()[2 * p];
            EXPECT_EQ(differ, 0);
            // The codes vary from plane to plane (the test is not vacuous).
            int distinct = 0;
            for (int64_t p = 1; p < planes; ++p) distinct += whole.data<int8_t>()[p] != whole.data<int8_t>()[0];
            EXPECT_GT(distinct, 0);
        }
    }
}

// The float reference form of Softmax (cpu/kernels/normalization.cc) between
// the executor's conversions, one row: widen the codes, subtract the largest
// value in float, exp and sum in double, divide, round to float, quantise.
std::vector<int8_t> softmax_reference_codes(const int8_t* row, int64_t n, const QuantParams& qx, const QuantParams& qy,
                                            std::vector<double>* scaled) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
        x[static_cast<size_t>(i)] = static_cast<float>((static_cast<double>(row[i]) - qx.zero_point(0)) * qx.scale(0));
    float top = -INFINITY;
    for (float v : x) top = std::fmax(top, v);
    std::vector<double> e(x.size());
    double total = 0.0;
    for (size_t i = 0; i < x.size(); ++i) total += e[i] = std::exp(static_cast<double>(x[i] - top));
    std::vector<int8_t> codes(x.size());
    scaled->resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const double q = static_cast<double>(static_cast<float>(e[i] / total)) / qy.scale(0);
        (*scaled)[i] = q;
        codes[i] = static_cast<int8_t>(std::clamp(std::nearbyint(q) + qy.zero_point(0), -128.0, 127.0));
    }
    return codes;
}

// int8 Softmax gives the codes of the float reference form, through its
// 256-entry tables on rows as long as PP-OCRv4 rec's classes, and through
// the vector row form on short rows (down to one element); where the
// difference in the last bits could matter (a result near a rounding
// boundary) one step is allowed. A softmax over an inner axis is left to the
// float kernel.
TEST(Int8Kernels, SoftmaxRowsGiveTheReferenceFormsCodes) {
    struct Case {
        Shape shape;
        QuantParams qx, qy;
        bool legacy = false;
    };
    const Case cases[] = {
        {{1, 40, 6625}, per_tensor(0.09f, -3), per_tensor(1.0f / 256, -128)},  // PP-OCRv4 rec's last layer
        {{1, 8, 40, 40}, per_tensor(0.031f, 7), per_tensor(1.0f / 255, -128)},  // attention weights
        {{3, 5}, per_tensor(0.5f, 0), per_tensor(0.004f, -100)},               // wide steps: large exps
        {{2, 1}, per_tensor(0.1f, 20), per_tensor(1.0f / 256, -128)},           // one element: 1.0
        {{2, 3, 4}, per_tensor(0.2f, -1), per_tensor(1.0f / 256, -128), true},  // opset 11: rows of 12
    };
    uint32_t seed = 640;
    int checked = 0, near_boundary = 0;
    for (const Case& c : cases) {
        Graph g;
        const int32_t x = add_tensor(&g, "x", DType::kInt8, c.shape, c.qx);
        const int32_t y = add_tensor(&g, "y", DType::kInt8, c.shape, c.qy);
        Op op{OpType::kSoftmax, "softmax", "", {x}, {y}, {}};
        if (c.legacy) {
            op.attrs.set_int("legacy_2d", 1);
            op.attrs.set_int("axis", 1);
        }
        g.add_op(op);
        g.inputs = {x};
        g.outputs = {y};
        const HostTensor in = random_int8(c.shape, c.qx, seed++);
        const HostTensor got = run(g, {in}, true)[0];  // checks that the int8 kernel ran
        ASSERT_EQ(got.numel(), in.numel());
        const int64_t n = c.legacy ? c.shape[1] * c.shape[2] : c.shape.back();
        for (int64_t r = 0; r < in.numel() / n; ++r) {
            std::vector<double> scaled;
            const std::vector<int8_t> want = softmax_reference_codes(in.data<int8_t>() + r * n, n, c.qx, c.qy, &scaled);
            for (int64_t i = 0; i < n; ++i) {
                const int have = got.data<int8_t>()[r * n + i], expect = want[static_cast<size_t>(i)];
                const double q = scaled[static_cast<size_t>(i)];
                // Short rows take the vector exp (within 2^-20 of the reference form's
                // values: under 1e-3 of a code at these scales); long rows the tables.
                const bool boundary = std::fabs(q - std::floor(q) - 0.5) < (n < 256 ? 1e-3 : 1e-6);
                near_boundary += boundary;
                ASSERT_LE(std::abs(have - expect), boundary ? 1 : 0)
                    << rknn::graph::shape_to_string(c.shape) << " row " << r << " element " << i;
                ++checked;
            }
        }
    }
    std::printf("int8 softmax: %d codes checked, %d near a rounding boundary\n", checked, near_boundary);

    // Softmax over an inner axis: the float kernel runs it.
    Graph g;
    const int32_t x = add_tensor(&g, "x", DType::kInt8, {1, 4, 5}, per_tensor(0.1f, 0));
    const int32_t y = add_tensor(&g, "y", DType::kInt8, {1, 4, 5}, per_tensor(1.0f / 256, -128));
    Op op{OpType::kSoftmax, "softmax", "", {x}, {y}, {}};
    op.attrs.set_int("axis", 1);
    g.add_op(op);
    g.inputs = {x};
    g.outputs = {y};
    auto exec = rknn::cpu::GraphExecutor::create(g, {});
    ASSERT_TRUE(exec.is_ok()) << exec.status().message();
    std::vector<HostTensor> outputs;
    rknn::cpu::GraphExecutor::RunStats stats;
    ASSERT_TRUE(exec.value()->run({random_int8({1, 4, 5}, per_tensor(0.1f, 0), 3)}, &outputs, nullptr, &stats).is_ok());
    EXPECT_EQ(stats.int8_ops, 0);
    EXPECT_EQ(stats.reference_ops, 1);
}

TEST(Int8Kernels, LinearResizeIsLeftToTheFloatKernel) {
    const OneOp c = resize_case({1, 2, 5, 5}, 2.0f, 2.0f, "linear", "half_pixel", "floor", per_tensor(0.05f, 0),
                                per_tensor(0.05f, 0), 5);
    auto exec = rknn::cpu::GraphExecutor::create(c.g, {});
    ASSERT_TRUE(exec.is_ok()) << exec.status().message();
    std::vector<HostTensor> outputs;
    rknn::cpu::GraphExecutor::RunStats stats;
    ASSERT_TRUE(exec.value()->run(c.inputs, &outputs, nullptr, &stats).is_ok());
    EXPECT_EQ(stats.int8_ops, 0);
    EXPECT_EQ(stats.reference_ops, 1);
    EXPECT_EQ(outputs[0].numel(), 2 * 10 * 10);
}

OneOp binary_case(OpType type, const Shape& a_shape, const Shape& b_shape, uint32_t seed) {
    OneOp c;
    const QuantParams qa = per_tensor(0.03f, 5), qb = per_tensor(0.07f, -20), qy = per_tensor(0.09f, 1);
    const int32_t a = add_tensor(&c.g, "a", DType::kInt8, a_shape, qa);
    const int32_t b = add_tensor(&c.g, "b", DType::kInt8, b_shape, qb);
    const int32_t y = add_tensor(&c.g, "y", DType::kInt8, a_shape, qy);
    c.g.inputs = {a, b};
    c.g.outputs = {y};
    c.g.add_op({type, "op", "", {a, b}, {y}, {}});
    c.inputs = {random_int8(a_shape, qa, seed), random_int8(b_shape, qb, seed + 1)};
    return c;
}

TEST(Int8Kernels, ElementwiseOpsMatchFloatWithinOneStep) {
    for (OpType type : {OpType::kAdd, OpType::kSub, OpType::kMul, OpType::kMax, OpType::kMin}) {
        const OneOp same = binary_case(type, {1, 4, 5, 5}, {1, 4, 5, 5}, 21);
        EXPECT_LE(max_step_difference(same.g, same.inputs), 1) << rknn::graph::op_type_name(type);
        const OneOp channel = binary_case(type, {1, 4, 5, 5}, {1, 4, 1, 1}, 23);
        EXPECT_LE(max_step_difference(channel.g, channel.inputs), 1) << "per-channel broadcast";
        const OneOp scalar = binary_case(type, {1, 4, 5, 5}, {1}, 25);
        EXPECT_LE(max_step_difference(scalar.g, scalar.inputs), 1) << "scalar operand";
    }
}

// The row loops (32-bit lanes where the codes fit, 64-bit otherwise) give
// the NPU formula's int8 exactly, computed here in 64 bits element by element:
// whole rows, a row operand broadcast down the rows (a classifier's bias),
// a column broadcast along them, a scalar, and scales from small to large.
TEST(Int8Kernels, ElementwiseRowsGiveTheNpuFormulaExactly) {
    struct Form {
        Shape a, b;
    };
    const Form forms[] = {{{1, 3, 5, 67}, {1, 3, 5, 67}}, {{1, 40, 133}, {133}}, {{1, 3, 5, 67}, {1, 3, 5, 1}}, {{2, 70}, {1}}};
    // The last: factors of exactly 1/2, so half the sums fall on a tie (half to even).
    const float scales[][3] = {{0.03f, 0.07f, 0.09f}, {0.5f, 0.004f, 0.05f}, {0.01f, 0.01f, 0.8f}, {0.2f, 0.3f, 0.001f},
                               {0.25f, 0.25f, 0.5f}};
    int compared = 0;
    for (OpType type : {OpType::kAdd, OpType::kSub, OpType::kMul, OpType::kMax, OpType::kMin}) {
        for (size_t i = 0; i < std::size(forms) * std::size(scales); ++i) {
            const size_t f = i / std::size(scales);
            const float* sc = scales[i % std::size(scales)];
            const QuantParams qa = per_tensor(sc[0], 5), qb = per_tensor(sc[1], -128), qy = per_tensor(sc[2], -3);
            OneOp c;
            const int32_t a = add_tensor(&c.g, "a", DType::kInt8, forms[f].a, qa);
            const int32_t b = add_tensor(&c.g, "b", DType::kInt8, forms[f].b, qb);
            const int32_t y = add_tensor(&c.g, "y", DType::kInt8, forms[f].a, qy);
            c.g.inputs = {a, b};
            c.g.outputs = {y};
            c.g.add_op({type, "op", "", {a, b}, {y}, {}});
            c.inputs = {random_int8(forms[f].a, qa, 31 + static_cast<uint32_t>(i)),
                        random_int8(forms[f].b, qb, 37 + static_cast<uint32_t>(i))};
            const std::vector<HostTensor> out = run(c.g, c.inputs, true);
            const bool mul = type == OpType::kMul;
            const rknn::cpu::int8::Requant r = mul ? rknn::cpu::int8::make_requant(double{sc[0]} * sc[1] / sc[2])
                                                   : rknn::cpu::int8::make_requant({double{sc[0]} / sc[2], double{sc[1]} / sc[2]});
            const int64_t ma = r.multiplier(0), mb = mul ? 0 : r.multiplier(1);
            const int64_t last = forms[f].a.back(), rows = out[0].numel() / last;
            for (int64_t e = 0; e < out[0].numel(); ++e) {
                int64_t eb = 0;  // b's element for output e
                if (c.inputs[1].numel() == out[0].numel()) eb = e;
                else if (forms[f].b.size() == 1 && forms[f].b[0] == last) eb = e % last;
                else if (forms[f].b.back() == 1 && c.inputs[1].numel() == rows) eb = e / last;
                const int64_t da = c.inputs[0].data<int8_t>()[e] - 5, db = c.inputs[1].data<int8_t>()[eb] + 128;
                int64_t v = 0;
                switch (type) {
                case OpType::kAdd: v = da * ma + db * mb; break;
                case OpType::kSub: v = da * ma - db * mb; break;
                case OpType::kMul: v = da * db * ma; break;
                case OpType::kMax: v = std::max(da * ma, db * mb); break;
                default: v = std::min(da * ma, db * mb); break;
                }
                const int8_t want = rknn::cpu::int8::saturate_int8(rknn::cpu::int8::round_shift(v, r.shift) - 3);
                ASSERT_EQ(out[0].data<int8_t>()[e], want)
                    << rknn::graph::op_type_name(type) << " form " << f << " scales " << sc[0] << "," << sc[1] << ","
                    << sc[2] << " element " << e;
            }
            ++compared;
        }
    }
    EXPECT_EQ(compared, 100);
}

TEST(Int8Kernels, ActivationsAndPoolsMatchFloat) {
    for (OpType type : {OpType::kRelu, OpType::kSigmoid, OpType::kTanh, OpType::kHardSwish, OpType::kSilu,
                        OpType::kLeakyRelu}) {
        OneOp c;
        const QuantParams qa = per_tensor(0.04f, -3), qy = per_tensor(0.02f, -50);
        const int32_t a = add_tensor(&c.g, "a", DType::kInt8, {1, 2, 8, 8}, qa);
        const int32_t y = add_tensor(&c.g, "y", DType::kInt8, {1, 2, 8, 8}, qy);
        c.g.inputs = {a};
        c.g.outputs = {y};
        c.g.add_op({type, "act", "", {a}, {y}, {}});
        c.inputs = {random_int8({1, 2, 8, 8}, qa, 31)};
        EXPECT_LE(max_step_difference(c.g, c.inputs), 1) << rknn::graph::op_type_name(type);
    }
    for (OpType type : {OpType::kMaxPool, OpType::kAveragePool, OpType::kGlobalAveragePool}) {
        OneOp c;
        const QuantParams q = per_tensor(0.05f, 4);
        const bool global = type == OpType::kGlobalAveragePool;
        const int32_t a = add_tensor(&c.g, "a", DType::kInt8, {1, 3, 9, 9}, q);
        const int32_t y = add_tensor(&c.g, "y", DType::kInt8, global ? Shape{1, 3, 1, 1} : Shape{1, 3, 4, 4}, q);
        c.g.inputs = {a};
        c.g.outputs = {y};
        Op op{type, "pool", "", {a}, {y}, {}};
        if (!global) {
            op.attrs.set_ints("kernel_shape", {3, 3});
            op.attrs.set_ints("strides", {2, 2});
        }
        c.g.add_op(op);
        c.inputs = {random_int8({1, 3, 9, 9}, q, 41)};
        EXPECT_LE(max_step_difference(c.g, c.inputs), 1) << rknn::graph::op_type_name(type);
        if (type == OpType::kMaxPool) {
            EXPECT_EQ(max_step_difference(c.g, c.inputs), 0) << "max picks an input code";
        }
    }
    // Padded averages with a zero point, padded taps counted (zeros) or not.
    for (int include_pad : {0, 1}) {
        for (int32_t zp : {4, -37, 90}) {
            OneOp c;
            const QuantParams q = per_tensor(0.05f, zp);
            const int32_t a = add_tensor(&c.g, "a", DType::kInt8, {1, 3, 9, 9}, q);
            const int32_t y = add_tensor(&c.g, "y", DType::kInt8, {1, 3, 5, 5}, q);
            c.g.inputs = {a};
            c.g.outputs = {y};
            Op op{OpType::kAveragePool, "pool", "", {a}, {y}, {}};
            op.attrs.set_ints("kernel_shape", {3, 3});
            op.attrs.set_ints("strides", {2, 2});
            op.attrs.set_ints("pads", {1, 1, 1, 1});
            op.attrs.set_int("count_include_pad", include_pad);
            c.g.add_op(op);
            c.inputs = {random_int8({1, 3, 9, 9}, q, 43)};
            EXPECT_LE(max_step_difference(c.g, c.inputs), 1) << "count_include_pad " << include_pad << " zp " << zp;
        }
    }
}

}  // namespace
