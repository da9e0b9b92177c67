// The converter passes that make exported graphs NPU-friendly: canonical
// arithmetic, affine folding, the HardSigmoid/HardSwish and LayerNorm
// patterns, and shape computations folded under given input shapes. Each
// test checks what the pass rewrote and that the float result is unchanged
// (the CPU reference before and after), and that near misses are left alone.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/test_graphs.h"
#include "cpu/fused_ops.h"
#include "cpu/graph_executor.h"
#include "cpu/kernels/scalar_math.h"
#include "passes/passes.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::Op;
using rknn::graph::OpType;
using rknn::graph::Shape;

// A graph built op by op: every new value is a fresh float tensor.
struct Builder {
    Graph g;
    int next = 0;

    int32_t value(const Shape& shape) {
        rknn::graph::Tensor t;
        t.name = "t" + std::to_string(next++);
        t.shape = shape;
        return g.add_tensor(t);
    }
    int32_t input(const Shape& shape) {
        const int32_t t = value(shape);
        g.inputs.push_back(t);
        return t;
    }
    int32_t scalar(float v) {
        return g.add_constant("c" + std::to_string(next++), DType::kFloat32, {}, rknn::graph::Buffer::copy_of(&v, 4));
    }
    int32_t constant(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
        return rknn::testing::random_constant(&g, "k" + std::to_string(next++), shape, seed, lo, hi);
    }
    int32_t op(OpType type, std::vector<int32_t> inputs, const Shape& out_shape, rknn::graph::Attributes attrs = {}) {
        const int32_t y = value(out_shape);
        g.add_op({type, "op" + std::to_string(next++), "", std::move(inputs), {y}, std::move(attrs)});
        return y;
    }
    int32_t conv(int32_t x, int32_t w, int32_t b, const Shape& out_shape, int64_t group = 1, int64_t pad = 0) {
        rknn::graph::Attributes a;
        a.set_int("group", group);
        a.set_ints("pads", {pad, pad, pad, pad});
        std::vector<int32_t> in = {x, w};
        if (b >= 0) in.push_back(b);
        return op(OpType::kConv, in, out_shape, a);
    }
    int32_t clip(int32_t x, float lo, float hi, const Shape& shape) {
        return op(OpType::kClip, {x, scalar(lo), scalar(hi)}, shape);
    }
};

HostTensor random_input(const Shape& shape, uint32_t seed) { return rknn::testing::random_floats(shape, seed, -4.0f, 4.0f); }

std::vector<HostTensor> run(const Graph& g, const std::vector<HostTensor>& inputs) {
    auto out = rknn::testing::run_reference(g, inputs);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    return out.is_ok() ? out.value() : std::vector<HostTensor>{};
}

float max_difference(const HostTensor& a, const HostTensor& b) { return rknn::testing::max_abs_difference(a, b); }

int count(const Graph& g, OpType type) { return rknn::testing::count_ops(g, type); }

// Runs `pass` on b.g and checks the outputs stay within `tolerance`.
template <typename Pass>
void expect_same_result(Builder* b, Pass pass, float tolerance = 1e-4f, uint32_t seed = 1) {
    std::vector<HostTensor> in;
    for (int32_t t : b->g.inputs) in.push_back(random_input(b->g.tensors[t].shape, seed++));
    const std::vector<HostTensor> before = run(b->g, in);
    pass(&b->g);
    const std::vector<HostTensor> after = run(b->g, in);
    ASSERT_EQ(before.size(), after.size());
    for (size_t i = 0; i < before.size(); ++i) EXPECT_LT(max_difference(before[i], after[i]), tolerance) << "output " << i;
}

TEST(ArithmeticPass, DivisionSubtractionAndConstantFirstOperandsBecomeCanonical) {
    Builder b;
    const Shape s = {1, 3, 4, 4};
    const int32_t x = b.input(s);
    const int32_t d = b.op(OpType::kDiv, {x, b.scalar(6.0f)}, s);
    const int32_t m = b.op(OpType::kMul, {b.constant({1, 3, 1, 1}, 2), d}, s);
    const int32_t a = b.op(OpType::kSub, {m, b.scalar(0.25f)}, s);
    const int32_t one = b.op(OpType::kMul, {a, b.scalar(1.0f)}, s);
    const int32_t by_zero = b.op(OpType::kDiv, {one, b.scalar(0.0f)}, s);
    b.g.outputs = {by_zero};
    std::vector<HostTensor> in = {random_input(s, 3)};
    const std::vector<HostTensor> before = run(b.g, in);
    EXPECT_EQ(rknn::convert::canonicalize_arithmetic(&b.g), 4);  // div, swap, sub, and x * 1 dropped
    EXPECT_EQ(count(b.g, OpType::kSub), 0);
    EXPECT_EQ(count(b.g, OpType::kDiv), 1);  // x / 0 stays as written
    ASSERT_EQ(b.g.ops.size(), 4u);
    for (const Op& op : b.g.ops) {
        if (op.type == OpType::kMul || op.type == OpType::kAdd) {
            EXPECT_TRUE(b.g.is_constant(op.inputs[1])) << op.name;
        }
    }
    // x / 0 gives inf in both graphs: compare the finite part (none) by the sign pattern.
    const std::vector<HostTensor> after = run(b.g, in);
    for (int64_t i = 0; i < before[0].numel(); ++i)
        EXPECT_EQ(std::signbit(before[0].data<float>()[i]), std::signbit(after[0].data<float>()[i]));
}

