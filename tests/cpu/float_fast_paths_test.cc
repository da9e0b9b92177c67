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
//   plain index computation puts it;
// - MaxPool and AveragePool (blocks of outputs across vector lanes, rows
//   over threads) equal the loop that visits each window's taps in order,
//   bit for bit, NaNs included; the global pools equal a plain sum in
//   double (within one float ulp, nearly always exactly) and a running max.
#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/test_graphs.h"
#include "cpu/fused_ops.h"
#include "cpu/graph_executor.h"
#include "cpu/kernels/scalar_math.h"
#include "cpu/kernels/window.h"
#include "graph/spatial.h"

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

struct PoolCase {
    bool average;
    std::vector<int64_t> in_spatial, kernel, strides, pads, dilations;
    bool ceil = false, include_pad = false;
};

// The reference kernels' loop (what cpu/kernels/pool.cc ran before its fast
// forms): each window's taps in kz, ky, kx order.
std::vector<float> ordered_pool(const rknn::cpu::kernels::Window3& g, bool average, bool include_pad, const float* x,
                                int64_t planes) {
    std::vector<float> y(static_cast<size_t>(planes * g.out_size()));
    for (int64_t p = 0; p < planes; ++p)
        for (int64_t oz = 0; oz < g.out[0]; ++oz)
            for (int64_t oy = 0; oy < g.out[1]; ++oy)
                for (int64_t ox = 0; ox < g.out[2]; ++ox) {
                    const int64_t o[3] = {oz, oy, ox};
                    float sum = 0.0f, best = std::numeric_limits<float>::lowest();
                    int64_t count = 0, padded = 1;
                    for (int d = 0; d < 3; ++d) {
                        int64_t inside = 0;
                        for (int64_t k = 0; k < g.kernel[d]; ++k) {
                            const int64_t i = o[d] * g.stride[d] - g.pad[d] + k * g.dilation[d];
                            inside += i >= -g.pad[d] && i < g.in[d] + g.pad_end[d];
                        }
                        padded *= inside;
                    }
                    for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
                        for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
                            for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                                const int64_t iz = oz * g.stride[0] - g.pad[0] + kz * g.dilation[0];
                                const int64_t iy = oy * g.stride[1] - g.pad[1] + ky * g.dilation[1];
                                const int64_t ix = ox * g.stride[2] - g.pad[2] + kx * g.dilation[2];
                                if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1] || ix < 0 || ix >= g.in[2]) continue;
                                const float v = x[p * g.in_size() + (iz * g.in[1] + iy) * g.in[2] + ix];
                                sum += v;
                                if (count == 0 || v > best) best = v;
                                ++count;
                            }
                    if (include_pad) count = padded;
                    y[static_cast<size_t>((p * g.out[0] + oz) * g.out[1] * g.out[2] + oy * g.out[2] + ox)] =
                        average ? (count > 0 ? sum / static_cast<float>(count) : 0.0f) : best;
                }
    return y;
}

