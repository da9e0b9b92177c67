// int8 quantisation quality: percentile clipping, bias correction (for
// weight rounding, and empirical, for what a layer reads in the int8 model), the
// automatic hybrid choice of float16 layers, the precision rules at
// Concats, and the progress line the long stages print.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

#include "common/test_graphs.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "quant/bias_correction.h"
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

const Op& op_named(const Graph& g, const std::string& name) {
    for (const Op& op : g.ops)
        if (op.name == name) return op;
    ADD_FAILURE() << "no op " << name;
    return g.ops.front();
}

convert::CalibrationOptions quiet(convert::CalibMethod method = convert::CalibMethod::kMinMax) {
    convert::CalibrationOptions o;
    o.method = method;
    o.progress = false;
    return o;
}

// Runs the int8 graph `g` on `probe` and returns the mean, over the output's
// channels (axis 1: NCHW, or the columns of a matrix), of
// |mean of the channel - mean of `expected`'s|.
double channel_mean_shift(const Graph& g, const HostTensor& probe, const HostTensor& expected) {
    HostTensor in = rknn::cpu::make_tensor_like(g.tensors[g.inputs[0]], probe.shape());
    EXPECT_TRUE(rknn::cpu::from_float32(probe, &in).is_ok());
    const HostTensor actual = rknn::cpu::to_float32(run(g, {in})[0]);
    if (actual.shape() != expected.shape()) return INFINITY;
    const int64_t channels = expected.shape()[1];
    int64_t inner = 1;
    for (size_t d = 2; d < expected.shape().size(); ++d) inner *= expected.shape()[d];
    std::vector<double> diff(static_cast<size_t>(channels), 0.0);
    for (int64_t i = 0; i < expected.numel(); ++i)
        diff[static_cast<size_t>((i / inner) % channels)] += actual.data<float>()[i] - expected.data<float>()[i];
    double shift = 0.0;
    for (double d : diff) shift += std::fabs(d / static_cast<double>(expected.numel() / channels)) / static_cast<double>(channels);
    return shift;
}

// Quantises `build()` with t's int8 range cut to 60% of what it holds (so what
// reads t sees a smaller mean than the float model), then returns the output's
// channel mean shift on a probe with weight-rounding correction only [0] and
// with the empirical pass [1]; `corrected` gets the pass's layer count.
template <typename Build>
std::array<double, 2> shift_with_and_without_empirical_correction(const Build& build, const Shape& input,
                                                                   const std::vector<float>& offsets, int* corrected) {
    std::vector<std::vector<HostTensor>> samples;
    for (uint32_t s = 0; s < 4; ++s) samples.push_back({channel_data(input, offsets, 0.5f, 20 + s)});
    const Graph float_graph = build();
    auto calibration = convert::calibrate(float_graph, samples, quiet());
    EXPECT_TRUE(calibration.is_ok());
    if (!calibration.is_ok()) return {0.0, INFINITY};
    std::vector<convert::TensorRange> ranges = calibration.value().ranges;
    ranges[static_cast<size_t>(float_graph.find_tensor("t"))].max *= 0.6f;
    const HostTensor probe = channel_data(input, offsets, 0.5f, 77);
    const HostTensor expected = run(float_graph, {probe}, false)[0];
    std::array<double, 2> shift = {0.0, 0.0};
    for (int pass = 0; pass < 2; ++pass) {
        Graph g = build();
        convert::QuantizeOptions options;
        options.channel_means = &calibration.value().channel_means;
        EXPECT_TRUE(convert::quantize_int8(&g, ranges, options).is_ok());
        if (pass == 1) {
            auto result = convert::correct_biases_empirically(&g, calibration.value().channel_means, samples, nullptr);
            EXPECT_TRUE(result.is_ok()) << result.status().message();
            *corrected = result.is_ok() ? result.value().layers_corrected : -1;
        }
        shift[static_cast<size_t>(pass)] = channel_mean_shift(g, probe, expected);
    }
    return shift;
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
        shift[corrected] = channel_mean_shift(g, probe, expected);
    }
    EXPECT_LT(shift[1], 0.5 * shift[0]) << "without " << shift[0] << ", with " << shift[1];
}