TEST(ArithmeticPass, ADivisorWhoseReciprocalOverflowsStays) {
    Builder b;
    const int32_t x = b.input({4});
    b.g.outputs = {b.op(OpType::kDiv, {x, b.scalar(1e-39f)}, {4})};
    EXPECT_EQ(rknn::convert::canonicalize_arithmetic(&b.g), 0);
    EXPECT_EQ(b.g.ops[0].type, OpType::kDiv);
}

TEST(ArithmeticPass, TheRewrittenConstantsGiveTheSameResult) {
    Builder b;
    const Shape s = {1, 3, 4, 4};
    const int32_t x = b.input(s);
    const int32_t d = b.op(OpType::kDiv, {x, b.constant({1, 3, 1, 1}, 5, 0.5f, 2.0f)}, s);
    const int32_t a = b.op(OpType::kSub, {d, b.constant({3, 1, 1}, 6)}, s);
    b.g.outputs = {b.op(OpType::kAdd, {b.scalar(2.0f), a}, s)};
    expect_same_result(&b, rknn::convert::canonicalize_arithmetic, 1e-5f);
    EXPECT_EQ(count(b.g, OpType::kMul), 1);
    EXPECT_EQ(count(b.g, OpType::kAdd), 2);
}

// The three HardSwish spellings and the HardSigmoid one, as exporters write them.
TEST(ActivationPatterns, EveryHardSwishSpellingBecomesOneOp) {
    for (int form = 0; form < 4; ++form) {
        SCOPED_TRACE("form " + std::to_string(form));
        Builder b;
        const Shape s = {1, 4, 3, 3};
        const int32_t x = b.input(s);
        int32_t y = -1;
        if (form == 3) {
            rknn::graph::Attributes a;
            a.set_float("alpha", 1.0f / 6.0f);
            a.set_float("beta", 0.5f);
            y = b.op(OpType::kMul, {x, b.op(OpType::kHardSigmoid, {x}, s, a)}, s);
        } else {
            const int32_t r6 = b.clip(b.op(OpType::kAdd, {x, b.scalar(3.0f)}, s), 0.0f, 6.0f, s);
            if (form == 0) y = b.op(OpType::kDiv, {b.op(OpType::kMul, {x, r6}, s), b.scalar(6.0f)}, s);
            if (form == 1) y = b.op(OpType::kMul, {x, b.op(OpType::kDiv, {r6, b.scalar(6.0f)}, s)}, s);
            if (form == 2) y = b.op(OpType::kMul, {b.op(OpType::kMul, {r6, x}, s), b.scalar(1.0f / 6.0f)}, s);
        }
        b.g.outputs = {y};
        expect_same_result(&b, [](Graph* g) {
            rknn::convert::canonicalize_arithmetic(g);
            EXPECT_GE(rknn::convert::fuse_hard_activations(g), 1);
        });
        ASSERT_EQ(b.g.ops.size(), 1u);
        EXPECT_EQ(b.g.ops[0].type, OpType::kHardSwish);
    }
}

TEST(ActivationPatterns, Relu6OfXPlus3OverSixIsHardSigmoid) {
    Builder b;
    const Shape s = {1, 2, 5};
    const int32_t x = b.input(s);
    const int32_t r6 = b.clip(b.op(OpType::kAdd, {b.scalar(3.0f), x}, s), 0.0f, 6.0f, s);
    b.g.outputs = {b.op(OpType::kDiv, {r6, b.scalar(6.0f)}, s)};
    expect_same_result(&b, [](Graph* g) {
        rknn::convert::canonicalize_arithmetic(g);
        EXPECT_EQ(rknn::convert::fuse_hard_activations(g), 1);
    });
    ASSERT_EQ(b.g.ops.size(), 1u);
    EXPECT_EQ(b.g.ops[0].type, OpType::kHardSigmoid);
}

