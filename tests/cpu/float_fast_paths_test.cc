// The float kernels' fast paths against what they replace:
// - Resize of H and W in a 4-D tensor (threaded per plane) equals the
//   general N-D loop bit for bit (the same resize with a leading unit dim);
// - depthwise and 1x1 convolutions, read straight from the input, and the
//   im2col + GEMM path equal a plain loop summing each output's taps in
//   order from zero (this file is built with -ffp-contract=off, as the
//   GEMM is), the bias added after;
// - transposed convolutions, whose kernel-equals-stride form scatters the
//   GEMM's columns with the bias in one pass, equal a loop adding each
//   output's column sums in tap order to zero, then the bias;
// - Transpose and Slice, which copy whole runs of the dims they keep in
//   order (over threads for large tensors), put every element where a
//   plain index computation puts it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/test_graphs.h"
#include "cpu/fused_ops.h"
#include "cpu/graph_executor.h"
#include "cpu/kernels/scalar_math.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::OpType;
using rknn::testing::add_tensor;

HostTensor run_one(const Graph& g, const HostTensor& x) {
    auto outputs = rknn::testing::run_reference(g, {x}, false);
    EXPECT_TRUE(outputs.is_ok()) << outputs.status().message();
    return outputs.is_ok() ? outputs.value()[0] : HostTensor();
}

struct ResizeCase {
    std::string mode, coordinates;
    std::vector<int64_t> out_hw;
    bool crop = false;  // tf_crop_and_resize with an ROI partly outside the input
};

Graph resize_graph(const ResizeCase& c, const rknn::graph::Shape& in, const rknn::graph::Shape& out) {
    Graph g;
    const int32_t x = add_tensor(&g, "x", DType::kFloat32, in);
    const auto rank = static_cast<int64_t>(in.size());
    std::vector<float> roi(static_cast<size_t>(2 * rank), 0.0f);
    for (int64_t d = 0; d < rank; ++d) roi[static_cast<size_t>(rank + d)] = 1.0f;
    roi[static_cast<size_t>(rank - 2)] = 0.1f;
    roi[static_cast<size_t>(2 * rank - 2)] = 0.9f;
    roi[static_cast<size_t>(rank - 1)] = -0.2f;
    roi[static_cast<size_t>(2 * rank - 1)] = 1.3f;
    const int32_t r = g.add_constant("roi", DType::kFloat32, {2 * rank},
                                     rknn::graph::Buffer::copy_of(roi.data(), roi.size() * 4));
    std::vector<int64_t> sizes(out.begin(), out.end());
    const int32_t s = g.add_constant("sizes", DType::kInt64, {rank},
                                     rknn::graph::Buffer::copy_of(sizes.data(), sizes.size() * 8));
    const int32_t y = add_tensor(&g, "y", DType::kFloat32, out);
    rknn::graph::Op op{OpType::kResize, "resize", "", {x, c.crop ? r : -1, -1, s}, {y}, {}};
    op.attrs.set_string("mode", c.mode);
    op.attrs.set_string("coordinate_transformation_mode", c.crop ? "tf_crop_and_resize" : c.coordinates);
    op.attrs.set_float("extrapolation_value", -3.5f);
    g.add_op(op);
    g.inputs = {x};
    g.outputs = {y};
    return g;
}

TEST(FloatFastPaths, PlaneResizeEqualsTheGeneralLoop) {
    const ResizeCase cases[] = {{"nearest", "asymmetric", {14, 18}},  {"linear", "half_pixel", {15, 20}},
                                {"linear", "align_corners", {5, 4}},  {"cubic", "half_pixel", {16, 11}},
                                {"linear", "", {12, 13}, true},       {"nearest", "pytorch_half_pixel", {7, 27}}};
    const HostTensor x4 = rknn::testing::random_floats({2, 3, 7, 9}, 5, -2.0f, 2.0f);
    HostTensor x5(DType::kFloat32, {1, 2, 3, 7, 9});
    std::memcpy(x5.raw(), x4.raw(), x4.byte_size());
    for (const ResizeCase& c : cases) {
        const HostTensor y4 = run_one(resize_graph(c, {2, 3, 7, 9}, {2, 3, c.out_hw[0], c.out_hw[1]}), x4);
        const HostTensor y5 = run_one(resize_graph(c, {1, 2, 3, 7, 9}, {1, 2, 3, c.out_hw[0], c.out_hw[1]}), x5);
        ASSERT_EQ(y4.numel(), 2 * 3 * c.out_hw[0] * c.out_hw[1]) << c.mode;
        ASSERT_EQ(y4.byte_size(), y5.byte_size()) << c.mode;
        EXPECT_EQ(std::memcmp(y4.raw(), y5.raw(), y4.byte_size()), 0) << c.mode << " " << c.coordinates << (c.crop ? " crop" : "");
        if (c.crop) {  // the crop reaches outside the input: those outputs take the extrapolation value
            int extrapolated = 0;
            for (int64_t i = 0; i < y4.numel(); ++i) extrapolated += y4.data<float>()[i] == -3.5f;
            EXPECT_GT(extrapolated, 0);
        }
    }
}