// x -> "a" -> t -> "b" -> y, with t's int8 range cut to 60% of what it holds:
// t's big channels saturate, so "b" reads a smaller mean than the float
// model's. Weight-rounding correction cannot see that; the empirical pass
// measures it in the int8 model and cancels it. Depthwise, grouped and dense
// convolutions, and Gemm with B as [K, N] and as [N, K], index their weights
// differently: each is checked.
TEST(Quantization, EmpiricalBiasCorrectionCancelsTheShiftOfWhatALayerReads) {
    struct Case {
        const char* name;
        int64_t groups_b;  // 0: Gemm layers
        int64_t out_b;
        int trans_b;
    };
    for (const Case& k : {Case{"depthwise", 6, 6, 0}, Case{"grouped", 2, 4, 0}, Case{"dense", 1, 5, 0},
                          Case{"gemm", 0, 5, 0}, Case{"gemm transB", 0, 5, 1}}) {
        SCOPED_TRACE(k.name);
        const int64_t c = 6;
        std::vector<float> offsets(static_cast<size_t>(c));
        for (int64_t i = 0; i < c; ++i) offsets[static_cast<size_t>(i)] = 1.0f + 1.5f * static_cast<float>(i);
        const bool gemm = k.groups_b == 0;
        const Shape input = gemm ? Shape{8, c} : Shape{1, c, 12, 12};
        const int64_t in_per_group = gemm ? c : c / k.groups_b;
        const int64_t taps = gemm ? 1 : 9;
        std::vector<float> wb(static_cast<size_t>(k.out_b * in_per_group * taps));
        // Weights that differ a lot from one (input, output) pair to the next, so
        // reading the wrong one shows.
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> w_dist(-0.3f, 0.3f);
        for (float& w : wb) w = w_dist(rng);
        const auto build = [&]() {
            Graph g;
            const int32_t x = value(&g, "x", input);
            const int32_t t = value(&g, "t", input);
            const int32_t y = value(&g, "y", gemm ? Shape{8, k.out_b} : Shape{1, k.out_b, 10, 10});
            if (gemm) {
                std::vector<float> eye(static_cast<size_t>(c * c), 0.0f);
                for (int64_t i = 0; i < c; ++i) eye[static_cast<size_t>(i * c + i)] = 1.0f;
                g.add_op({OpType::kGemm, "a", "", {x, constant(&g, "wa", {c, c}, eye)}, {t}, {}});
                rknn::graph::Attributes a;
                a.set_int("transB", k.trans_b);
                const Shape w_shape = k.trans_b ? Shape{k.out_b, c} : Shape{c, k.out_b};
                g.add_op({OpType::kGemm, "b", "", {t, constant(&g, "wb", w_shape, wb)}, {y}, a});
            } else {
                rknn::graph::Attributes depthwise, grouped;
                depthwise.set_int("group", c);
                grouped.set_int("group", k.groups_b);
                g.add_op({OpType::kConv, "a", "", {x, constant(&g, "wa", {c, 1, 1, 1}, std::vector<float>(c, 1.0f))}, {t},
                          depthwise});
                g.add_op({OpType::kConv, "b", "", {t, constant(&g, "wb", {k.out_b, in_per_group, 3, 3}, wb)}, {y}, grouped});
            }
            g.inputs = {x};
            g.outputs = {y};
            return g;
        };
        int corrected = 0;
        const std::array<double, 2> shift = shift_with_and_without_empirical_correction(build, input, offsets, &corrected);
        EXPECT_EQ(corrected, 2);
        EXPECT_LT(shift[1], 0.25 * shift[0]) << "weight rounding only " << shift[0] << ", empirical " << shift[1];
    }
}

