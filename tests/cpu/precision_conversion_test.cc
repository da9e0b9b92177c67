// QuantizeLinear / DequantizeLinear between int8 and float16 tensors, as the
// converter inserts them where an int8 layer meets a float16 one: exact codes
// and values through the CPU executor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "base/half.h"
#include "common/test_graphs.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::OpType;
using rknn::testing::per_tensor;

constexpr float kScale = 0.0095f;
constexpr int8_t kZeroPoint = -11;

Graph conversion_graph(OpType type, DType in_dtype, DType out_dtype) {
    return rknn::testing::conversion_graph(type, in_dtype, out_dtype, {1, 4, 8, 8}, kScale, kZeroPoint);
}

// The executor's outputs as it declares them (not widened to float32).
HostTensor run(const Graph& g, const HostTensor& x) {
    auto exec = rknn::cpu::GraphExecutor::create(g, rknn::cpu::GraphExecutor::Options());
    EXPECT_TRUE(exec.is_ok());
    if (!exec.is_ok()) return HostTensor();
    std::vector<HostTensor> outputs;
    const auto status = exec.value()->run({x}, &outputs);
    EXPECT_TRUE(status.is_ok()) << status.message();
    return outputs.empty() ? HostTensor() : outputs[0];
}

TEST(PrecisionConversion, DequantizeGivesEveryCodesValueInFloat16) {
    const Graph g = conversion_graph(OpType::kDequantizeLinear, DType::kInt8, DType::kFloat16);
    HostTensor x(DType::kInt8, {1, 4, 8, 8});
    x.quant = per_tensor(kScale, kZeroPoint);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 256 - 128);
    const HostTensor y = run(g, x);
    ASSERT_EQ(y.dtype(), DType::kFloat16);
    for (int64_t i = 0; i < x.numel(); ++i) {
        const float expected = rknn::half_to_float(rknn::float_to_half((x.data<int8_t>()[i] - kZeroPoint) * kScale));
        ASSERT_EQ(rknn::half_to_float(y.data<uint16_t>()[i]), expected) << "code " << int(x.data<int8_t>()[i]);
    }
}

// A large int8 tensor (split over threads) dequantises code by code.
TEST(PrecisionConversion, DequantizeLinearOfALargeTensorGivesEveryCodesValue) {
    const rknn::graph::Shape shape{1, 3, 200, 200};
    const Graph g = rknn::testing::conversion_graph(OpType::kDequantizeLinear, DType::kInt8, DType::kFloat32, shape, kScale,
                                                    kZeroPoint);
    HostTensor x(DType::kInt8, shape);
    x.quant = per_tensor(kScale, kZeroPoint);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<int8_t>()[i] = static_cast<int8_t>((i * 131 + i / 7) % 256 - 128);
    const HostTensor y = run(g, x);
    ASSERT_EQ(y.dtype(), DType::kFloat32);
    for (int64_t i = 0; i < x.numel(); ++i) {
        const auto expected = static_cast<float>((static_cast<double>(x.data<int8_t>()[i]) - kZeroPoint) * static_cast<double>(kScale));
        ASSERT_EQ(y.data<float>()[i], expected) << "at " << i;
    }
}

TEST(PrecisionConversion, QuantizeRoundsFloat16ToTheDeclaredCodes) {
    const Graph g = conversion_graph(OpType::kQuantizeLinear, DType::kFloat16, DType::kInt8);
    HostTensor x(DType::kFloat16, {1, 4, 8, 8});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<uint16_t>()[i] = rknn::float_to_half(-1.5f + 0.0123f * i);
    const HostTensor y = run(g, x);
    ASSERT_EQ(y.dtype(), DType::kInt8);
    EXPECT_FLOAT_EQ(y.quant.scale(), kScale);
    for (int64_t i = 0; i < x.numel(); ++i) {
        const double v = rknn::half_to_float(x.data<uint16_t>()[i]);
        const double code = std::fmin(std::fmax(std::nearbyint(v / kScale) + kZeroPoint, -128.0), 127.0);
        ASSERT_EQ(y.data<int8_t>()[i], static_cast<int8_t>(code)) << "value " << v;
    }
}

// QuantizeLinear of float32 with one scale takes the vectorised, threaded
// codes (a tensor large enough to be split over threads): the reference's
// clamp(nearbyint(x / scale) + zp) everywhere, ties and the values one ulp
// around them included, and a NaN the low bound (fmax's), not 0.
TEST(PrecisionConversion, QuantizeLinearOfFloat32GivesTheReferenceCodes) {
    const rknn::graph::Shape shape{1, 3, 200, 200};
    const Graph g = rknn::testing::conversion_graph(OpType::kQuantizeLinear, DType::kFloat32, DType::kInt8, shape, kScale,
                                                    kZeroPoint);
    HostTensor x(DType::kFloat32, shape);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> wide(-1.6f, 1.6f);
    float* v = x.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
        const int k = static_cast<int>(rng() % 301) - 150;
        const float tie = static_cast<float>((k + 0.5) * static_cast<double>(kScale));
        switch (i % 5) {
        case 0: v[i] = tie; break;
        case 1: v[i] = std::nextafter(tie, 1e30f); break;
        case 2: v[i] = std::nextafter(tie, -1e30f); break;
        default: v[i] = wide(rng);
        }
    }
    v[7] = std::numeric_limits<float>::quiet_NaN();
    v[x.numel() - 3] = -std::numeric_limits<float>::quiet_NaN();
    v[100] = std::numeric_limits<float>::infinity();
    v[101] = -std::numeric_limits<float>::infinity();
    const HostTensor y = run(g, x);
    ASSERT_EQ(y.dtype(), DType::kInt8);
    int ties = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
        const double code = std::fmin(std::fmax(std::nearbyint(v[i] / static_cast<double>(kScale)) + kZeroPoint, -128.0), 127.0);
        ASSERT_EQ(y.data<int8_t>()[i], static_cast<int8_t>(code)) << "value " << v[i] << " at " << i;
        ties += i % 5 == 0;
    }
    EXPECT_EQ(y.data<int8_t>()[7], -128);
    EXPECT_GT(ties, 20000);
}

