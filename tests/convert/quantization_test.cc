// int8 quantisation quality: percentile clipping, bias correction, the
// automatic hybrid choice of float16 layers, the precision rules at
// Concats, and the progress line the long stages print.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/test_graphs.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "quant/calibrate.h"
#include "quant/hybrid.h"
#include "quant/quantize.h"
#include "util/progress.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::Op;
using rknn::graph::OpType;
using rknn::graph::Shape;
namespace convert = rknn::convert;

int32_t value(Graph* g, const std::string& name, const Shape& shape) {
    rknn::graph::Tensor t;
    t.name = name;
    t.shape = shape;
    return g->add_tensor(t);
}

int32_t constant(Graph* g, const std::string& name, const Shape& shape, const std::vector<float>& v) {
    return g->add_constant(name, DType::kFloat32, shape, rknn::graph::Buffer::copy_of(v.data(), v.size() * 4));
}

// Per-channel values: channel c gets offset[c] + noise.
HostTensor channel_data(const Shape& shape, const std::vector<float>& offset, float noise, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-noise, noise);
    HostTensor t(DType::kFloat32, shape);
    const int64_t channels = shape[1];
    int64_t inner = 1;
    for (size_t i = 2; i < shape.size(); ++i) inner *= shape[i];
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = offset[static_cast<size_t>((i / inner) % channels)] + d(rng);
    return t;
}

std::vector<HostTensor> run(const Graph& g, const std::vector<HostTensor>& inputs, bool int8 = true) {
    auto out = rknn::testing::run_reference(g, inputs, int8);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    return out.is_ok() ? out.value() : std::vector<HostTensor>{HostTensor(DType::kFloat32, {1})};
}

convert::CalibrationOptions quiet(convert::CalibMethod method = convert::CalibMethod::kMinMax) {
    convert::CalibrationOptions o;
    o.method = method;
    o.progress = false;
    return o;
}

TEST(Calibration, PercentileCutsTheTailsItIsAskedTo) {
    // 10000 values at bins 0..99 and 10 outliers in the last bin, over [0, 1000).
    std::vector<double> counts(1000, 0.0);
    for (int b = 0; b < 100; ++b) counts[static_cast<size_t>(b)] = 100.0;
    counts[999] = 10.0;
    const convert::TensorRange keep_all = convert::percentile_range(counts, 0.0f, 1000.0f, 100.0);
    EXPECT_FLOAT_EQ(keep_all.max, 1000.0f);
    const convert::TensorRange cut = convert::percentile_range(counts, 0.0f, 1000.0f, 99.9);
    EXPECT_FLOAT_EQ(cut.min, 0.0f);
    EXPECT_NEAR(cut.max, 100.0f, 1.0f);  // the outliers (0.1%) are gone, nothing else
    // Signed data loses half the share at each end.
    std::vector<double> signed_counts(200, 1.0);
    const convert::TensorRange s = convert::percentile_range(signed_counts, -100.0f, 100.0f, 90.0);
    EXPECT_NEAR(s.min, -90.0f, 1.0f);
    EXPECT_NEAR(s.max, 90.0f, 1.0f);
}

TEST(Calibration, ChannelMeansAreRecordedForConvolutionInputs) {
    Graph g;
    const int32_t x = value(&g, "x", {1, 2, 4, 4});
    const int32_t y = value(&g, "y", {1, 1, 4, 4});
    g.add_op({OpType::kConv, "conv", "", {x, constant(&g, "w", {1, 2, 1, 1}, {0.5f, 0.5f})}, {y}, {}});
    g.inputs = {x};
    g.outputs = {y};
    auto calibration = convert::calibrate(g, {{channel_data({1, 2, 4, 4}, {3.0f, -1.0f}, 0.0f, 1)}}, quiet());
    ASSERT_TRUE(calibration.is_ok()) << calibration.status().message();
    const auto it = calibration.value().channel_means.find("x");
    ASSERT_NE(it, calibration.value().channel_means.end());
    ASSERT_EQ(it->second.size(), 2u);
    EXPECT_NEAR(it->second[0], 3.0, 1e-6);
    EXPECT_NEAR(it->second[1], -1.0, 1e-6);
    EXPECT_EQ(calibration.value().channel_means.count("y"), 0u);  // read by nothing
}

