// Affine folding: multiplications and additions by constants that scale or
// shift whole channels (a scalar, or one value per channel) are absorbed into
// the layer next to them, so an int8 model quantises one tensor where the
// exporter wrote three. PP-LCNet's "learnable affine blocks" and a standalone
// BatchNormalization are the usual sources.
//
//   after a Conv/ConvTranspose/Gemm:   W' = W * c, b' = b * c + d (per output channel)
//   after a lookup-table activation:   y = a * f(x) + d   (recorded on the op)
//   before a Conv without padding:     W' = W * c, b' = b + sum(W * d) (per input channel)
//   anything left on an NCHW tensor:   a depthwise 1x1 Conv (weight c, bias d)
//   a float16 HardSwish's post bias d, before float16 Convs without padding:
//                                      b' = b + sum(W) * d (once the float16
//                                      layers are known, after quantisation)
//
// The passes expect canonical arithmetic (canonicalize_arithmetic): the
// constant is the second operand and division/subtraction are gone.
#include <cmath>

#include "base/half.h"
#include "cpu/int8/lut_stage.h"
#include "passes/graph_edit.h"
#include "passes/passes.h"

namespace rknn::convert {
namespace {

using graph::Op;
using graph::OpType;

// Mul or Add of a non-constant float32 tensor by a float32 constant.
bool is_affine_step(const graph::Graph& g, const Op& op) {
    if ((op.type != OpType::kMul && op.type != OpType::kAdd) || op.inputs.size() != 2 || op.outputs.size() != 1 ||
        op.inputs[0] < 0 || op.inputs[1] < 0)
        return false;
    const graph::Tensor& x = g.tensors[op.inputs[0]];
    return !g.is_constant(op.inputs[0]) && g.is_constant(op.inputs[1]) && x.dtype == graph::DType::kFloat32 &&
           g.tensors[op.inputs[1]].dtype == graph::DType::kFloat32 && g.tensors[op.outputs[0]].shape == x.shape;
}

bool is_static(const graph::Shape& s) {
    for (int64_t d : s) {
        if (d < 0) return false;
    }
    return !s.empty();
}

// The float32 bias of a Conv-like op (input 2), or zeros when it has none;
// empty when the bias is not a float32 constant of `channels` values.
std::vector<float> bias_or_zeros(const graph::Graph& g, const Op& op, int64_t channels) {
    if (op.inputs.size() < 3 || op.inputs[2] < 0) return std::vector<float>(static_cast<size_t>(channels), 0.0f);
    std::vector<float> b = constant_floats(g, op.inputs[2]);
    return static_cast<int64_t>(b.size()) == channels ? b : std::vector<float>{};
}

void set_bias(graph::Graph* g, Op* op, const std::string& base, const std::vector<float>& bias) {
    if (op->inputs.size() < 3) op->inputs.resize(3, -1);
    op->inputs[2] = add_float_constant(g, base + "_bias", {static_cast<int64_t>(bias.size())}, bias);
}

// ---- into the producer -------------------------------------------------------

// Axis of the producer's weights that indexes its output channels, -1 if it
// cannot absorb a per-channel affine.
int weight_channel_axis(const graph::Graph& g, const Op& p) {
    if (p.attrs.has("activation") || p.attrs.get_int("fused_add", 0) != 0 || p.inputs.size() < 2 ||
        !g.is_constant(p.inputs[1]) || g.tensors[p.inputs[1]].dtype != graph::DType::kFloat32)
        return -1;
    if (p.type == OpType::kConv) return 0;
    if (p.type == OpType::kConvTranspose) return p.attrs.get_int("group", 1) == 1 ? 1 : -1;
    if (p.type == OpType::kGemm) {
        if (p.attrs.get_int("transA", 0) != 0 || p.attrs.get_float("alpha", 1.0f) != 1.0f ||
            p.attrs.get_float("beta", 1.0f) != 1.0f)
            return -1;
        return p.attrs.get_int("transB", 0) != 0 ? 0 : 1;
    }
    return -1;
}

bool fold_into_producer(graph::Graph* g, const GraphIndex& index, int32_t step_index) {
    const Op& step = g->ops[step_index];
    const int32_t x = step.inputs[0];
    const int32_t p = index.producer[x];
    if (p < 0 || !index.single_use(x) || g->ops[p].outputs.size() != 1) return false;
    Op& producer = g->ops[p];
    const int axis = weight_channel_axis(*g, producer);
    if (axis < 0) return false;
    // Output channels are axis 1 both of a convolution's [N, C, ...] and of Gemm's [M, N].
    const std::vector<float> c = per_channel_values(*g, step.inputs[1], g->tensors[x].shape, 1);
    if (c.empty()) return false;
    const int64_t channels = static_cast<int64_t>(c.size());
    const graph::Shape w_shape = g->tensors[producer.inputs[1]].shape;
    if (static_cast<size_t>(axis) >= w_shape.size() || w_shape[axis] != channels) return false;
    std::vector<float> bias = bias_or_zeros(*g, producer, channels);
    if (bias.empty()) return false;
    if (producer.type == OpType::kGemm && producer.inputs.size() > 2 && producer.inputs[2] >= 0) {
        // Gemm's C broadcasts over [M, N]: only a C of [N] or [1, N] is one value per output column.
        const graph::Shape& c_shape = g->tensors[producer.inputs[2]].shape;
        if (!(c_shape.size() == 1 || (c_shape.size() == 2 && c_shape[0] == 1))) return false;
    }
    const std::string base = g->tensors[producer.inputs[1]].name;
    if (step.type == OpType::kMul) {
        std::vector<float> w = constant_floats(*g, producer.inputs[1]);
        int64_t inner = 1;
        for (size_t d = static_cast<size_t>(axis) + 1; d < w_shape.size(); ++d) inner *= w_shape[d];
        for (size_t i = 0; i < w.size(); ++i) w[i] *= c[static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels)];
        for (int64_t k = 0; k < channels; ++k) bias[k] *= c[k];
        producer.inputs[1] = add_float_constant(g, base + "_scaled", w_shape, w);
    } else {
        for (int64_t k = 0; k < channels; ++k) bias[k] += c[k];
    }
    set_bias(g, &producer, base, bias);
    producer.outputs[0] = step.outputs[0];
    return true;
}

// ---- into a lookup-table activation -------------------------------------------

bool fold_into_activation(graph::Graph* g, const GraphIndex& index, int32_t step_index) {
    const Op& step = g->ops[step_index];
    const int32_t x = step.inputs[0];
    const int32_t p = index.producer[x];
    float c = 0.0f;
    if (p < 0 || !index.single_use(x) || !scalar_value(*g, step.inputs[1], &c)) return false;
    Op& act = g->ops[p];
    if (!cpu::int8::needs_lut(act.type) || act.outputs.size() != 1 || act.inputs.size() != 1) return false;
    float scale = act.attrs.get_float("post_scale", 1.0f);
    float bias = act.attrs.get_float("post_bias", 0.0f);
    if (step.type == OpType::kMul) {
        scale *= c;
        bias *= c;
    } else {
        bias += c;
    }
    act.attrs.set_float("post_scale", scale);
    act.attrs.set_float("post_bias", bias);
    act.outputs[0] = step.outputs[0];
    return true;
}

// ---- into the consumers --------------------------------------------------------

// A Conv with constant weights, without padding, reading `tensor` as its
// input and nowhere else.
bool conv_reads_alone_unpadded(const graph::Graph& g, const Op& op, int32_t tensor) {
    if (op.type != OpType::kConv || op.inputs.size() < 2 || op.inputs[0] != tensor || op.inputs[1] < 0 ||
        !g.is_constant(op.inputs[1]))
        return false;
    for (size_t i = 1; i < op.inputs.size(); ++i) {
        if (op.inputs[i] == tensor) return false;
    }
    const std::string auto_pad = op.attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && !auto_pad.empty()) return false;
    for (int64_t v : op.attrs.get_ints("pads")) {
        if (v != 0) return false;
    }
    return true;
}