// A bias that two layers read is left alone: rewriting it for one would move the other.
TEST(Quantization, EmpiricalBiasCorrectionLeavesSharedBiasesAlone) {
    Graph g;
    const int32_t x = value(&g, "x", {1, 2, 4, 4});
    const int32_t y1 = value(&g, "y1", {1, 2, 4, 4});
    const int32_t y2 = value(&g, "y2", {1, 2, 4, 4});
    const int32_t w = constant(&g, "w", {2, 2, 1, 1}, {1.0f, 0.5f, -0.5f, 1.0f});
    const int32_t b = constant(&g, "b", {2}, {0.25f, -0.25f});
    g.add_op({OpType::kConv, "c1", "", {x, w, b}, {y1}, {}});
    g.add_op({OpType::kConv, "c2", "", {x, w, b}, {y2}, {}});
    g.inputs = {x};
    g.outputs = {y1, y2};
    std::vector<std::vector<HostTensor>> samples = {{channel_data({1, 2, 4, 4}, {3.0f, -1.0f}, 1.0f, 3)}};
    auto calibration = convert::calibrate(g, samples, quiet());
    ASSERT_TRUE(calibration.is_ok());
    ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, {}).is_ok());
    {
        Graph separate = g;  // control: with a bias each, both are corrected
        auto result = convert::correct_biases_empirically(&separate, calibration.value().channel_means, samples, nullptr);
        ASSERT_TRUE(result.is_ok()) << result.status().message();
        EXPECT_EQ(result.value().layers_corrected, 2);
    }
    // Same input, same weights: the same int32 bias. Let both read one tensor.
    g.ops[1].inputs[2] = g.ops[0].inputs[2];
    const std::vector<uint8_t> before(g.constant_buffer(g.ops[0].inputs[2])->data,
                                      g.constant_buffer(g.ops[0].inputs[2])->data + 8);
    auto result = convert::correct_biases_empirically(&g, calibration.value().channel_means, samples, nullptr);
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    EXPECT_EQ(result.value().layers_corrected, 0);
    const uint8_t* after = g.constant_buffer(g.ops[0].inputs[2])->data;
    EXPECT_TRUE(std::equal(before.begin(), before.end(), after));
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

// The outlier graph calibrated on three samples, quantised to int8, and the
// single-layer error of each of its two layers.
class HybridOnOutliers : public ::testing::Test {
protected:
    void SetUp() override {
        for (uint32_t s = 0; s < 3; ++s)
            samples.push_back({channel_data({1, 4, 8, 8}, {0.0f, 0.0f, 0.0f, 0.0f}, 1.0f, s)});
        auto calibration = convert::calibrate(float_graph, samples, quiet());
        ASSERT_TRUE(calibration.is_ok());
        ranges = calibration.value().ranges;
        int8 = float_graph;
        ASSERT_TRUE(convert::quantize_int8(&int8, ranges, {}).is_ok());
        auto layer_errors = convert::single_layer_errors(float_graph, int8, samples, nullptr);
        ASSERT_TRUE(layer_errors.is_ok()) << layer_errors.status().message();
        errors = layer_errors.value();
    }

    const Graph float_graph = outlier_graph();
    std::vector<std::vector<HostTensor>> samples;
    std::vector<convert::TensorRange> ranges;
    Graph int8;
    std::vector<convert::LayerError> errors;
};

TEST_F(HybridOnOutliers, TheLayerHurtByItsInputsScaleIsKeptInFloat16WithItsProducer) {
    ASSERT_EQ(errors.size(), 2u);
    EXPECT_EQ(errors[1].op, "depthwise");
    EXPECT_LT(errors[1].cosine, errors[0].cosine);
    std::vector<convert::LayerError> kept;
    const std::set<std::string> fp16 =
        convert::choose_fp16_ops(int8, errors, errors[1].cosine + 1e-6, 0.5, &kept);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].op, "depthwise");
    EXPECT_EQ(fp16, (std::set<std::string>{"depthwise", "pointwise"}));
    // At most the given share of the layers.
    EXPECT_TRUE(convert::choose_fp16_ops(int8, errors, 2.0, 0.0, &kept).empty());
    // Requantised with them in float16, the output is closer to the float model.
    Graph hybrid = float_graph;
    convert::QuantizeOptions options;
    options.fp16_ops = fp16;
    ASSERT_TRUE(convert::quantize_int8(&hybrid, ranges, options).is_ok());
    EXPECT_EQ(hybrid.tensors[hybrid.outputs[0]].dtype, DType::kFloat16);
    const HostTensor probe = channel_data({1, 4, 8, 8}, {0.0f, 0.0f, 0.0f, 0.0f}, 1.0f, 77);
    const HostTensor expected = run(float_graph, {probe}, false)[0];
    double error[2] = {0.0, 0.0};
    int which = 0;
    for (const Graph* q : {&int8, &hybrid}) {
        HostTensor in = rknn::cpu::make_tensor_like(q->tensors[q->inputs[0]], probe.shape());
        ASSERT_TRUE(rknn::cpu::from_float32(probe, &in).is_ok());
        const HostTensor actual = run(*q, {in})[0];
        for (int64_t i = 64; i < actual.numel(); ++i)  // the small channels
            error[which] += std::fabs(actual.data<float>()[i] - expected.data<float>()[i]);
        ++which;
    }
    EXPECT_LT(error[1], 0.2 * error[0]);
}