// A constant of higher rank raises the result's rank: the pattern keeps it.
TEST(ActivationPatterns, ABroadcastThatRaisesTheRankIsNoHardSigmoid) {
    Builder b;
    const Shape s = {2, 8};
    const int32_t x = b.input(s);
    const float three = 3.0f;
    const int32_t c3 = b.g.add_constant("three_3d", DType::kFloat32, {1, 1, 1}, rknn::graph::Buffer::copy_of(&three, 4));
    const int32_t r6 = b.clip(b.op(OpType::kAdd, {x, c3}, {1, 2, 8}), 0.0f, 6.0f, {1, 2, 8});
    b.g.outputs = {b.op(OpType::kMul, {r6, b.scalar(1.0f / 6.0f)}, {1, 2, 8})};
    EXPECT_EQ(rknn::convert::fuse_hard_activations(&b.g), 0);
    EXPECT_EQ(b.g.tensors[b.g.outputs[0]].shape, (Shape{1, 2, 8}));
}

TEST(ActivationPatterns, NearMissesAreLeftAlone) {
    Builder b;
    const Shape s = {1, 4};
    const int32_t x = b.input(s);
    const int32_t other = b.input(s);
    // relu6 bound 5, a gate of another tensor, and a shared intermediate.
    const int32_t r5 = b.clip(b.op(OpType::kAdd, {x, b.scalar(3.0f)}, s), 0.0f, 5.0f, s);
    const int32_t y1 = b.op(OpType::kMul, {b.op(OpType::kMul, {x, r5}, s), b.scalar(1.0f / 6.0f)}, s);
    const int32_t r6 = b.clip(b.op(OpType::kAdd, {other, b.scalar(3.0f)}, s), 0.0f, 6.0f, s);
    const int32_t y2 = b.op(OpType::kMul, {b.op(OpType::kMul, {x, r6}, s), b.scalar(1.0f / 6.0f)}, s);
    const int32_t shared_add = b.op(OpType::kAdd, {x, b.scalar(3.0f)}, s);
    const int32_t y3 = b.op(OpType::kMul, {b.clip(shared_add, 0.0f, 6.0f, s), b.scalar(1.0f / 6.0f)}, s);
    b.g.outputs = {y1, y2, y3, shared_add};
    const size_t ops = b.g.ops.size();
    EXPECT_EQ(rknn::convert::fuse_hard_activations(&b.g), 0);
    EXPECT_EQ(b.g.ops.size(), ops);
}

TEST(AffineFolding, ScaleAndShiftAfterAConvolutionGoIntoItsWeights) {
    Builder b;
    const int32_t x = b.input({1, 3, 6, 6});
    const Shape s = {1, 4, 6, 6};
    const int32_t c = b.conv(x, b.constant({4, 3, 3, 3}, 7), b.constant({4}, 8), s, 1, 1);
    const int32_t m = b.op(OpType::kMul, {c, b.scalar(0.7f)}, s);
    const int32_t a = b.op(OpType::kAdd, {m, b.constant({1, 4, 1, 1}, 9)}, s);
    b.g.outputs = {b.op(OpType::kMul, {a, b.constant({4, 1, 1}, 10)}, s)};
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::fold_affine_into_producers(g), 3); });
    ASSERT_EQ(b.g.ops.size(), 1u);
    EXPECT_EQ(b.g.ops[0].type, OpType::kConv);
}

TEST(AffineFolding, ConvTransposeAndGemmTakeThemToo) {
    Builder b;
    const int32_t x = b.input({1, 3, 4, 4});
    rknn::graph::Attributes up;
    up.set_ints("strides", {2, 2});
    const Shape s = {1, 5, 8, 8};
    const int32_t t = b.op(OpType::kConvTranspose, {x, b.constant({3, 5, 2, 2}, 11)}, s, up);
    const int32_t y1 = b.op(OpType::kAdd, {b.op(OpType::kMul, {t, b.constant({1, 5, 1, 1}, 12)}, s), b.scalar(0.1f)}, s);
    const int32_t v = b.input({2, 6});
    const int32_t gemm = b.op(OpType::kGemm, {v, b.constant({6, 4}, 13), b.constant({4}, 14)}, {2, 4});
    const int32_t y2 = b.op(OpType::kMul, {gemm, b.constant({1, 4}, 15)}, {2, 4});
    b.g.outputs = {y1, y2};
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::fold_affine_into_producers(g), 3); });
    EXPECT_EQ(b.g.ops.size(), 2u);
}