bool unpadded_conv_reading(const graph::Graph& g, const Op& op, int32_t tensor) {
    return conv_reads_alone_unpadded(g, op, tensor) && g.tensors[op.inputs[1]].dtype == graph::DType::kFloat32;
}

// Absorbs `step` (per input channel `c`) into one convolution reading its result.
void absorb_input_affine(graph::Graph* g, Op* conv, OpType step, const std::vector<float>& c) {
    const graph::Shape w_shape = g->tensors[conv->inputs[1]].shape;
    std::vector<float> w = constant_floats(*g, conv->inputs[1]);
    const int64_t oc = w_shape[0], icg = w_shape[1];
    const int64_t groups = conv->attrs.get_int("group", 1);
    const int64_t taps = static_cast<int64_t>(w.size()) / (oc * icg);
    const int64_t oc_per_group = oc / groups;
    const std::string base = g->tensors[conv->inputs[1]].name;
    if (step == OpType::kMul) {
        for (int64_t o = 0; o < oc; ++o)
            for (int64_t j = 0; j < icg; ++j)
                for (int64_t k = 0; k < taps; ++k) w[(o * icg + j) * taps + k] *= c[(o / oc_per_group) * icg + j];
        conv->inputs[1] = add_float_constant(g, base + "_in_scaled", w_shape, w);
        return;
    }
    std::vector<float> bias = bias_or_zeros(*g, *conv, oc);
    for (int64_t o = 0; o < oc; ++o) {
        double sum = 0.0;
        for (int64_t j = 0; j < icg; ++j)
            for (int64_t k = 0; k < taps; ++k) sum += double(w[(o * icg + j) * taps + k]) * c[(o / oc_per_group) * icg + j];
        bias[o] += static_cast<float>(sum);
    }
    set_bias(g, conv, base + "_in_shifted", bias);
}