// A depthwise 3x3 whose weights round badly to 127 levels, on inputs far from
// zero: without correction each channel's mean output drifts.
TEST(Quantization, BiasCorrectionRemovesTheMeanShiftOfRoundedWeights) {
    const int64_t c = 8;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> w_dist(0.02f, 0.2f);
    std::vector<float> w(static_cast<size_t>(c * 9)), offsets(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) {
        for (int t = 0; t < 9; ++t) w[static_cast<size_t>(k * 9 + t)] = t == 4 ? 1.0f : w_dist(rng);
        offsets[static_cast<size_t>(k)] = 2.0f + 0.5f * static_cast<float>(k);
    }
    const auto build = [&]() {
        Graph g;
        const int32_t x = value(&g, "x", {1, c, 12, 12});
        const int32_t y = value(&g, "y", {1, c, 10, 10});
        rknn::graph::Attributes a;
        a.set_int("group", c);
        g.add_op({OpType::kConv, "dw", "", {x, constant(&g, "w", {c, 1, 3, 3}, w)}, {y}, a});
        g.inputs = {x};
        g.outputs = {y};
        return g;
    };
    std::vector<std::vector<HostTensor>> samples;
    for (uint32_t s = 0; s < 4; ++s) samples.push_back({channel_data({1, c, 12, 12}, offsets, 0.5f, 10 + s)});
    const Graph float_graph = build();
    auto calibration = convert::calibrate(float_graph, samples, quiet());
    ASSERT_TRUE(calibration.is_ok());
    const HostTensor probe = channel_data({1, c, 12, 12}, offsets, 0.5f, 99);
    const HostTensor expected = run(float_graph, {probe}, false)[0];
    double shift[2] = {0.0, 0.0};
    for (int corrected = 0; corrected < 2; ++corrected) {
        Graph g = build();
        convert::QuantizeOptions options;
        if (corrected) options.channel_means = &calibration.value().channel_means;
        ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, options).is_ok());
        HostTensor in = rknn::cpu::make_tensor_like(g.tensors[g.inputs[0]], probe.shape());
        ASSERT_TRUE(rknn::cpu::from_float32(probe, &in).is_ok());
        const HostTensor actual = run(g, {in})[0];
        // Mean absolute shift of each channel's mean.
        for (int64_t k = 0; k < c; ++k) {
            double diff = 0.0;
            for (int64_t i = 0; i < 100; ++i) diff += actual.data<float>()[k * 100 + i] - expected.data<float>()[k * 100 + i];
            shift[corrected] += std::fabs(diff / 100.0) / static_cast<double>(c);
        }
    }
    EXPECT_LT(shift[1], 0.5 * shift[0]) << "without " << shift[0] << ", with " << shift[1];
}

// x -> pointwise conv (one channel 40x the others) -> depthwise 3x3 -> y.
// The depthwise layer sees its small channels through a scale set by the big
// one: the hybrid analysis finds it and keeps it, and its producer, in float16.
Graph outlier_graph() {
    Graph g;
    const int32_t x = value(&g, "x", {1, 4, 8, 8});
    const int32_t p = value(&g, "p", {1, 4, 8, 8});
    const int32_t y = value(&g, "y", {1, 4, 8, 8});
    std::vector<float> pw(16, 0.0f);
    for (int k = 0; k < 4; ++k) pw[static_cast<size_t>(k * 4 + k)] = k == 0 ? 40.0f : 1.0f;
    g.add_op({OpType::kConv, "pointwise", "", {x, constant(&g, "pw", {4, 4, 1, 1}, pw)}, {p}, {}});
    std::vector<float> dw(36, 0.1f);
    rknn::graph::Attributes a;
    a.set_int("group", 4);
    a.set_ints("pads", {1, 1, 1, 1});
    g.add_op({OpType::kConv, "depthwise", "", {p, constant(&g, "dw", {4, 1, 3, 3}, dw)}, {y}, a});
    g.inputs = {x};
    g.outputs = {y};
    return g;
}