convert::LayerError layer_error(const std::string& op, double cosine) {
    convert::LayerError e;
    e.op = op;
    e.op_type = "Conv";
    e.cosine = cosine;
    return e;
}

bool has_op(const std::vector<convert::LayerError>& kept, const std::string& op) {
    return std::any_of(kept.begin(), kept.end(), [&](const convert::LayerError& e) { return e.op == op; });
}

// --hybrid output with a made-up score: the outputs fall under the floor
// whenever "b" or "d" is int8, whatever their single-layer scores say. The
// search ends with exactly those two, worst single layer first, after one
// measurement of everything in float16 and one per block tried.
TEST(Hybrid, TheOutputSearchKeepsOnlyTheLayersTheOutputsNeed) {
    const std::vector<convert::LayerError> errors = {layer_error("a", 0.90), layer_error("b", 0.999),
                                                     layer_error("c", 0.95), layer_error("d", 0.97),
                                                     layer_error("e", 0.99)};
    std::vector<double> stops;
    const convert::KeptSetScore score = [&](const std::vector<convert::LayerError>& kept,
                                            double stop_below) -> rknn::StatusOr<double> {
        stops.push_back(stop_below);
        double worst = 0.999;
        if (!has_op(kept, "b")) worst -= 0.01;
        if (!has_op(kept, "d")) worst -= 0.02;
        return worst;
    };
    auto search = convert::fewest_fp16_layers_for_outputs(errors, 0.995, score, nullptr);
    ASSERT_TRUE(search.is_ok()) << search.status().message();
    ASSERT_EQ(search.value().kept.size(), 2u);
    EXPECT_EQ(search.value().kept[0].op, "d");
    EXPECT_EQ(search.value().kept[1].op, "b");
    EXPECT_DOUBLE_EQ(search.value().worst, 0.999);
    EXPECT_DOUBLE_EQ(search.value().worst_all_fp16, 0.999);
    // All five, then blocks: {c,d,e,b} fails, {e,b} fails, {b} fails,
    // {e} goes back, {c,d} fails, {d} fails, {c} goes back, then {a}.
    EXPECT_EQ(search.value().evaluations, 9u);
    // Only the first measurement must run to the end; the trials may stop at the floor.
    ASSERT_EQ(stops.size(), 9u);
    EXPECT_EQ(stops[0], 0.0);
    for (size_t i = 1; i < stops.size(); ++i) EXPECT_EQ(stops[i], 0.995);
}

// Most layers of a real model can go back: they go back in blocks, so the
// measurements grow with the layers that must stay, not with the model.
TEST(Hybrid, TheOutputSearchGivesLayersBackInBlocks) {
    std::vector<convert::LayerError> errors;
    for (int i = 0; i < 100; ++i) errors.push_back(layer_error("l" + std::to_string(i), 0.9 + i * 0.0009));
    size_t passing = 0;
    const convert::KeptSetScore score = [&](const std::vector<convert::LayerError>& kept,
                                            double) -> rknn::StatusOr<double> {
        const bool holds = has_op(kept, "l17") && has_op(kept, "l63");
        passing += holds ? 1 : 0;
        return holds ? 0.999 : 0.98;
    };
    auto search = convert::fewest_fp16_layers_for_outputs(errors, 0.99, score, nullptr);
    ASSERT_TRUE(search.is_ok()) << search.status().message();
    ASSERT_EQ(search.value().kept.size(), 2u);
    EXPECT_EQ(search.value().kept[0].op, "l17");
    EXPECT_EQ(search.value().kept[1].op, "l63");
    // One at a time would be 101 measurements, 99 of them passing (every
    // sample measured); blocks take a handful of each.
    EXPECT_LE(search.value().evaluations, 30u);
    EXPECT_LE(passing, 16u);
}