TEST(FloatFastPaths, PoolsEqualTheOrderedLoop) {
    const PoolCase cases[] = {
        {true, {6, 80}, {3, 2}, {3, 2}, {0, 0, 0, 0}, {1, 1}},                  // PP-OCRv4 rec's AveragePool
        {true, {13, 70}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},                 // padded, outputs beyond one block
        {true, {13, 70}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, true},    // count_include_pad
        {true, {12, 67}, {5, 4}, {2, 3}, {2, 1, 1, 3}, {1, 2}, true, true},     // ceil_mode, strides 2 and 3, dilated
        {false, {9, 75}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},                 // stride 2 max
        {false, {10, 66}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true},          // ceil_mode max
        {false, {7, 41}, {3, 5}, {1, 1}, {1, 2, 1, 2}, {2, 1}},                 // dilated rows
        {true, {50}, {4}, {1}, {2, 1}, {1}},                                    // 1-D
        {false, {4, 5, 40}, {2, 3, 3}, {1, 1, 1}, {1, 1, 1, 0, 1, 1}, {1, 1, 1}},  // 3-D
    };
    uint32_t seed = 90;
    for (const PoolCase& c : cases) {
        rknn::graph::Shape in_shape = {2, 3};
        in_shape.insert(in_shape.end(), c.in_spatial.begin(), c.in_spatial.end());
        rknn::graph::Op op{c.average ? OpType::kAveragePool : OpType::kMaxPool, "pool", "", {}, {}, {}};
        op.attrs.set_ints("kernel_shape", c.kernel);
        op.attrs.set_ints("strides", c.strides);
        op.attrs.set_ints("pads", c.pads);
        op.attrs.set_ints("dilations", c.dilations);
        op.attrs.set_int("ceil_mode", c.ceil ? 1 : 0);
        op.attrs.set_int("count_include_pad", c.include_pad ? 1 : 0);
        auto spatial = rknn::graph::forward_spatial(op.attrs, c.in_spatial, c.kernel, true);
        ASSERT_TRUE(spatial.is_ok()) << spatial.status().message();
        auto window = rknn::cpu::kernels::to_window3(spatial.value(), c.in_spatial);
        ASSERT_TRUE(window.is_ok());
        rknn::graph::Shape out_shape = {2, 3};
        out_shape.insert(out_shape.end(), spatial.value().out.begin(), spatial.value().out.end());
        Graph g;
        const int32_t x = add_tensor(&g, "x", DType::kFloat32, in_shape);
        const int32_t y = add_tensor(&g, "y", DType::kFloat32, out_shape);
        op.inputs = {x};
        op.outputs = {y};
        g.add_op(op);
        g.inputs = {x};
        g.outputs = {y};
        HostTensor input = rknn::testing::random_floats(in_shape, seed++, -4.0f, 4.0f);
        if (!c.average) {  // NaNs first in a window and later in one
            input.data<float>()[0] = std::nanf("");
            input.data<float>()[input.numel() / 2 + 1] = std::nanf("");
        }
        const HostTensor got = run_one(g, input);
        const std::vector<float> want = ordered_pool(window.value(), c.average, c.include_pad, input.data<float>(), 6);
        ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
        int mismatches = 0;
        for (size_t i = 0; i < want.size(); ++i) mismatches += std::memcmp(&got.data<float>()[i], &want[i], 4) != 0;
        EXPECT_EQ(mismatches, 0) << (c.average ? "average" : "max") << " over " << in_shape.size() - 2 << "-D, kernel "
                                 << c.kernel[0];
    }
}

TEST(FloatFastPaths, GlobalPoolsEqualAPlainSumAndMax) {
    int exact = 0, total = 0;
    uint32_t seed = 120;
    for (const rknn::graph::Shape& shape :
         std::vector<rknn::graph::Shape>{{1, 480, 6, 80}, {2, 5, 7, 7}, {1, 3, 1, 1}, {1, 4, 3, 5}, {1, 2, 33}}) {
        for (const bool average : {true, false}) {
            Graph g;
            const int32_t x = add_tensor(&g, "x", DType::kFloat32, shape);
            rknn::graph::Shape out_shape(shape.size(), 1);
            out_shape[0] = shape[0];
            out_shape[1] = shape[1];
            const int32_t y = add_tensor(&g, "y", DType::kFloat32, out_shape);
            g.add_op({average ? OpType::kGlobalAveragePool : OpType::kGlobalMaxPool, "gp", "", {x}, {y}, {}});
            g.inputs = {x};
            g.outputs = {y};
            // Mostly positive values with a large offset, so that the order of the sum shows.
            HostTensor input = rknn::testing::random_floats(shape, seed++, -3.0f, 1000.0f);
            if (!average) input.data<float>()[input.numel() - 1] = std::nanf("");
            const HostTensor got = run_one(g, input);
            const int64_t planes = shape[0] * shape[1], size = input.numel() / planes;
            ASSERT_EQ(got.numel(), planes);
            for (int64_t p = 0; p < planes; ++p) {
                double sum = 0.0;
                float best = std::numeric_limits<float>::lowest();
                for (int64_t i = 0; i < size; ++i) {
                    const float v = input.data<float>()[p * size + i];
                    sum += v;
                    best = std::max(best, v);
                }
                const float want = average ? static_cast<float>(sum / static_cast<double>(size)) : best;
                const float have = got.data<float>()[p];
                if (average) {
                    EXPECT_LE(std::fabs(have - want), std::nextafter(std::fabs(want), INFINITY) - std::fabs(want)) << p;
                    exact += have == want;
                    ++total;
                } else {
                    EXPECT_EQ(have, want) << p;
                }
            }
        }
    }
    // The partial sums change the double total only in its last bits.
    EXPECT_GE(exact, total - 2) << exact << " of " << total << " means exact";
}

}  // namespace