// ConvTranspose runs on the CPU: Relu and lookup-table activations fuse into it.
TEST(ActivationPatterns, ActivationsFuseIntoAConvTranspose) {
    Builder b;
    const int32_t x = b.input({1, 3, 4, 4});
    rknn::graph::Attributes up;
    up.set_ints("strides", {2, 2});
    const Shape s = {1, 2, 8, 8};
    const int32_t t = b.op(OpType::kConvTranspose, {x, b.constant({3, 2, 2, 2}, 31), b.constant({2}, 32)}, s, up);
    const int32_t r = b.op(OpType::kRelu, {t}, s);
    const int32_t t2 = b.op(OpType::kConvTranspose, {r, b.constant({2, 1, 2, 2}, 33)}, {1, 1, 16, 16}, up);
    b.g.outputs = {b.op(OpType::kSigmoid, {t2}, {1, 1, 16, 16})};
    expect_same_result(&b, [](Graph* g) {
        EXPECT_EQ(rknn::convert::fuse_activations(g), 1);
        EXPECT_EQ(rknn::convert::fuse_lut_activations(g, nullptr), 1);
    }, 1e-5f);
    ASSERT_EQ(b.g.ops.size(), 2u);
    EXPECT_EQ(b.g.ops[1].attrs.get_string("activation", ""), "Sigmoid");
}

// PP-OCR det's head: two 2x2 / stride 2 transposed convolutions (the second
// 3x3 / stride 3 here too) become 1x1 convolutions and DepthToSpace, the Relu
// and Sigmoid reading them moved before the DepthToSpace; the float result
// stays (the products sum in another order). Then the activations fuse into
// the convolutions, which the NPU runs.
TEST(Deconvolutions, KernelEqualToStrideBecomesAConvolutionAndDepthToSpace) {
    Builder b;
    const int32_t x = b.input({1, 6, 5, 7});
    rknn::graph::Attributes up2, up3;
    up2.set_ints("strides", {2, 2});
    up3.set_ints("strides", {3, 3});
    up3.set_ints("kernel_shape", {3, 3});
    const int32_t t = b.op(OpType::kConvTranspose, {x, b.constant({6, 4, 2, 2}, 41), b.constant({4}, 42)}, {1, 4, 10, 14}, up2);
    const int32_t r = b.op(OpType::kRelu, {t}, {1, 4, 10, 14});
    const int32_t t2 = b.op(OpType::kConvTranspose, {r, b.constant({4, 2, 3, 3}, 43)}, {1, 2, 30, 42}, up3);
    b.g.outputs = {b.op(OpType::kSigmoid, {t2}, {1, 2, 30, 42})};
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::deconvolutions_to_depth_to_space(g), 2); }, 1e-5f);
    EXPECT_EQ(count(b.g, OpType::kConvTranspose), 0);
    EXPECT_EQ(count(b.g, OpType::kDepthToSpace), 2);
    ASSERT_EQ(b.g.ops.size(), 6u);
    EXPECT_EQ(b.g.ops[0].type, OpType::kConv);
    EXPECT_EQ(b.g.ops[1].type, OpType::kRelu);
    EXPECT_EQ(b.g.ops[2].type, OpType::kDepthToSpace);
    EXPECT_EQ(b.g.ops[5].type, OpType::kDepthToSpace);
    EXPECT_EQ(b.g.tensors[b.g.ops[0].outputs[0]].shape, (Shape{1, 16, 5, 7}));
    EXPECT_EQ(b.g.tensors[b.g.ops[3].outputs[0]].shape, (Shape{1, 18, 10, 14}));
    expect_same_result(&b, [](Graph* g) {
        EXPECT_EQ(rknn::convert::fuse_activations(g), 1);
        EXPECT_EQ(rknn::convert::fuse_lut_activations(g, nullptr), 1);
    }, 1e-5f);
    EXPECT_EQ(b.g.ops.size(), 4u);
}