// When even every layer in float16 misses the floor, every layer is kept and
// nothing more is measured; a failing measurement is passed on.
TEST(Hybrid, TheOutputSearchKeepsEveryLayerWhenEvenFloat16MissesTheFloor) {
    const std::vector<convert::LayerError> errors = {layer_error("a", 0.90), layer_error("b", 0.999)};
    size_t calls = 0;
    const convert::KeptSetScore low = [&](const std::vector<convert::LayerError>&, double) -> rknn::StatusOr<double> {
        ++calls;
        return 0.98;
    };
    auto search = convert::fewest_fp16_layers_for_outputs(errors, 0.99, low, nullptr);
    ASSERT_TRUE(search.is_ok());
    EXPECT_EQ(search.value().kept.size(), 2u);
    EXPECT_EQ(calls, 1u);
    EXPECT_DOUBLE_EQ(search.value().worst_all_fp16, 0.98);
    const convert::KeptSetScore broken = [](const std::vector<convert::LayerError>&, double) -> rknn::StatusOr<double> {
        return rknn::Status(rknn::StatusCode::kInternal, "cannot run");
    };
    EXPECT_FALSE(convert::fewest_fp16_layers_for_outputs(errors, 0.99, broken, nullptr).is_ok());
}

// The same search on a real graph, measured by OutputProbe: on the outlier
// graph the outputs need the depthwise layer (and so its producer) in float16,
// and the pointwise layer alone is given back.
TEST_F(HybridOnOutliers, TheOutputSearchFindsTheLayerTheOutputsNeed) {
    auto probe = convert::OutputProbe::create(float_graph, samples);
    ASSERT_TRUE(probe.is_ok()) << probe.status().message();
    EXPECT_EQ(probe.value().samples(), 3u);
    const convert::KeptSetScore score = [&](const std::vector<convert::LayerError>& kept,
                                            double stop_below) -> rknn::StatusOr<double> {
        convert::QuantizeOptions options;
        options.fp16_ops = convert::choose_fp16_ops(float_graph, kept, 2.0, 1.0, nullptr);
        Graph trial = float_graph;
        RKNN_RETURN_IF_ERROR(convert::quantize_int8(&trial, ranges, options));
        return probe.value().worst_cosine(trial, stop_below);
    };
    auto all_int8 = probe.value().worst_cosine(int8);
    auto all_fp16 = score(errors, 0.0);
    ASSERT_TRUE(all_int8.is_ok() && all_fp16.is_ok());
    ASSERT_LT(all_int8.value(), all_fp16.value());
    const double floor = 0.5 * (all_int8.value() + all_fp16.value());
    auto search = convert::fewest_fp16_layers_for_outputs(errors, floor, score, nullptr);
    ASSERT_TRUE(search.is_ok()) << search.status().message();
    ASSERT_EQ(search.value().kept.size(), 1u);
    EXPECT_EQ(search.value().kept[0].op, "depthwise");
    EXPECT_GE(search.value().worst, floor);
    // Stopping early still reports a cosine under the floor when there is one.
    EXPECT_LT(probe.value().worst_cosine(int8, floor).value(), floor);
}

