// Channel concatenation by addressing: two convolutions write their outputs
// straight into the concatenation's buffer at the offsets plan_concat_in_place
// gives, in one program, and the buffer equals the reference's Concat output
// byte for byte. Concatenations that need a copy say why.
#include <gtest/gtest.h>

#include <random>

#include "common/test_graphs.h"
#include "cpu/graph_executor.h"
#include "hw/soc_profile.h"
#include "npu/concat_plan.h"
#include "npu/native_layout.h"
#include "npu/prepared_op.h"
#include "npu_runner.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::OpType;
using rknn::graph::QuantParams;
using rknn::testing::add_tensor;
using rknn::testing::per_tensor;
using rknn::testing::random_int8;
namespace npu = rknn::npu;

constexpr int kIn = 8, kH = 10, kW = 10;

// x -> 3x3 conv with `out` channels -> tensor `name` (quantised as `q`).
int32_t add_conv(Graph* g, int32_t x, int out, const std::string& name, const QuantParams& q, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int8_t> w(static_cast<size_t>(out) * kIn * 9);
    for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    QuantParams qw;
    qw.axis = 0;
    qw.scales.assign(static_cast<size_t>(out), 0.004f);
    qw.zero_points.assign(static_cast<size_t>(out), 0);
    const int32_t wt = g->add_constant(name + "_w", DType::kInt8, {out, kIn, 3, 3}, rknn::graph::Buffer::copy_of(w.data(), w.size()));
    g->tensors[static_cast<size_t>(wt)].quant = qw;
    const int32_t y = add_tensor(g, name, DType::kInt8, {1, out, kH, kW}, q);
    rknn::graph::Op op{OpType::kConv, name + "_conv", "", {x, wt}, {y}, {}};
    op.attrs.set_ints("pads", {1, 1, 1, 1});
    g->add_op(op);
    return y;
}

struct ConcatGraph {
    Graph g;
    int32_t x = -1;
    size_t concat_op = 0;
};

ConcatGraph make_graph(int first_channels, int second_channels, bool same_quant) {
    ConcatGraph c;
    const QuantParams qx = per_tensor(0.05f, 3), qy = per_tensor(0.1f, -4);
    c.x = add_tensor(&c.g, "x", DType::kInt8, {1, kIn, kH, kW}, qx);
    c.g.inputs = {c.x};
    const int32_t a = add_conv(&c.g, c.x, first_channels, "a", qy, 1);
    const int32_t b = add_conv(&c.g, c.x, second_channels, "b", same_quant ? qy : per_tensor(0.2f, 0), 2);
    const int32_t y = add_tensor(&c.g, "y", DType::kInt8, {1, first_channels + second_channels, kH, kW}, qy);
    rknn::graph::Op cat{OpType::kConcat, "cat", "", {a, b}, {y}, {}};
    cat.attrs.set_int("axis", 1);
    c.concat_op = static_cast<size_t>(c.g.add_op(cat));
    c.g.outputs = {y};
    return c;
}

TEST(NpuConcat, ProducersWriteIntoTheConcatenationsBuffer) {
    ConcatGraph c = make_graph(32, 20, true);
    const HostTensor x = random_int8({1, kIn, kH, kW}, c.g.tensors[static_cast<size_t>(c.x)].quant, 7);
    auto exec = rknn::cpu::GraphExecutor::create(c.g);
    ASSERT_TRUE(exec.is_ok());
    std::vector<HostTensor> ref;
    ASSERT_TRUE(exec.value()->run({x}, &ref).is_ok());

    auto plan = npu::plan_concat_in_place(c.g, c.g.ops[c.concat_op]);
    ASSERT_TRUE(plan.is_ok()) << plan.status().message();
    ASSERT_EQ(plan.value().input_offsets.size(), 2u);
    EXPECT_EQ(plan.value().input_offsets[1], 2u * kH * kW * 16) << "the second input starts after two surfaces";

    npu::testing::NpuRunner runner;
    const auto cube = npu::pack_int8_cube(x.data<int8_t>(), kIn, kH, kW, 16, 0);
    const int32_t in_id = runner.add(cube.data(), cube.size());
    const int32_t out_id = runner.zeros(plan.value().output_bytes);
    npu::ProgramBuilder builder(runner.soc());
    for (size_t i = 0; i < 2; ++i) {
        auto prepared = npu::prepare_op(c.g, c.g.ops[i]);
        ASSERT_TRUE(prepared.is_ok()) << prepared.status().message();
        npu::OpBuffers buffers;
        buffers.features = {npu::BufferRef(in_id, 0)};
        for (const auto& bytes : prepared.value()->constants())
            buffers.constants.push_back(npu::BufferRef(runner.add(bytes.data(), bytes.size()), 0));
        buffers.output = npu::BufferRef(out_id, plan.value().input_offsets[i]);
        ASSERT_TRUE(prepared.value()->lower(buffers, runner.soc(), 0, &builder).is_ok());
    }
    uint32_t done = 0;
    ASSERT_TRUE(runner.run(builder.finish(), &done).is_ok());
    EXPECT_EQ(done, 2u);
    const auto got = npu::unpack_int8_cube(runner.data(out_id), 52, kH, kW, kH * kW * 16);
    int differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += got[i] != ref[0].data<int8_t>()[i];
    EXPECT_EQ(differ, 0) << "concatenation by addressing differs from the reference";
}

TEST(NpuConcat, ConcatenationsThatNeedACopySayWhy) {
    {
        ConcatGraph c = make_graph(20, 32, true);
        auto plan = npu::plan_concat_in_place(c.g, c.g.ops[c.concat_op]);
        ASSERT_FALSE(plan.is_ok());
        EXPECT_NE(plan.status().message().find("inside an atom"), std::string::npos) << plan.status().message();
    }
    {
        ConcatGraph c = make_graph(32, 20, false);
        auto plan = npu::plan_concat_in_place(c.g, c.g.ops[c.concat_op]);
        ASSERT_FALSE(plan.is_ok());
        EXPECT_NE(plan.status().message().find("quantisation"), std::string::npos) << plan.status().message();
    }
}

}  // namespace