TEST(Hybrid, TheLayerHurtByItsInputsScaleIsKeptInFloat16WithItsProducer) {
    const Graph float_graph = outlier_graph();
    std::vector<std::vector<HostTensor>> samples;
    for (uint32_t s = 0; s < 3; ++s) samples.push_back({channel_data({1, 4, 8, 8}, {0.0f, 0.0f, 0.0f, 0.0f}, 1.0f, s)});
    auto calibration = convert::calibrate(float_graph, samples, quiet());
    ASSERT_TRUE(calibration.is_ok());
    Graph g = float_graph;
    ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, {}).is_ok());
    auto errors = convert::single_layer_errors(float_graph, g, samples, nullptr);
    ASSERT_TRUE(errors.is_ok()) << errors.status().message();
    ASSERT_EQ(errors.value().size(), 2u);
    EXPECT_EQ(errors.value()[1].op, "depthwise");
    EXPECT_LT(errors.value()[1].cosine, errors.value()[0].cosine);
    std::vector<convert::LayerError> kept;
    const std::set<std::string> fp16 =
        convert::choose_fp16_ops(g, errors.value(), errors.value()[1].cosine + 1e-6, 0.5, &kept);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].op, "depthwise");
    EXPECT_EQ(fp16, (std::set<std::string>{"depthwise", "pointwise"}));
    // At most the given share of the layers.
    EXPECT_TRUE(convert::choose_fp16_ops(g, errors.value(), 2.0, 0.0, &kept).empty());
    // Requantised with them in float16, the output is closer to the float model.
    Graph hybrid = float_graph;
    convert::QuantizeOptions options;
    options.fp16_ops = fp16;
    ASSERT_TRUE(convert::quantize_int8(&hybrid, calibration.value().ranges, options).is_ok());
    EXPECT_EQ(hybrid.tensors[hybrid.outputs[0]].dtype, DType::kFloat16);
    const HostTensor probe = channel_data({1, 4, 8, 8}, {0.0f, 0.0f, 0.0f, 0.0f}, 1.0f, 77);
    const HostTensor expected = run(float_graph, {probe}, false)[0];
    double error[2] = {0.0, 0.0};
    int which = 0;
    for (const Graph* q : {&g, &hybrid}) {
        HostTensor in = rknn::cpu::make_tensor_like(q->tensors[q->inputs[0]], probe.shape());
        ASSERT_TRUE(rknn::cpu::from_float32(probe, &in).is_ok());
        const HostTensor actual = run(*q, {in})[0];
        for (int64_t i = 64; i < actual.numel(); ++i)  // the small channels
            error[which] += std::fabs(actual.data<float>()[i] - expected.data<float>()[i]);
        ++which;
    }
    EXPECT_LT(error[1], 0.2 * error[0]);
}

// A Concat of a float16 layer's output and an int8 one: its inputs end up in
// one precision (float16), whichever layer --fp16-layers named.
TEST(Quantization, AConcatsInputsShareOnePrecision) {
    for (const char* named : {"left", "cat"}) {
        SCOPED_TRACE(named);
        Graph g;
        const int32_t x = value(&g, "x", {1, 2, 4, 4});
        const int32_t l = value(&g, "l", {1, 2, 4, 4});
        const int32_t r = value(&g, "r", {1, 2, 4, 4});
        const int32_t y = value(&g, "y", {1, 4, 4, 4});
        const std::vector<float> w = {1.0f, 0.5f, -0.5f, 1.0f};
        g.add_op({OpType::kConv, "left", "", {x, constant(&g, "wl", {2, 2, 1, 1}, w)}, {l}, {}});
        g.add_op({OpType::kConv, "right", "", {x, constant(&g, "wr", {2, 2, 1, 1}, w)}, {r}, {}});
        rknn::graph::Attributes axis;
        axis.set_int("axis", 1);
        g.add_op({OpType::kConcat, "cat", "", {l, r}, {y}, axis});
        g.inputs = {x};
        g.outputs = {y};
        auto calibration = convert::calibrate(g, {{channel_data({1, 2, 4, 4}, {0.0f, 0.0f}, 1.0f, 3)}}, quiet());
        ASSERT_TRUE(calibration.is_ok());
        convert::QuantizeOptions options;
        options.fp16_ops = {named};
        ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, options).is_ok());
        const DType left = g.tensors[g.ops[0].outputs[0]].dtype;
        EXPECT_EQ(left, DType::kFloat16);
        EXPECT_EQ(g.tensors[g.ops[1].outputs[0]].dtype, left);
        EXPECT_EQ(g.tensors[g.ops[2].outputs[0]].dtype, left);
    }
}

TEST(Progress, TheLineCountsElapsedTimeAndWhatIsLeft) {
    EXPECT_EQ(convert::Progress::format("calibration", 4, 16, "samples", 2.0, false),
              "calibration 4/16 samples, 2.0 s, about 6.0 s left");
    EXPECT_EQ(convert::Progress::format("calibration", 16, 16, "samples", 75.0, false),
              "calibration 16/16 samples, 1 min 15 s");
    const std::string bar = convert::Progress::format("x", 7, 28, "layers", 1.0, true);
    EXPECT_NE(bar.find("[#######.....................]"), std::string::npos) << bar;
}

}  // namespace