// A user op (no CPU kernel) in the int8 graph: the pass runs what it can,
// names the op it could not run, and does not fall over.
TEST(Quantization, EmpiricalBiasCorrectionNamesTheOpsItCannotRun) {
    Graph g;
    const int32_t x = value(&g, "x", {1, 2, 4, 4});
    const int32_t t = value(&g, "t", {1, 2, 4, 4});
    const int32_t u = value(&g, "u", {1, 2, 4, 4});
    g.add_op({OpType::kConv, "a", "",
              {x, constant(&g, "w", {2, 2, 1, 1}, {1.0f, 0.5f, -0.5f, 1.0f}), constant(&g, "b", {2}, {0.1f, 0.2f})},
              {t}, {}});
    Op custom{OpType::kCustom, "mystery", "Mystery", {t}, {u}, {}};
    g.add_op(custom);
    g.inputs = {x};
    g.outputs = {u};
    const std::vector<std::vector<HostTensor>> samples = {{channel_data({1, 2, 4, 4}, {1.0f, 2.0f}, 0.5f, 4)}};
    auto calibration = convert::calibrate(g, samples, quiet());
    ASSERT_TRUE(calibration.is_ok());
    ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, {}).is_ok());
    auto result = convert::correct_biases_empirically(&g, calibration.value().channel_means, samples, nullptr);
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    EXPECT_EQ(result.value().layers_corrected, 1);
    ASSERT_EQ(result.value().failed_ops.size(), 1u);
    EXPECT_NE(result.value().failed_ops[0].find("mystery"), std::string::npos) << result.value().failed_ops[0];
}

// A Resize kept in float16 (--fp16-layers, --hybrid) still reads its scales
// as float32: they are shape parameters, and float16 scales are refused.
TEST(Quantization, AFloat16ResizeKeepsItsScalesFloat32) {
    Graph g;
    const int32_t x = value(&g, "x", {1, 2, 4, 4});
    const int32_t t = value(&g, "t", {1, 2, 4, 4});
    const int32_t y = value(&g, "y", {1, 2, 8, 8});
    g.add_op({OpType::kConv, "conv", "", {x, constant(&g, "w", {2, 2, 1, 1}, {1.0f, 0.5f, -0.5f, 1.0f})}, {t}, {}});
    rknn::graph::Attributes nearest;
    nearest.set_string("mode", "nearest");
    g.add_op({OpType::kResize, "resize", "", {t, -1, constant(&g, "scales", {4}, {1.0f, 1.0f, 2.0f, 2.0f})}, {y}, nearest});
    g.inputs = {x};
    g.outputs = {y};
    const std::vector<std::vector<HostTensor>> samples = {{channel_data({1, 2, 4, 4}, {1.0f, -1.0f}, 1.0f, 8)}};
    auto calibration = convert::calibrate(g, samples, quiet());
    ASSERT_TRUE(calibration.is_ok());
    convert::QuantizeOptions options;
    options.fp16_ops = {"resize"};
    ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, options).is_ok());
    const Op& resize = op_named(g, "resize");
    ASSERT_EQ(resize.type, OpType::kResize);
    EXPECT_EQ(g.tensors[resize.inputs[0]].dtype, DType::kFloat16);
    EXPECT_EQ(g.tensors[resize.inputs[2]].dtype, DType::kFloat32);
    HostTensor in = rknn::cpu::make_tensor_like(g.tensors[g.inputs[0]], {1, 2, 4, 4});
    ASSERT_TRUE(rknn::cpu::from_float32(samples[0][0], &in).is_ok());
    EXPECT_EQ(run(g, {in})[0].shape(), (Shape{1, 2, 8, 8}));
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
        const DType left = g.tensors[op_named(g, "left").outputs[0]].dtype;
        EXPECT_EQ(left, DType::kFloat16);
        EXPECT_EQ(g.tensors[op_named(g, "right").outputs[0]].dtype, left);
        EXPECT_EQ(g.tensors[op_named(g, "cat").outputs[0]].dtype, left);
    }
}