// Adds `op` (x -> y) to g, makes x and y the graph's input and output, and
// runs it on random input values; returns the input and the output.
std::pair<HostTensor, HostTensor> run_layer(Graph* g, const rknn::graph::Op& op, int32_t x, int32_t y,
                                            const rknn::graph::Shape& in_shape, uint32_t seed) {
    g->add_op(op);
    g->inputs = {x};
    g->outputs = {y};
    HostTensor input = rknn::testing::random_floats(in_shape, seed, -1.0f, 1.0f);
    HostTensor got = run_one(*g, input);
    return {input, got};
}

struct ConvCase {
    int c_in, c_out, group, h, w, k, stride, pad, dilation;
    OpType activation = OpType::kIdentity;  // fused into the op
};

TEST(FloatFastPaths, ConvolutionsEqualTheOrderedLoop) {
    const ConvCase cases[] = {
        {12, 12, 12, 11, 13, 3, 2, 1, 1},  // depthwise, strided
        {8, 8, 8, 9, 10, 5, 1, 4, 2},      // depthwise, dilated, padding wider than the taps reach
        {16, 24, 1, 6, 7, 1, 1, 0, 1},     // 1x1: the input is its own im2col
        {6, 10, 2, 8, 8, 3, 1, 1, 1},      // grouped: im2col + GEMM, groups over threads
        {5, 300, 1, 4, 3, 3, 1, 1, 1},     // more kernels than one GEMM panel
        // Fused activations: one job's rows take the bias and the activation
        // together (HardSwish with its post affine, as the converter folds it).
        {16, 32, 1, 60, 61, 1, 1, 0, 1, OpType::kHardSwish},
        {8, 8, 8, 30, 30, 3, 1, 1, 1, OpType::kHardSwish},
        {6, 10, 2, 8, 8, 3, 1, 1, 1, OpType::kRelu},
    };
    uint32_t seed = 40;
    for (const ConvCase& c : cases) {
        Graph g;
        const int32_t x = add_tensor(&g, "x", DType::kFloat32, {1, c.c_in, c.h, c.w});
        const int per_group = c.c_in / c.group;
        const int32_t w = rknn::testing::random_constant(&g, "w", {c.c_out, per_group, c.k, c.k}, seed++);
        const int32_t b = rknn::testing::random_constant(&g, "b", {c.c_out}, seed++);
        const int span = (c.k - 1) * c.dilation + 1;
        const int oh = (c.h + 2 * c.pad - span) / c.stride + 1, ow = (c.w + 2 * c.pad - span) / c.stride + 1;
        const int32_t y = add_tensor(&g, "y", DType::kFloat32, {1, c.c_out, oh, ow});
        rknn::graph::Op op{OpType::kConv, "conv", "", {x, w, b}, {y}, {}};
        op.attrs.set_ints("strides", {c.stride, c.stride});
        op.attrs.set_ints("pads", {c.pad, c.pad, c.pad, c.pad});
        op.attrs.set_ints("dilations", {c.dilation, c.dilation});
        op.attrs.set_int("group", c.group);
        rknn::cpu::kernels::Activation act;
        act.type = c.activation;
        if (c.activation == OpType::kHardSwish) {
            act.alpha = 1.0f / 6.0f;
            act.beta = 0.5f;
            act.post_scale = 0.75f;
            act.post_bias = -0.125f;
        }
        if (c.activation != OpType::kIdentity) rknn::cpu::set_fused_activation(&op, act);
        const auto [input, got] = run_layer(&g, op, x, y, {1, c.c_in, c.h, c.w}, seed++);
        ASSERT_EQ(got.numel(), int64_t{c.c_out} * oh * ow);
        const float* wv = reinterpret_cast<const float*>(g.constant_buffer(w)->data);
        const float* bv = reinterpret_cast<const float*>(g.constant_buffer(b)->data);
        const float* xv = input.data<float>();
        const int out_per_group = c.c_out / c.group;
        int mismatches = 0;
        for (int o = 0; o < c.c_out; ++o)
            for (int oy = 0; oy < oh; ++oy)
                for (int ox = 0; ox < ow; ++ox) {
                    float sum = 0.0f;
                    const int first = (o / out_per_group) * per_group;
                    for (int ci = 0; ci < per_group; ++ci)
                        for (int ky = 0; ky < c.k; ++ky)
                            for (int kx = 0; kx < c.k; ++kx) {
                                const int iy = oy * c.stride - c.pad + ky * c.dilation;
                                const int ix = ox * c.stride - c.pad + kx * c.dilation;
                                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                                sum += xv[((first + ci) * c.h + iy) * c.w + ix] *
                                       wv[((o * per_group + ci) * c.k + ky) * c.k + kx];
                            }
                    float want = sum + bv[o];
                    if (c.activation != OpType::kIdentity) want = rknn::cpu::kernels::apply_activation(act, want);
                    mismatches += std::memcmp(&got.data<float>()[(o * oh + oy) * ow + ox], &want, sizeof want) != 0;
                }
        EXPECT_EQ(mismatches, 0) << c.c_in << "->" << c.c_out << " group " << c.group << " k" << c.k;
    }
}