// Overlapping windows, padding, groups, a kernel unlike the stride, or a
// result read twice (the activation then stays after the DepthToSpace).
TEST(Deconvolutions, OtherTransposedConvolutionsStay) {
    Builder b;
    const int32_t x = b.input({1, 4, 5, 5});
    rknn::graph::Attributes overlap, padded, grouped;
    overlap.set_ints("strides", {2, 2});
    padded.set_ints("strides", {2, 2});
    padded.set_ints("pads", {1, 1, 1, 1});
    grouped.set_ints("strides", {2, 2});
    grouped.set_int("group", 2);
    const int32_t a = b.op(OpType::kConvTranspose, {x, b.constant({4, 2, 3, 3}, 51)}, {1, 2, 11, 11}, overlap);
    const int32_t p = b.op(OpType::kConvTranspose, {x, b.constant({4, 2, 2, 2}, 52)}, {1, 2, 8, 8}, padded);
    const int32_t gr = b.op(OpType::kConvTranspose, {x, b.constant({4, 1, 2, 2}, 53)}, {1, 2, 10, 10}, grouped);
    const int32_t twice = b.op(OpType::kConvTranspose, {x, b.constant({4, 2, 2, 2}, 54)}, {1, 2, 10, 10}, overlap);
    b.g.outputs = {a, p, gr, b.op(OpType::kRelu, {twice}, {1, 2, 10, 10}), twice};
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::deconvolutions_to_depth_to_space(g), 1); }, 1e-5f);
    EXPECT_EQ(count(b.g, OpType::kConvTranspose), 3);
    EXPECT_EQ(count(b.g, OpType::kDepthToSpace), 1);
    EXPECT_EQ(b.g.ops.back().type, OpType::kRelu) << "the Relu stays after the DepthToSpace";
}

// Each reason a producer keeps the Mul after it: its output has a second
// reader, it already applies an activation, or the constant varies along H.
TEST(AffineFolding, AConvolutionWithTwoReadersOrAnActivationKeepsTheAffine) {
    Builder b;
    const int32_t x = b.input({1, 2, 4, 4});
    const Shape s = {1, 2, 4, 4};
    const int32_t c1 = b.conv(x, b.constant({2, 2, 1, 1}, 16), -1, s);
    const int32_t m1 = b.op(OpType::kMul, {c1, b.scalar(2.0f)}, s);
    const int32_t other = b.op(OpType::kRelu, {c1}, s);  // the second reader
    const int32_t c2 = b.conv(x, b.constant({2, 2, 1, 1}, 17), -1, s);
    b.g.ops.back().attrs.set_string("activation", "Relu");
    const int32_t m2 = b.op(OpType::kMul, {c2, b.scalar(2.0f)}, s);
    const int32_t c3 = b.conv(x, b.constant({2, 2, 1, 1}, 18), -1, s);
    const int32_t m3 = b.op(OpType::kMul, {c3, b.constant({1, 1, 4, 1}, 19)}, s);  // varies along H
    b.g.outputs = {m1, other, m2, m3};
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::fold_affine_into_producers(g), 0); });
    EXPECT_EQ(count(b.g, OpType::kMul), 3);
}

// A Gemm whose C holds one value per row ([M, 1]) cannot take a per-column scale.
TEST(AffineFolding, AGemmWithARowBiasKeepsAColumnScale) {
    Builder b;
    const int32_t v = b.input({4, 3});
    const int32_t gemm = b.op(OpType::kGemm, {v, b.constant({3, 4}, 20), b.constant({4, 1}, 21)}, {4, 4});
    b.g.outputs = {b.op(OpType::kMul, {gemm, b.constant({1, 4}, 22)}, {4, 4})};
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::fold_affine_into_producers(g), 0); });
}

TEST(AffineFolding, ScalarAffineAfterALookupTableActivationBecomesPartOfIt) {
    Builder b;
    const Shape s = {1, 3, 4, 4};
    const int32_t x = b.input(s);
    const int32_t h = b.op(OpType::kHardSwish, {x}, s);
    const int32_t y = b.op(OpType::kAdd, {b.op(OpType::kMul, {h, b.scalar(0.6f)}, s), b.scalar(-0.5f)}, s);
    const int32_t sig = b.op(OpType::kSigmoid, {y}, s);
    b.g.outputs = {b.op(OpType::kMul, {sig, b.constant({1, 3, 1, 1}, 18)}, s)};  // per channel: not into the table
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::fold_affine_into_activations(g), 2); });
    ASSERT_EQ(b.g.ops.size(), 3u);
    EXPECT_FLOAT_EQ(b.g.ops[0].attrs.get_float("post_scale", 1.0f), 0.6f);
    EXPECT_FLOAT_EQ(b.g.ops[0].attrs.get_float("post_bias", 0.0f), -0.5f);
}