// x -> a -> b (float16) -> c -> y: b reads a DequantizeLinear copy of a's
// output, and c, which reads float16, becomes a float16 layer whose output a
// QuantizeLinear writes. No layer mixes int8 and float16 (those ran on the
// CPU), and the result stays as close to the float model.
TEST(Quantization, EveryLayerIsWhollyInt8OrFloat16) {
    Graph g;
    const int32_t x = value(&g, "x", {1, 2, 4, 4});
    const int32_t ta = value(&g, "ta", {1, 2, 4, 4});
    const int32_t tb = value(&g, "tb", {1, 2, 4, 4});
    const int32_t y = value(&g, "y", {1, 2, 4, 4});
    const std::vector<float> w = {1.0f, 0.5f, -0.5f, 1.0f};
    g.add_op({OpType::kConv, "a", "", {x, constant(&g, "wa", {2, 2, 1, 1}, w)}, {ta}, {}});
    g.add_op({OpType::kConv, "b", "", {ta, constant(&g, "wb", {2, 2, 1, 1}, w)}, {tb}, {}});
    g.add_op({OpType::kConv, "c", "", {tb, constant(&g, "wc", {2, 2, 1, 1}, w), constant(&g, "bc", {2}, {0.1f, -0.1f})},
              {y}, {}});
    g.inputs = {x};
    g.outputs = {y};
    const Graph float_graph = g;
    const std::vector<std::vector<HostTensor>> samples = {{channel_data({1, 2, 4, 4}, {1.0f, -1.0f}, 1.0f, 5)}};
    auto calibration = convert::calibrate(g, samples, quiet());
    ASSERT_TRUE(calibration.is_ok());
    convert::QuantizeOptions options;
    options.fp16_ops = {"b"};
    ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, options).is_ok());
    const auto dtype = [&g](int32_t t) { return g.tensors[t].dtype; };
    for (const Op& op : g.ops) {
        if (op.type != OpType::kConv) continue;
        SCOPED_TRACE(op.name);
        EXPECT_EQ(dtype(op.inputs[0]), dtype(op.outputs[0]));
        EXPECT_EQ(dtype(op.inputs[1]), dtype(op.outputs[0]));
    }
    EXPECT_EQ(dtype(op_named(g, "a").outputs[0]), DType::kInt8);
    EXPECT_EQ(dtype(op_named(g, "b").inputs[0]), DType::kFloat16);
    EXPECT_EQ(dtype(op_named(g, "c").outputs[0]), DType::kFloat16);
    EXPECT_EQ(rknn::testing::count_ops(g, OpType::kDequantizeLinear), 1);
    EXPECT_EQ(rknn::testing::count_ops(g, OpType::kQuantizeLinear), 1);
    // The graph output is still int8, written by the QuantizeLinear after c.
    EXPECT_EQ(dtype(g.outputs[0]), DType::kInt8);
    EXPECT_TRUE(g.tensors[g.outputs[0]].quant.is_quantized());
    HostTensor in = rknn::cpu::make_tensor_like(g.tensors[g.inputs[0]], {1, 2, 4, 4});
    ASSERT_TRUE(rknn::cpu::from_float32(samples[0][0], &in).is_ok());
    const HostTensor actual = run(g, {in})[0];
    const HostTensor expected = run(float_graph, samples[0], false)[0];
    const float step = g.tensors[g.outputs[0]].quant.scale();
    EXPECT_LE(rknn::testing::max_abs_difference(actual, expected), 2.0f * step);
}

