// CubeRequant converts device cubes between float16 and int8 the way a CPU
// step would (unpack, reference kernel, pack): the same bytes, padding lanes
// zero, for channel counts that fill atoms exactly, partly, or leave the
// last int8 atom with one float16 atom behind it.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "common/test_graphs.h"
#include "cpu/graph_executor.h"
#include "runtime/cube_requant.h"
#include "runtime/native_tensor.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::OpType;
using rknn::runtime::CubeRequant;
using rknn::runtime::NativeForm;

constexpr float kScale = 0.0371f;
constexpr int8_t kZeroPoint = 9;

Graph conversion_graph(OpType type, int channels) {
    const bool quantize = type == OpType::kQuantizeLinear;
    return rknn::testing::conversion_graph(type, quantize ? DType::kFloat16 : DType::kInt8,
                                           quantize ? DType::kInt8 : DType::kFloat16, {1, channels, 3, 7}, kScale,
                                           kZeroPoint);
}

// Random codes: every float16 bit pattern (NaN, infinities, values far
// outside the int8 range and the ones that round to a half step included) or
// every int8 code.
HostTensor random_codes(const rknn::graph::Tensor& declared, uint32_t seed) {
    HostTensor t = rknn::cpu::make_tensor_like(declared, declared.shape);
    std::mt19937 rng(seed);
    auto* bytes = static_cast<uint8_t*>(t.raw());
    for (size_t i = 0; i < t.byte_size(); ++i) bytes[i] = static_cast<uint8_t>(rng());
    if (declared.dtype == DType::kFloat16) {
        // Half of them in the range the scale covers, where rounding decides.
        auto* halves = t.data<uint16_t>();
        for (int64_t i = 0; i < t.numel(); i += 2) halves[i] = static_cast<uint16_t>(0x2000 + rng() % 0x2400);
    }
    return t;
}

void expect_same_as_cpu_step(OpType type, int channels) {
    SCOPED_TRACE(std::string(rknn::graph::op_type_name(type)) + ", " + std::to_string(channels) + " channels");
    const Graph g = conversion_graph(type, channels);
    const NativeForm form;
    std::string why_not;
    const auto plan = CubeRequant::plan(g, g.ops[0], form, &why_not);
    ASSERT_TRUE(plan.has_value()) << why_not;
    const rknn::graph::Tensor& in = g.tensors[g.inputs[0]];
    const rknn::graph::Tensor& out = g.tensors[g.outputs[0]];
    ASSERT_EQ(plan->source_bytes(), rknn::runtime::native_cube_bytes(in, form));
    ASSERT_EQ(plan->destination_bytes(), rknn::runtime::native_cube_bytes(out, form));

    const HostTensor x = random_codes(in, static_cast<uint32_t>(channels));
    auto exec = rknn::cpu::GraphExecutor::create(g);
    ASSERT_TRUE(exec.is_ok());
    std::vector<HostTensor> outputs;
    ASSERT_TRUE(exec.value()->run({x}, &outputs).is_ok());
    std::vector<uint8_t> expected(plan->destination_bytes());
    ASSERT_TRUE(rknn::runtime::pack_native(outputs[0], expected.data(), expected.size(), form).is_ok());

    std::vector<uint8_t> source(plan->source_bytes());
    ASSERT_TRUE(rknn::runtime::pack_native(x, source.data(), source.size(), form).is_ok());
    // What the NPU leaves in padding lanes is not read.
    const size_t lanes_per_atom = in.dtype == DType::kInt8 ? 16 : 8;
    const size_t element = in.dtype == DType::kInt8 ? 1 : 2;
    const size_t pixels = 3 * 7;
    for (size_t atom = 0; atom < source.size() / 16; ++atom) {
        const size_t surface = atom / pixels;
        for (size_t lane = 0; lane < lanes_per_atom; ++lane)
            if (surface * lanes_per_atom + lane >= static_cast<size_t>(channels))
                for (size_t b = 0; b < element; ++b) source[atom * 16 + lane * element + b] = 0x7d;
    }
    std::vector<uint8_t> actual(plan->destination_bytes(), 0xee);
    plan->run(source.data(), actual.data());
    EXPECT_EQ(actual, expected);
}

TEST(CubeRequant, QuantizeGivesTheCpuStepsBytes) {
    for (int channels : {1, 8, 9, 16, 18, 24, 42}) expect_same_as_cpu_step(OpType::kQuantizeLinear, channels);
}

TEST(CubeRequant, DequantizeGivesTheCpuStepsBytes) {
    for (int channels : {1, 8, 9, 16, 18, 24, 42}) expect_same_as_cpu_step(OpType::kDequantizeLinear, channels);
}

TEST(CubeRequant, DeclinesWhatItDoesNotConvert) {
    std::string why_not;
    Graph g = conversion_graph(OpType::kQuantizeLinear, 16);
    NativeForm rk356x;
    rk356x.rk356x = true;
    EXPECT_FALSE(CubeRequant::plan(g, g.ops[0], rk356x, &why_not).has_value());
    EXPECT_FALSE(why_not.empty());
    // Per-channel scales.
    const std::vector<float> scales(16, kScale);
    g.ops[0].inputs[1] = g.add_constant("scales", DType::kFloat32, {16},
                                        rknn::graph::Buffer::copy_of(scales.data(), scales.size() * sizeof(float)));
    why_not.clear();
    EXPECT_FALSE(CubeRequant::plan(g, g.ops[0], NativeForm(), &why_not).has_value());
    EXPECT_FALSE(why_not.empty());
    // Float32 in.
    Graph f = conversion_graph(OpType::kQuantizeLinear, 16);
    f.tensors[f.inputs[0]].dtype = DType::kFloat32;
    EXPECT_FALSE(CubeRequant::plan(f, f.ops[0], NativeForm(), &why_not).has_value());
}

}  // namespace