TEST(AffineFolding, AnAffineBeforeUnpaddedConvolutionsGoesIntoThem) {
    Builder b;
    const Shape s = {1, 4, 5, 5};
    const int32_t x = b.input(s);
    const int32_t a = b.op(OpType::kAdd, {b.op(OpType::kMul, {x, b.constant({1, 4, 1, 1}, 19)}, s), b.scalar(0.3f)}, s);
    const int32_t pointwise = b.conv(a, b.constant({6, 4, 1, 1}, 20), b.constant({6}, 21), {1, 6, 5, 5});
    // Three output channels per group of two input channels: the group's input
    // channel is (o / 3) * 2 + j, not (o / 2) * 2 + j.
    const int32_t grouped = b.conv(a, b.constant({6, 2, 3, 3}, 22), -1, {1, 6, 3, 3}, 2);
    b.g.outputs = {pointwise, grouped};
    expect_same_result(&b, [](Graph* g) { EXPECT_EQ(rknn::convert::fold_affine_into_consumers(g), 2); });
    EXPECT_EQ(b.g.ops.size(), 2u);
}

TEST(AffineFolding, PaddingKeepsTheAffineWhichBecomesADepthwiseConvolution) {
    Builder b;
    const Shape s = {1, 4, 5, 5};
    const int32_t x = b.input(s);
    const int32_t a = b.op(OpType::kAdd, {b.op(OpType::kMul, {x, b.constant({1, 4, 1, 1}, 23)}, s), b.scalar(0.3f)}, s);
    b.g.outputs = {b.conv(a, b.constant({4, 1, 3, 3}, 24), -1, s, 4, 1)};
    expect_same_result(&b, [](Graph* g) {
        EXPECT_EQ(rknn::convert::fold_affine_into_consumers(g), 0);  // the zeros padded in would change
        EXPECT_EQ(rknn::convert::affine_to_depthwise(g), 1);  // the Add joins the Mul's convolution
    });
    ASSERT_EQ(count(b.g, OpType::kConv), 2);
    EXPECT_EQ(b.g.ops.size(), 2u);
    EXPECT_EQ(b.g.ops[0].attrs.get_int("group", 1), 4);
}

// A float16 convolution with a fused HardSwish and a post affine (PP-LCNetV3's
// learnable affine blocks) read only by unpadded float16 convolutions: the
// bias moves into theirs (the NPU then needs one DPU pass for the activation,
// not two); the result stays within float16 rounding. A padded reader keeps it.
TEST(AffineFolding, AFloat16HardSwishBiasMovesIntoUnpaddedReaders) {
    for (const bool padded_reader : {false, true}) {
        Builder b;
        const Shape s = {1, 4, 6, 6};
        const int32_t x = b.input(s);
        const int32_t h = b.conv(x, b.constant({4, 4, 1, 1}, 30), b.constant({4}, 31), s);
        Op& producer = b.g.ops.back();
        rknn::cpu::kernels::Activation act;
        act.type = OpType::kHardSwish;
        act.alpha = 1.0f / 6.0f;
        act.beta = 0.5f;
        act.post_scale = 0.75f;
        act.post_bias = -0.4f;
        rknn::cpu::set_fused_activation(&producer, act);
        const int32_t pointwise = b.conv(h, b.constant({6, 4, 1, 1}, 32), b.constant({6}, 33), {1, 6, 6, 6});
        const int32_t grouped = b.conv(h, b.constant({6, 2, 1, 1}, 34), -1, {1, 6, 6, 6}, 2, padded_reader ? 1 : 0);
        if (padded_reader) b.g.tensors[grouped].shape = {1, 6, 8, 8};
        b.g.outputs = {pointwise, grouped};
        for (int32_t t : {h, pointwise, grouped}) b.g.tensors[t].dtype = DType::kFloat16;  // the input stays float32
        const std::string name = b.g.tensors[h].name;
        expect_same_result(
            &b, [&](Graph* g) { EXPECT_EQ(rknn::convert::fold_fp16_activation_bias_into_readers(g), padded_reader ? 0 : 1); },
            0.02f);
        const std::vector<float> post = b.g.ops[0].attrs.get_floats("act_post");
        ASSERT_EQ(post.size(), 2u);
        EXPECT_FLOAT_EQ(post[0], 0.75f);
        EXPECT_FLOAT_EQ(post[1], padded_reader ? -0.4f : 0.0f);
        EXPECT_EQ(b.g.tensors[h].name == name, padded_reader);  // renamed: its values lack the bias
    }
}

TEST(AffineFolding, AStandaloneBatchNormBecomesAnAffine) {
    Builder b;
    const Shape s = {1, 3, 4, 4};
    const int32_t x = b.input(s);
    const int32_t r = b.op(OpType::kRelu, {x}, s);
    b.g.outputs = {b.op(OpType::kBatchNormalization,
                        {r, b.constant({3}, 25, 0.5f, 1.5f), b.constant({3}, 26), b.constant({3}, 27),
                         b.constant({3}, 28, 0.5f, 2.0f)},
                        s)};
    expect_same_result(&b, [](Graph* g) {
        auto n = rknn::convert::batch_norms_to_affine(g);
        ASSERT_TRUE(n.is_ok());
        EXPECT_EQ(n.value(), 1);
        EXPECT_EQ(rknn::convert::affine_to_depthwise(g), 1);
    });
    EXPECT_EQ(count(b.g, OpType::kBatchNormalization), 0);
    EXPECT_EQ(count(b.g, OpType::kConv), 1);
}