bool fold_into_consumers(graph::Graph* g, const GraphIndex& index, int32_t step_index) {
    const Op step = g->ops[step_index];
    const int32_t y = step.outputs[0];
    if (index.is_output[y] || index.readers[y].empty()) return false;
    const graph::Shape& shape = g->tensors[y].shape;
    if (shape.size() < 3 || !is_static(shape)) return false;
    const std::vector<float> c = per_channel_values(*g, step.inputs[1], shape, 1);
    if (c.empty()) return false;
    for (int32_t r : index.readers[y]) {
        const Op& conv = g->ops[r];
        if (!unpadded_conv_reading(*g, conv, y)) return false;
        const graph::Shape& w = g->tensors[conv.inputs[1]].shape;
        const int64_t groups = conv.attrs.get_int("group", 1);
        if (w.size() != shape.size() || groups <= 0 || w[1] * groups != shape[1] || w[0] % groups != 0) return false;
        if (bias_or_zeros(*g, conv, w[0]).empty()) return false;
    }
    for (int32_t r : index.readers[y]) {
        absorb_input_affine(g, &g->ops[r], step.type, c);
        g->ops[r].inputs[0] = step.inputs[0];
    }
    return true;
}

// ---- a float16 activation's bias, into the convolutions reading it ----------------

// A float16 convolution reading `tensor` as its input alone, without padding,
// with constant weights and a float32 bias (or none).
bool fp16_unpadded_conv_reading(const graph::Graph& g, const Op& op, int32_t tensor) {
    if (!conv_reads_alone_unpadded(g, op, tensor) || op.outputs.size() != 1 ||
        g.tensors[op.outputs[0]].dtype != graph::DType::kFloat16)
        return false;
    const graph::DType w = g.tensors[op.inputs[1]].dtype;
    if (w != graph::DType::kFloat16 && w != graph::DType::kFloat32) return false;
    const int64_t out_channels = g.tensors[op.inputs[1]].shape.empty() ? 0 : g.tensors[op.inputs[1]].shape[0];
    return out_channels > 0 && !bias_or_zeros(g, op, out_channels).empty();
}