struct ConvTransposeCase {
    int c_in, c_out, group, h, w, k, stride, pad, output_padding;
};

TEST(FloatFastPaths, TransposedConvolutionsEqualTheOrderedLoop) {
    const ConvTransposeCase cases[] = {
        {24, 24, 1, 30, 31, 2, 2, 0, 0},  // kernel == stride: one tap per output (PP-OCR's upsampling)
        {6, 1, 1, 9, 7, 2, 2, 0, 0},      // one output channel
        {8, 6, 2, 5, 6, 3, 3, 0, 0},      // grouped, 3x3 tiles
        {6, 4, 1, 7, 5, 3, 2, 1, 0},      // overlapping taps with padding: col2im
        {4, 5, 1, 6, 6, 2, 2, 0, 1},      // an extra output row and column stay bias only
    };
    uint32_t seed = 70;
    for (const ConvTransposeCase& c : cases) {
        Graph g;
        const int32_t x = add_tensor(&g, "x", DType::kFloat32, {1, c.c_in, c.h, c.w});
        const int in_per_group = c.c_in / c.group, out_per_group = c.c_out / c.group;
        const int32_t w = rknn::testing::random_constant(&g, "w", {c.c_in, out_per_group, c.k, c.k}, seed++);
        const int32_t b = rknn::testing::random_constant(&g, "b", {c.c_out}, seed++);
        const int oh = (c.h - 1) * c.stride - 2 * c.pad + c.k + c.output_padding;
        const int ow = (c.w - 1) * c.stride - 2 * c.pad + c.k + c.output_padding;
        const int32_t y = add_tensor(&g, "y", DType::kFloat32, {1, c.c_out, oh, ow});
        rknn::graph::Op op{OpType::kConvTranspose, "deconv", "", {x, w, b}, {y}, {}};
        op.attrs.set_ints("kernel_shape", {c.k, c.k});
        op.attrs.set_ints("strides", {c.stride, c.stride});
        op.attrs.set_ints("pads", {c.pad, c.pad, c.pad, c.pad});
        op.attrs.set_ints("output_padding", {c.output_padding, c.output_padding});
        op.attrs.set_int("group", c.group);
        const auto [input, got] = run_layer(&g, op, x, y, {1, c.c_in, c.h, c.w}, seed++);
        ASSERT_EQ(got.numel(), int64_t{c.c_out} * oh * ow);
        const float* wv = reinterpret_cast<const float*>(g.constant_buffer(w)->data);
        const float* bv = reinterpret_cast<const float*>(g.constant_buffer(b)->data);
        const float* xv = input.data<float>();
        int mismatches = 0;
        for (int o = 0; o < c.c_out; ++o)
            for (int oy = 0; oy < oh; ++oy)
                for (int ox = 0; ox < ow; ++ox) {
                    const int grp = o / out_per_group, og = o % out_per_group;
                    float value = 0.0f;
                    for (int ky = 0; ky < c.k; ++ky)
                        for (int kx = 0; kx < c.k; ++kx) {
                            const int ty = oy + c.pad - ky, tx = ox + c.pad - kx;
                            if (ty < 0 || tx < 0 || ty % c.stride != 0 || tx % c.stride != 0) continue;
                            const int iy = ty / c.stride, ix = tx / c.stride;
                            if (iy >= c.h || ix >= c.w) continue;
                            float sum = 0.0f;
                            for (int ci = 0; ci < in_per_group; ++ci) {
                                const int cin = grp * in_per_group + ci;
                                sum += wv[((cin * out_per_group + og) * c.k + ky) * c.k + kx] * xv[(cin * c.h + iy) * c.w + ix];
                            }
                            value += sum;
                        }
                    const float want = value + bv[o];
                    mismatches += std::memcmp(&got.data<float>()[(o * oh + oy) * ow + ox], &want, sizeof want) != 0;
                }
        EXPECT_EQ(mismatches, 0) << c.c_in << "->" << c.c_out << " group " << c.group << " k" << c.k << " s" << c.stride;
    }
}

