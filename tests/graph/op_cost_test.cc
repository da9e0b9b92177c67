// multiply_accumulates: the MACs the per-layer table sums per target.
#include <gtest/gtest.h>

#include <limits>

#include "common/test_graphs.h"
#include "graph/op_cost.h"

namespace {

using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::Op;
using rknn::graph::OpType;
using rknn::graph::multiply_accumulates;
using rknn::testing::add_tensor;

// An op of `type` over tensors of the given shapes (float32, no data).
Op op_over(Graph* g, OpType type, const std::vector<rknn::graph::Shape>& inputs, const rknn::graph::Shape& output) {
    Op op{type, "op", "", {}, {}, {}};
    for (size_t i = 0; i < inputs.size(); ++i) op.inputs.push_back(add_tensor(g, "in" + std::to_string(i), DType::kFloat32, inputs[i]));
    op.outputs.push_back(add_tensor(g, "out", DType::kFloat32, output));
    return op;
}

TEST(OpCost, ConvolutionsCountEachOutputsWindow) {
    Graph g;
    // 4 kernels of 3x3 over 3 channels, 8x8 outputs: 256 outputs x 27 taps.
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kConv, {{1, 3, 8, 8}, {4, 3, 3, 3}, {4}}, {1, 4, 8, 8})), 256u * 27u);
    // Depthwise: the weight holds one input channel per kernel.
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kConv, {{1, 16, 10, 10}, {16, 1, 5, 5}}, {1, 16, 10, 10})),
              1600u * 25u);
    // Transposed: each input element scatters over M/group x kh x kw outputs.
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kConvTranspose, {{1, 24, 4, 4}, {24, 6, 2, 2}}, {1, 6, 8, 8})),
              384u * 24u);
}

TEST(OpCost, ProductsCountTheirInnerDimension) {
    Graph g;
    Op gemm = op_over(&g, OpType::kGemm, {{5, 7}, {7, 3}}, {5, 3});
    EXPECT_EQ(multiply_accumulates(g, gemm), 15u * 7u);
    Op transposed = op_over(&g, OpType::kGemm, {{7, 5}, {7, 3}}, {5, 3});
    transposed.attrs.set_int("transA", 1);
    EXPECT_EQ(multiply_accumulates(g, transposed), 15u * 7u);
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kMatMul, {{2, 8, 40, 15}, {2, 8, 15, 40}}, {2, 8, 40, 40})),
              2u * 8u * 40u * 40u * 15u);
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kAdd, {{1, 8}, {1, 8}}, {1, 8})), 0u);
}

TEST(OpCost, UnknownOrMalformedShapesCountNothingOrSaturate) {
    Graph g;
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kConv, {{1, 3, -1, 8}, {4, 3, 3, 3}}, {1, 4, -1, 8})), 0u);
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kConv, {{1, 3, 8, 8}}, {1, 4, 8, 8})), 0u) << "no weight";
    Op missing{OpType::kConv, "bad", "", {-1, 999}, {12345}, {}};
    EXPECT_EQ(multiply_accumulates(g, missing), 0u);
    const int64_t big = int64_t{1} << 30;
    EXPECT_EQ(multiply_accumulates(g, op_over(&g, OpType::kConv, {{1, 1, 1, 1}, {1, big, big, big}}, {1, 1, big, 1024})),
              std::numeric_limits<uint64_t>::max());
}

}  // namespace