// from_float32's per-tensor int8 codes (its vectorised form, and the plain
// loop it falls back to) equal clamp(nearbyint(x / scale) + zp): ties of
// every code and values one ulp around them, random and huge values,
// infinities and NaN (code 0), for several scales, a scale too small for
// its inverse to be a float, and zero points at and beyond int8's range.
TEST(PrecisionConversion, Float32ToInt8GivesNearbyintCodes) {
    struct Case {
        float scale;
        int32_t zero_point;
    };
    for (const Case c : {Case{kScale, kZeroPoint}, Case{0.1f, 0}, Case{1.0f / 3.0f, 127}, Case{0.05f, -128},
                         Case{0.05f, -1000}, Case{0.02f, 5000}, Case{1e-39f, 3}}) {
        SCOPED_TRACE("scale " + std::to_string(c.scale) + ", zero point " + std::to_string(c.zero_point));
        std::vector<float> values;
        for (int k = -300; k <= 300; ++k) {
            const float tie = static_cast<float>((k + 0.5) * static_cast<double>(c.scale));
            values.push_back(tie);
            values.push_back(std::nextafter(tie, 1e30f));
            values.push_back(std::nextafter(tie, -1e30f));
            values.push_back(static_cast<float>(k * static_cast<double>(c.scale)));
        }
        std::mt19937 rng(3);
        std::uniform_real_distribution<float> wide(-5.0f, 5.0f);
        for (int i = 0; i < 4000; ++i) values.push_back(wide(rng) * (c.scale / kScale));
        for (float v : {0.0f, -0.0f, 1e-40f, -1e-40f, 1e10f, -1e10f, 3e38f, -3e38f, std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
            values.push_back(v);
        HostTensor x(DType::kFloat32, {static_cast<int64_t>(values.size())});
        for (size_t i = 0; i < values.size(); ++i) x.data<float>()[i] = values[i];
        HostTensor y(DType::kInt8, x.shape());
        y.quant = per_tensor(c.scale, c.zero_point);
        ASSERT_TRUE(rknn::cpu::from_float32(x, &y).is_ok());
        for (size_t i = 0; i < values.size(); ++i) {
            const double q = std::nearbyint(static_cast<double>(values[i]) / c.scale) + c.zero_point;
            const int8_t expected = std::isnan(q) ? 0 : static_cast<int8_t>(std::fmin(std::fmax(q, -128.0), 127.0));
            ASSERT_EQ(y.data<int8_t>()[i], expected) << "value " << values[i];
        }
    }
}

// A prepared call (the runtime's CPU steps) of a DequantizeLinear declared
// float16: the kernel's float32 result is rounded into the declared tensor
// on every run, with the values run_op gives.
TEST(PrecisionConversion, PreparedDequantizeRoundsIntoTheDeclaredFloat16) {
    const Graph g = conversion_graph(OpType::kDequantizeLinear, DType::kInt8, DType::kFloat16);
    auto exec = rknn::cpu::GraphExecutor::create(g, rknn::cpu::GraphExecutor::Options());
    ASSERT_TRUE(exec.is_ok());
    std::vector<HostTensor> values(g.tensors.size());
    HostTensor& x = values[static_cast<size_t>(g.inputs[0])];
    x = HostTensor(DType::kInt8, {1, 4, 8, 8});
    x.quant = per_tensor(kScale, kZeroPoint);
    const auto call = exec.value()->prepare_call(0, values);
    ASSERT_TRUE(call.is_ok()) << call.status().message();
    ASSERT_NE(call.value().roundings, nullptr);
    EXPECT_EQ(call.value().roundings->size(), 1u) << "the float16 output is rounded from float32 scratch";
    const HostTensor& y = values[static_cast<size_t>(g.outputs[0])];
    ASSERT_EQ(y.dtype(), DType::kFloat16);
    for (int round = 0; round < 2; ++round) {  // the second run sees new codes
        for (int64_t i = 0; i < x.numel(); ++i) x.data<int8_t>()[i] = static_cast<int8_t>((i * 37 + round * 101) % 256 - 128);
        ASSERT_TRUE(exec.value()->run_prepared(call.value()).is_ok());
        std::vector<HostTensor> reference = values;
        ASSERT_TRUE(exec.value()->run_op(0, reference).is_ok());
        const HostTensor& want = reference[static_cast<size_t>(g.outputs[0])];
        for (int64_t i = 0; i < x.numel(); ++i) {
            ASSERT_EQ(y.data<uint16_t>()[i], want.data<uint16_t>()[i]) << "round " << round << " code " << int(x.data<int8_t>()[i]);
            const float expected = rknn::half_to_float(rknn::float_to_half((x.data<int8_t>()[i] - kZeroPoint) * kScale));
            ASSERT_EQ(rknn::half_to_float(y.data<uint16_t>()[i]), expected);
        }
    }
}

}  // namespace