// x -> a -> b (float16) -> c (promoted to float16) -> d (float16), and with
// `int8_reader` also c -> e (int8). d reads c's float16 result itself, not
// c's int8 rounding dequantised again; the QuantizeLinear after c stays only
// while e reads its int8 output.
TEST(Quantization, AFloat16LayerReadsAPromotedLayersFloat16Result) {
    for (const bool int8_reader : {true, false}) {
        SCOPED_TRACE(int8_reader ? "with an int8 reader" : "float16 readers only");
        Graph g;
        const int32_t x = value(&g, "x", {1, 2, 4, 4});
        const int32_t ta = value(&g, "ta", {1, 2, 4, 4});
        const int32_t tb = value(&g, "tb", {1, 2, 4, 4});
        const int32_t tc = value(&g, "tc", {1, 2, 4, 4});
        const int32_t y = value(&g, "y", {1, 2, 4, 4});
        const std::vector<float> w = {1.0f, 0.5f, -0.5f, 1.0f};
        g.add_op({OpType::kConv, "a", "", {x, constant(&g, "wa", {2, 2, 1, 1}, w)}, {ta}, {}});
        g.add_op({OpType::kConv, "b", "", {ta, constant(&g, "wb", {2, 2, 1, 1}, w)}, {tb}, {}});
        g.add_op({OpType::kConv, "c", "", {tb, constant(&g, "wc", {2, 2, 1, 1}, w)}, {tc}, {}});
        g.add_op({OpType::kConv, "d", "", {tc, constant(&g, "wd", {2, 2, 1, 1}, w)}, {y}, {}});
        g.inputs = {x};
        g.outputs = {y};
        if (int8_reader) {
            const int32_t y2 = value(&g, "y2", {1, 2, 4, 4});
            g.add_op({OpType::kConv, "e", "", {tc, constant(&g, "we", {2, 2, 1, 1}, w)}, {y2}, {}});
            g.outputs.push_back(y2);
        }
        const std::vector<std::vector<HostTensor>> samples = {{channel_data({1, 2, 4, 4}, {1.0f, -1.0f}, 1.0f, 7)}};
        auto calibration = convert::calibrate(g, samples, quiet());
        ASSERT_TRUE(calibration.is_ok());
        convert::QuantizeOptions options;
        options.fp16_ops = {"b", "d"};
        ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, options).is_ok());
        const int32_t c_result = op_named(g, "c").outputs[0];
        EXPECT_EQ(g.tensors[c_result].dtype, DType::kFloat16);
        EXPECT_EQ(op_named(g, "d").inputs[0], c_result);
        EXPECT_EQ(rknn::testing::count_ops(g, OpType::kDequantizeLinear), 1);  // b's input only
        EXPECT_EQ(rknn::testing::count_ops(g, OpType::kQuantizeLinear), int8_reader ? 1 : 0);
        if (int8_reader) {
            const int32_t e_input = op_named(g, "e").inputs[0];
            EXPECT_EQ(g.tensors[e_input].dtype, DType::kInt8);
            for (const Op& op : g.ops) {
                if (op.type == OpType::kQuantizeLinear) {
                    EXPECT_EQ(op.inputs[0], c_result);
                }
            }
        }
    }
}

// a -> b (float16) -> c (promoted to float16) -> d: d reads the tensor c's
// QuantizeLinear writes, under its float model name. The empirical bias
// correction corrects a and leaves d alone on purpose (bias_correction.cc
// gives the measurements).
TEST(Quantization, ALayerAfterAQuantizeLinearKeepsItsBias) {
    Graph g;
    const int32_t x = value(&g, "x", {1, 2, 4, 4});
    const int32_t ta = value(&g, "ta", {1, 2, 4, 4});
    const int32_t tb = value(&g, "tb", {1, 2, 4, 4});
    const int32_t tc = value(&g, "tc", {1, 2, 4, 4});
    const int32_t y = value(&g, "y", {1, 2, 4, 4});
    const std::vector<float> w = {1.0f, 0.5f, -0.5f, 1.0f};
    const std::vector<float> b = {0.1f, -0.1f};
    g.add_op({OpType::kConv, "a", "", {x, constant(&g, "wa", {2, 2, 1, 1}, w), constant(&g, "ba", {2}, b)}, {ta}, {}});
    g.add_op({OpType::kConv, "b", "", {ta, constant(&g, "wb", {2, 2, 1, 1}, w)}, {tb}, {}});
    g.add_op({OpType::kConv, "c", "", {tb, constant(&g, "wc", {2, 2, 1, 1}, w)}, {tc}, {}});
    g.add_op({OpType::kConv, "d", "", {tc, constant(&g, "wd", {2, 2, 1, 1}, w), constant(&g, "bd", {2}, b)}, {y}, {}});
    g.inputs = {x};
    g.outputs = {y};
    const std::vector<std::vector<HostTensor>> samples = {{channel_data({1, 2, 4, 4}, {1.0f, -1.0f}, 1.0f, 6)}};
    auto calibration = convert::calibrate(g, samples, quiet());
    ASSERT_TRUE(calibration.is_ok());
    convert::QuantizeOptions options;
    options.fp16_ops = {"b"};
    ASSERT_TRUE(convert::quantize_int8(&g, calibration.value().ranges, options).is_ok());
    ASSERT_EQ(g.tensors[op_named(g, "d").inputs[0]].dtype, DType::kInt8);
    auto result = convert::correct_biases_empirically(&g, calibration.value().channel_means, samples, nullptr);
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    EXPECT_EQ(result.value().layers_corrected, 1);
    // d is skipped by the rule, not because its means went missing.
    EXPECT_TRUE(calibration.value().channel_means.count(g.tensors[op_named(g, "d").inputs[0]].name));
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