// (x - mean) / sqrt(var + eps) * gamma + beta over the last axis, as
// Paddle2ONNX and older PyTorch exports write LayerNorm.
int32_t decomposed_layer_norm(Builder* b, int32_t x, const Shape& s, bool affine) {
    Shape reduced = s;
    reduced.back() = 1;
    rknn::graph::Attributes last;
    last.set_ints("axes", {-1});
    const int32_t mean = b->op(OpType::kReduceMean, {x}, reduced, last);
    const int32_t d = b->op(OpType::kSub, {x, mean}, s);
    const int32_t sq = b->op(OpType::kPow, {d, b->scalar(2.0f)}, s);
    const int32_t var = b->op(OpType::kReduceMean, {sq}, reduced, last);
    const int32_t sd = b->op(OpType::kSqrt, {b->op(OpType::kAdd, {var, b->scalar(1e-5f)}, reduced)}, reduced);
    int32_t y = b->op(OpType::kDiv, {d, sd}, s);
    if (affine) {
        y = b->op(OpType::kMul, {y, b->constant({s.back()}, 29)}, s);
        y = b->op(OpType::kAdd, {y, b->constant({s.back()}, 30)}, s);
    }
    return y;
}

TEST(ActivationPatterns, DecomposedLayerNormsBecomeOneOp) {
    for (bool affine : {true, false}) {
        SCOPED_TRACE(affine ? "with gamma and beta" : "plain");
        Builder b;
        const Shape s = {1, 6, 12};
        const int32_t x = b.input(s);
        b.g.outputs = {decomposed_layer_norm(&b, x, s, affine)};
        expect_same_result(&b, [](Graph* g) {
            rknn::convert::canonicalize_arithmetic(g);
            EXPECT_EQ(rknn::convert::fuse_layer_norms(g), 1);
        }, 1e-4f);
        ASSERT_EQ(b.g.ops.size(), 1u);
        EXPECT_EQ(b.g.ops[0].type, OpType::kLayerNormalization);
    }
}

TEST(ActivationPatterns, ALayerNormWhosePartsAreReadElsewhereStays) {
    Builder b;
    const Shape s = {2, 8};
    const int32_t x = b.input(s);
    const int32_t y = decomposed_layer_norm(&b, x, s, false);
    const int32_t d = b.g.ops[1].outputs[0];  // x - mean, also a graph output
    b.g.outputs = {y, d};
    EXPECT_EQ(rknn::convert::fuse_layer_norms(&b.g), 0);
}

// Paddle2ONNX's reshape targets: Concat(0, Cast(Slice(Cast(Shape(x)))), 3, 8, 15)
// with opset-9 Slice attributes, folded under the given input shape.
TEST(ShapeFolding, ReshapeTargetsComputedFromShapesFoldUnderTheInputShapes) {
    Builder b;
    const int32_t x = b.input({1, -1, 360});
    const int32_t sh = b.op(OpType::kShape, {x}, {3});
    b.g.tensors[sh].dtype = DType::kInt64;
    rknn::graph::Attributes to32, to64, slice;
    to32.set_string("to", "int32");
    to64.set_string("to", "int64");
    slice.set_ints("axes", {0});
    slice.set_ints("starts", {1});
    slice.set_ints("ends", {2});
    const int32_t sh32 = b.op(OpType::kCast, {sh}, {3}, to32);
    const int32_t seq = b.op(OpType::kSlice, {sh32}, {1}, slice);
    const int32_t seq64 = b.op(OpType::kCast, {seq}, {1}, to64);
    std::vector<int32_t> parts;
    for (int64_t v : {int64_t{0}, int64_t{-2}, int64_t{3}, int64_t{8}, int64_t{15}}) {
        if (v == -2) {
            parts.push_back(seq64);
            continue;
        }
        parts.push_back(b.g.add_constant("d" + std::to_string(b.next++), DType::kInt64, {1},
                                         rknn::graph::Buffer::copy_of(&v, 8)));
    }
    rknn::graph::Attributes axis0;
    axis0.set_int("axis", 0);
    const int32_t target = b.op(OpType::kConcat, parts, {5}, axis0);
    for (int32_t t : {sh32, seq}) b.g.tensors[t].dtype = DType::kInt32;
    for (int32_t t : {seq64, target}) b.g.tensors[t].dtype = DType::kInt64;
    const int32_t y = b.op(OpType::kReshape, {x, target}, {-1, -1, -1, -1, -1});
    b.g.outputs = {y};
    const std::vector<Shape> shapes = {{1, 40, 360}};
    auto folded = rknn::convert::fold_constants(&b.g, &shapes);
    ASSERT_TRUE(folded.is_ok()) << folded.status().message();
    EXPECT_EQ(folded.value(), 5);  // Shape, Cast, Slice, Cast, Concat
    ASSERT_EQ(b.g.ops.size(), 1u);
    EXPECT_EQ(b.g.tensors[b.g.ops[0].outputs[0]].shape, (Shape{1, 40, 3, 8, 15}));
    // Another width gives another constant.
    EXPECT_TRUE(b.g.is_constant(b.g.ops[0].inputs[1]));
}