// The input's element for each output element, from the output's index.
template <typename SourceIndex>
void expect_each_element(const HostTensor& x, const HostTensor& y, SourceIndex source_index) {
    const rknn::graph::Shape& shape = y.shape();
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t i = 0; i < y.numel(); ++i) {
        ASSERT_EQ(y.data<float>()[i], x.data<float>()[source_index(index)]) << "output element " << i;
        for (size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < shape[d]) break;
            index[d] = 0;
        }
    }
}

// x [in] -> one op -> y [out]; `make` adds the op's constants and returns it.
template <typename Make>
Graph one_op_graph(const rknn::graph::Shape& in, const rknn::graph::Shape& out, Make make) {
    Graph g;
    const int32_t x = add_tensor(&g, "x", DType::kFloat32, in), y = add_tensor(&g, "y", DType::kFloat32, out);
    g.ops.push_back(make(g, x, y));
    g.inputs = {x};
    g.outputs = {y};
    return g;
}

TEST(FloatFastPaths, TransposesAndSlicesMoveEveryElement) {
    const rknn::graph::Shape in{2, 3, 40, 24, 16};  // 92160 floats: the threaded path
    HostTensor x = rknn::testing::random_floats(in, 77, -1.0f, 1.0f);
    for (int i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i);  // every value distinct
    const std::vector<int64_t> strides{3 * 40 * 24 * 16, 40 * 24 * 16, 24 * 16, 16, 1};
    for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{
             {0, 2, 1, 3, 4}, {4, 3, 2, 1, 0}, {0, 1, 2, 4, 3}, {1, 0, 3, 2, 4}, {0, 1, 2, 3, 4}}) {
        SCOPED_TRACE("perm " + std::to_string(perm[0]) + std::to_string(perm[1]) + std::to_string(perm[2]) +
                     std::to_string(perm[3]) + std::to_string(perm[4]));
        rknn::graph::Shape out(5);
        for (size_t d = 0; d < 5; ++d) out[d] = in[static_cast<size_t>(perm[d])];
        const Graph g = one_op_graph(in, out, [&](Graph&, int32_t a, int32_t b) {
            rknn::graph::Op op{OpType::kTranspose, "t", "", {a}, {b}, {}};
            op.attrs.set_ints("perm", perm);
            return op;
        });
        const HostTensor y = run_one(g, x);
        ASSERT_EQ(y.shape(), out);
        expect_each_element(x, y, [&](const std::vector<int64_t>& o) {
            int64_t at = 0;
            for (size_t d = 0; d < 5; ++d) at += o[d] * strides[static_cast<size_t>(perm[d])];
            return at;
        });
    }
    // Slices: a channel range (whole runs), and every other row backwards.
    struct SliceCase {
        std::vector<int64_t> starts, ends, axes, steps;
    };
    for (const SliceCase& c : {SliceCase{{1}, {3}, {1}, {1}}, SliceCase{{39, 5}, {0, 14}, {2, 4}, {-2, 1}}}) {
        rknn::graph::Shape out = in;
        for (size_t k = 0; k < c.axes.size(); ++k) {
            const auto axis = static_cast<size_t>(c.axes[k]);
            out[axis] = c.steps[k] > 0 ? (c.ends[k] - c.starts[k] + c.steps[k] - 1) / c.steps[k]
                                       : (c.starts[k] - c.ends[k] - c.steps[k] - 1) / -c.steps[k];
        }
        const Graph g = one_op_graph(in, out, [&](Graph& graph, int32_t a, int32_t b) {
            const auto constant = [&](const char* name, const std::vector<int64_t>& v) {
                return graph.add_constant(name, DType::kInt64, {static_cast<int64_t>(v.size())},
                                          rknn::graph::Buffer::copy_of(v.data(), v.size() * 8));
            };
            return rknn::graph::Op{OpType::kSlice, "s", "", {a, constant("starts", c.starts), constant("ends", c.ends),
                                                             constant("axes", c.axes), constant("steps", c.steps)},
                                   {b}, {}};
        });
        const HostTensor y = run_one(g, x);
        ASSERT_EQ(y.shape(), out);
        expect_each_element(x, y, [&](const std::vector<int64_t>& o) {
            int64_t at = 0;
            for (size_t d = 0; d < 5; ++d) {
                int64_t pos = o[d];
                for (size_t k = 0; k < c.axes.size(); ++k)
                    if (static_cast<size_t>(c.axes[k]) == d) pos = c.starts[k] + o[d] * c.steps[k];
                at += pos * strides[d];
            }
            return at;
        });
    }
}

}  // namespace