// The weights of `conv` as floats (float16 or float32 constants).
std::vector<float> weights_as_floats(const graph::Graph& g, const Op& conv) {
    const int32_t w = conv.inputs[1];
    if (g.tensors[w].dtype == graph::DType::kFloat32) return constant_floats(g, w);
    const graph::Buffer* buffer = g.constant_buffer(w);
    std::vector<float> values(buffer != nullptr ? buffer->size / 2 : 0);
    if (!values.empty()) halves_to_floats(buffer->data, values.data(), values.size());
    return values;
}


// ---- what is left: a depthwise 1x1 convolution ----------------------------------

bool to_depthwise(graph::Graph* g, Op* step) {
    const graph::Shape shape = g->tensors[step->inputs[0]].shape;
    if (shape.size() != 4 || !is_static(shape)) return false;
    const std::vector<float> c = per_channel_values(*g, step->inputs[1], shape, 1);
    if (c.empty()) return false;
    const int64_t channels = shape[1];
    const bool mul = step->type == OpType::kMul;
    const std::vector<float> w = mul ? c : std::vector<float>(c.size(), 1.0f);
    const std::vector<float> b = mul ? std::vector<float>(c.size(), 0.0f) : c;
    const std::string base = g->tensors[step->inputs[1]].name;
    const int32_t wt = add_float_constant(g, base + "_dw", {channels, 1, 1, 1}, w);
    const int32_t bt = add_float_constant(g, base + "_dw_bias", {channels}, b);
    step->type = OpType::kConv;
    step->inputs = {step->inputs[0], wt, bt};
    step->attrs = {};
    step->attrs.set_int("group", channels);
    step->attrs.set_ints("kernel_shape", {1, 1});
    step->attrs.set_ints("strides", {1, 1});
    step->attrs.set_ints("pads", {0, 0, 0, 0});
    step->attrs.set_ints("dilations", {1, 1});
    return true;
}

// Applies `fold` to every affine step until nothing changes.
template <typename Fold>
int fold_all(graph::Graph* g, Fold fold) {
    int total = 0;
    for (bool changed = true; changed;) {
        changed = false;
        const GraphIndex index(*g);
        std::set<int32_t> dead;
        std::set<int32_t> touched;  // tensors whose producer or readers changed this round
        for (size_t i = 0; i < g->ops.size(); ++i) {
            const Op& op = g->ops[i];
            if (!is_affine_step(*g, op) || touched.count(op.inputs[0]) || touched.count(op.outputs[0])) continue;
            if (!fold(g, index, static_cast<int32_t>(i))) continue;
            touched.insert(g->ops[i].inputs[0]);
            touched.insert(g->ops[i].outputs[0]);
            dead.insert(static_cast<int32_t>(i));
        }
        if (dead.empty()) break;
        erase_ops(g, dead);
        total += static_cast<int>(dead.size());
        changed = true;
    }
    return total;
}

}  // namespace

StatusOr<int> batch_norms_to_affine(graph::Graph* g) {
    std::vector<Op> ops;
    int rewritten = 0;
    for (Op& bn : g->ops) {
        if (bn.type != OpType::kBatchNormalization || bn.outputs.size() != 1 || bn.inputs.size() != 5 ||
            bn.inputs[0] < 0) {
            ops.push_back(std::move(bn));
            continue;
        }
        const graph::Tensor x = g->tensors[bn.inputs[0]];
        std::vector<float> p[4];
        bool constant = x.dtype == graph::DType::kFloat32 && x.shape.size() >= 2 && x.shape[1] > 0;
        for (int i = 0; constant && i < 4; ++i) {
            p[i] = constant_floats(*g, bn.inputs[1 + i]);
            constant = static_cast<int64_t>(p[i].size()) == x.shape[1];
        }
        if (!constant) {
            ops.push_back(std::move(bn));
            continue;
        }
        const float eps = bn.attrs.get_float("epsilon", 1e-5f);
        const size_t channels = p[0].size();
        std::vector<float> k(channels), shift(channels);
        for (size_t c = 0; c < channels; ++c) {
            k[c] = p[0][c] / std::sqrt(p[3][c] + eps);
            shift[c] = p[1][c] - p[2][c] * k[c];
        }
        graph::Shape per_channel(x.shape.size() - 1, 1);
        per_channel[0] = static_cast<int64_t>(channels);
        const int32_t scaled = g->add_tensor({g->unique_tensor_name(bn.name + "_scaled"), x.dtype, x.shape, {}, {}, -1});
        Op mul{OpType::kMul, bn.name + "_scale", "", {bn.inputs[0], add_float_constant(g, bn.name + "_k", per_channel, k)},
               {scaled}, {}};
        Op add{OpType::kAdd, bn.name + "_shift", "", {scaled, add_float_constant(g, bn.name + "_b", per_channel, shift)},
               {bn.outputs[0]}, {}};
        ops.push_back(std::move(mul));
        ops.push_back(std::move(add));
        ++rewritten;
    }
    g->ops = std::move(ops);
    return rewritten;
}

