// A transposed convolution whose kernel equals its stride (the 2x2 / stride 2
// upsampling of segmentation and detection heads: PP-OCR det's two) writes
// each input pixel's products into its own s x s block, with no overlap:
//   y[m, s*i + p, s*j + q] = b[m] + sum_c x[c, i, j] W[c, m, p, q].
// That is a 1x1 convolution to M*s*s channels, channel (m*s + p)*s + q
// holding W[:, m, p, q], followed by DepthToSpace (CRD) with block s, which
// moves channel (m, p, q) of pixel (i, j) to (s*i + p, s*j + q) of channel m.
// The convolution runs on the NPU, whose write side cannot interleave pixels
// (DECONV is not characterised), and leaves only the rearrangement to the CPU.
// An element-wise activation reading the result alone moves before the
// DepthToSpace (it commutes with it), so it fuses into the convolution.
#include "cpu/kernels/scalar_math.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace rknn::convert {
namespace {

using graph::Op;
using graph::OpType;

// The block size s when `op` is a 2-D transposed convolution with a square
// kernel equal to its stride, no padding, dilation or output padding, one
// group, constant float weights [C, M, s, s] and no fused extras; else 0.
int64_t block_of(const graph::Graph& g, const Op& op) {
    if (op.type != OpType::kConvTranspose || op.inputs.size() < 2 || op.outputs.size() != 1) return 0;
    if (op.attrs.has("activation") || op.attrs.get_int("fused_add", 0) != 0 || op.attrs.get_int("group", 1) != 1)
        return 0;
    const std::string auto_pad = op.attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID") return 0;
    if (op.attrs.has("output_shape")) return 0;
    if (op.inputs[0] < 0 || g.tensors[op.inputs[0]].shape.size() != 4 || g.tensors[op.inputs[0]].dtype != graph::DType::kFloat32)
        return 0;
    const graph::Shape& w = g.tensors[op.inputs[1]].shape;
    if (!g.is_constant(op.inputs[1]) || g.tensors[op.inputs[1]].dtype != graph::DType::kFloat32 || w.size() != 4 ||
        w[2] != w[3] || w[2] < 2 || w[0] <= 0 || w[1] <= 0)
        return 0;
    const int64_t s = w[2];
    for (int64_t v : op.attrs.get_ints("kernel_shape", {s, s}))
        if (v != s) return 0;
    for (int64_t v : op.attrs.get_ints("strides", {1, 1}))
        if (v != s) return 0;
    for (const char* zero : {"pads", "output_padding"})
        for (int64_t v : op.attrs.get_ints(zero, {}))
            if (v != 0) return 0;
    for (int64_t v : op.attrs.get_ints("dilations", {}))
        if (v != 1) return 0;
    if (op.inputs.size() > 2 && op.inputs[2] >= 0 &&
        (!g.is_constant(op.inputs[2]) || g.tensors[op.inputs[2]].shape != graph::Shape{w[1]}))
        return 0;
    return s;
}

// Activations act on each value alone, so they commute with moving values.
bool elementwise_activation(const Op& op) {
    return cpu::kernels::is_activation(op.type) && op.type != OpType::kIdentity && op.outputs.size() == 1;
}

}  // namespace

int deconvolutions_to_depth_to_space(graph::Graph* g) {
    const GraphIndex index(*g);
    std::vector<Op> ops;
    std::vector<bool> moved(g->ops.size(), false);  // activations already re-emitted before their DepthToSpace
    int rewritten = 0;
    for (size_t i = 0; i < g->ops.size(); ++i) {
        if (moved[i]) continue;
        Op op = g->ops[i];
        const int64_t s = block_of(*g, op);
        if (s == 0) {
            ops.push_back(std::move(op));
            continue;
        }
        const std::vector<float> w = constant_floats(*g, op.inputs[1]);
        const graph::Shape w_shape = g->tensors[op.inputs[1]].shape;
        const int64_t in_c = w_shape[0], m = w_shape[1], taps = s * s;
        if (w.size() != static_cast<size_t>(in_c * m * taps)) {
            ops.push_back(std::move(op));
            continue;
        }
        // W'[(m * s + p) * s + q][c] = W[c][m][p][q]: the weight's own [M][s][s] order.
        std::vector<float> kernels(w.size());
        for (int64_t c = 0; c < in_c; ++c)
            for (int64_t k = 0; k < m * taps; ++k) kernels[static_cast<size_t>(k * in_c + c)] = w[static_cast<size_t>(c * m * taps + k)];
        const std::string base = op.name.empty() ? g->tensors[op.outputs[0]].name : op.name;
        Op conv{OpType::kConv, base + "_as_conv", "", {op.inputs[0], add_float_constant(g, base + "_kernels", {m * taps, in_c, 1, 1}, kernels)},
                {}, {}};
        if (op.inputs.size() > 2 && op.inputs[2] >= 0) {
            const std::vector<float> bias = constant_floats(*g, op.inputs[2]);
            std::vector<float> repeated(static_cast<size_t>(m * taps));
            for (size_t k = 0; k < repeated.size(); ++k) repeated[k] = bias[k / static_cast<size_t>(taps)];
            conv.inputs.push_back(add_float_constant(g, base + "_bias", {m * taps}, repeated));
        }
        conv.attrs.set_ints("kernel_shape", {1, 1});
        const graph::Tensor x = g->tensors[op.inputs[0]];
        const graph::Tensor y = g->tensors[op.outputs[0]];
        graph::Tensor blocks{g->unique_tensor_name(base + "_blocks"), y.dtype, x.shape, x.dim_params, {}, -1, 0};
        blocks.shape[1] = m * taps;
        if (!blocks.dim_params.empty()) blocks.dim_params[1].clear();
        const int32_t blocks_id = g->add_tensor(blocks);
        conv.outputs = {blocks_id};
        ops.push_back(std::move(conv));
        // The one reader, an element-wise activation: it runs on the blocks.
        int32_t rearranged = blocks_id, result = op.outputs[0];
        const int32_t y_id = op.outputs[0];
        if (index.single_use(y_id)) {
            const int32_t reader = index.readers[y_id][0];
            Op act = g->ops[reader];
            if (elementwise_activation(act) && !act.inputs.empty() && act.inputs[0] == y_id &&
                static_cast<size_t>(reader) > i) {
                graph::Tensor activated = blocks;
                activated.name = g->unique_tensor_name(base + "_blocks_activated");
                const int32_t activated_id = g->add_tensor(activated);
                result = act.outputs[0];
                act.inputs[0] = blocks_id;
                act.outputs = {activated_id};
                ops.push_back(std::move(act));
                moved[static_cast<size_t>(reader)] = true;
                rearranged = activated_id;
            }
        }
        Op shuffle{OpType::kDepthToSpace, base + "_blocks_to_space", "", {rearranged}, {result}, {}};
        shuffle.attrs.set_int("blocksize", s);
        shuffle.attrs.set_string("mode", "CRD");
        ops.push_back(std::move(shuffle));
        ++rewritten;
    }
    g->ops = std::move(ops);
    return rewritten;
}

}  // namespace rknn::convert