// Found by the ONNX importer fuzzer: a Concat of scalars is refused, not indexed.
TEST(ShapeFolding, AConcatOfScalarConstantsIsAnError) {
    Builder b;
    rknn::graph::Attributes axis;
    axis.set_int("axis", 0);
    const int32_t y = b.op(OpType::kConcat, {b.scalar(1.0f), b.scalar(2.0f)}, {2}, axis);
    b.g.ops.back().name = "scalars";
    b.g.outputs = {y};
    auto folded = rknn::convert::fold_constants(&b.g, nullptr);
    ASSERT_FALSE(folded.is_ok());
    EXPECT_NE(folded.status().message().find("scalars"), std::string::npos) << folded.status().message();
}

// Found by the fuzzer too: an empty constant (no bytes, no address) in a folded Concat.
TEST(ShapeFolding, AnEmptyConstantFoldsWithoutReadingAnything) {
    Builder b;
    const float two[2] = {1.0f, 2.0f};
    const int32_t full = b.g.add_constant("full", DType::kFloat32, {2}, rknn::graph::Buffer::copy_of(two, 8));
    const int32_t empty = b.g.add_constant("empty", DType::kFloat32, {0}, rknn::graph::Buffer{});
    rknn::graph::Attributes axis;
    axis.set_int("axis", 0);
    const int32_t y = b.op(OpType::kConcat, {empty, full, empty}, {2}, axis);
    b.g.outputs = {y};
    auto folded = rknn::convert::fold_constants(&b.g, nullptr);
    ASSERT_TRUE(folded.is_ok()) << folded.status().message();
    EXPECT_EQ(folded.value(), 1);
    const rknn::graph::Buffer* out = b.g.constant_buffer(b.g.outputs[0]);
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(out->size, 8u);
    EXPECT_EQ(reinterpret_cast<const float*>(out->data)[1], 2.0f);
}

// A user op's declared static output shape is known: a Shape of it folds.
TEST(ShapeFolding, ShapesAfterACustomOpFoldFromItsDeclaredShapes) {
    Builder b;
    const int32_t x = b.input({1, 16, 8, 8});
    const int32_t c = b.value({1, 16, 8, 8});
    b.g.add_op({OpType::kCustom, "cst", "cstOp", {x}, {c}, {}});
    const int32_t sh = b.op(OpType::kShape, {c}, {4});
    b.g.tensors[sh].dtype = DType::kInt64;
    b.g.outputs = {sh};
    const std::vector<Shape> shapes = {{1, 16, 8, 8}};
    auto folded = rknn::convert::fold_constants(&b.g, &shapes);
    ASSERT_TRUE(folded.is_ok()) << folded.status().message();
    EXPECT_EQ(folded.value(), 1);
    EXPECT_TRUE(b.g.is_constant(b.g.outputs[0]));
}

TEST(ShapeFolding, AWrongTargetNamesTheOp) {
    Builder b;
    const int32_t x = b.input({1, 6});
    const int64_t dims[2] = {4, 4};
    const int32_t target = b.g.add_constant("target", DType::kInt64, {2}, rknn::graph::Buffer::copy_of(dims, 16));
    const int32_t y = b.op(OpType::kReshape, {x, target}, {4, 4});
    b.g.ops.back().name = "the_reshape";
    b.g.outputs = {y};
    const std::vector<Shape> shapes = {{1, 6}};
    auto folded = rknn::convert::fold_constants(&b.g, &shapes);
    ASSERT_FALSE(folded.is_ok());
    EXPECT_NE(folded.status().message().find("the_reshape"), std::string::npos) << folded.status().message();
}

}  // namespace