int fold_affine_into_producers(graph::Graph* g) { return fold_all(g, fold_into_producer); }

int fold_affine_into_activations(graph::Graph* g) { return fold_all(g, fold_into_activation); }

int fold_affine_into_consumers(graph::Graph* g) { return fold_all(g, fold_into_consumers); }

int affine_to_depthwise(graph::Graph* g) {
    // A chain of steps becomes one convolution: the first step of a chain is
    // converted, then the steps after it fold into that convolution.
    int rewritten = 0;
    for (bool changed = true; changed;) {
        changed = false;
        const GraphIndex index(*g);
        std::vector<int32_t> firsts;
        for (size_t i = 0; i < g->ops.size(); ++i) {
            const Op& op = g->ops[i];
            if (!is_affine_step(*g, op)) continue;
            const int32_t p = index.producer[op.inputs[0]];
            if (p < 0 || !index.single_use(op.inputs[0]) || !is_affine_step(*g, g->ops[p]))
                firsts.push_back(static_cast<int32_t>(i));
        }
        for (int32_t i : firsts) {
            if (to_depthwise(g, &g->ops[i])) {
                ++rewritten;
                changed = true;
            }
        }
        if (changed) fold_affine_into_producers(g);
    }
    return rewritten;
}

int fold_fp16_activation_bias_into_readers(graph::Graph* g) {
    const GraphIndex index(*g);
    int folded = 0;
    for (Op& producer : g->ops) {
        if (producer.outputs.size() != 1 || producer.attrs.get_string("activation", "") != "HardSwish") continue;
        const std::vector<float> post = producer.attrs.get_floats("act_post");
        if (post.size() != 2 || post[1] == 0.0f || !std::isfinite(post[1])) continue;
        const int32_t y = producer.outputs[0];
        if (g->tensors[y].dtype != graph::DType::kFloat16 || index.is_output[y] || index.readers[y].empty()) continue;
        bool every = true;
        for (int32_t r : index.readers[y]) every = every && fp16_unpadded_conv_reading(*g, g->ops[r], y);
        if (!every) continue;
        // conv(h + d) = conv(h) + d * (the sum of each kernel's weights).
        for (int32_t r : index.readers[y]) {
            Op& conv = g->ops[r];
            const std::vector<float> w = weights_as_floats(*g, conv);
            const int64_t oc = g->tensors[conv.inputs[1]].shape[0];
            std::vector<float> bias = bias_or_zeros(*g, conv, oc);
            const int64_t per_kernel = static_cast<int64_t>(w.size()) / oc;
            for (int64_t o = 0; o < oc; ++o) {
                double sum = 0.0;
                for (int64_t k = 0; k < per_kernel; ++k) sum += w[static_cast<size_t>(o * per_kernel + k)];
                bias[static_cast<size_t>(o)] = static_cast<float>(bias[static_cast<size_t>(o)] + sum * post[1]);
            }
            set_bias(g, &conv, g->tensors[conv.inputs[1]].name + "_in_shifted", bias);
        }
        producer.attrs.set_floats("act_post", {post[0], 0.0f});
        // Its values now lack the bias: a new name, so that nothing compares it with the float graph's tensor.
        g->tensors[y].name = g->unique_tensor_name(g->tensors[y].name + "_without_bias");
        ++folded;
    }
    return folded;
}

}  // namespace rknn::convert
