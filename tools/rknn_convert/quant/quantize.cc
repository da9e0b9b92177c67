#include "quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "base/half.h"
#include "passes/graph_edit.h"

namespace rknn::convert {
namespace {

using graph::DType;
using graph::Op;
using graph::OpType;

// Ops whose outputs are their inputs' values rearranged: they keep one set of
// quantisation parameters across inputs and outputs.
bool moves_values(const Op& op) {
    switch (op.type) {
    case OpType::kReshape:
    case OpType::kFlatten:
    case OpType::kSqueeze:
    case OpType::kUnsqueeze:
    case OpType::kTranspose:
    case OpType::kSlice:
    case OpType::kSplit:
    case OpType::kGather:
    case OpType::kDepthToSpace:
    case OpType::kSpaceToDepth:
    case OpType::kTile:
    case OpType::kExpand:
    case OpType::kIdentity:
    case OpType::kDropout:
    case OpType::kConcat:
    case OpType::kMaxPool:
    case OpType::kGlobalMaxPool: return true;
    case OpType::kResize:
    case OpType::kUpsample: return op.attrs.get_string("mode", "nearest") == "nearest";
    default: return false;
    }
}

struct UnionFind {
    explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
    int32_t find(int32_t x) {
        while (parent[x] != x) x = parent[x] = parent[parent[x]];
        return x;
    }
    void unite(int32_t a, int32_t b) { parent[find(a)] = find(b); }
    std::vector<int32_t> parent;
};

int32_t add_typed_constant(graph::Graph* g, const std::string& name, DType dtype, const graph::Shape& shape,
                           const void* bytes, size_t size, const graph::QuantParams& quant) {
    const int32_t t = g->add_constant(g->unique_tensor_name(name), dtype, shape, graph::Buffer::copy_of(bytes, size));
    g->tensors[t].quant = quant;
    return t;
}

// Symmetric int8 weights with one scale per slice along `axis`.
int32_t quantize_weights(graph::Graph* g, int32_t tensor, int axis, std::vector<float>* scales) {
    const std::vector<float> w = constant_floats(*g, tensor);
    const graph::Shape shape = g->tensors[tensor].shape;
    const int64_t channels = shape[axis];
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    std::vector<float> peak(static_cast<size_t>(channels), 0.0f);
    for (size_t i = 0; i < w.size(); ++i) {
        const int64_t c = (static_cast<int64_t>(i) / inner) % channels;
        peak[c] = std::max(peak[c], std::fabs(w[i]));
    }
    scales->assign(static_cast<size_t>(channels), 1.0f);
    for (int64_t c = 0; c < channels; ++c) {
        if (peak[c] > 0.0f) (*scales)[c] = peak[c] / 127.0f;
    }
    std::vector<int8_t> q(w.size());
    for (size_t i = 0; i < w.size(); ++i) {
        const int64_t c = (static_cast<int64_t>(i) / inner) % channels;
        q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(w[i] / (*scales)[c]), -127.0f, 127.0f));
    }
    graph::QuantParams quant;
    quant.scales = *scales;
    quant.zero_points.assign(scales->size(), 0);
    quant.axis = axis;
    return add_typed_constant(g, g->tensors[tensor].name + "_int8", DType::kInt8, shape, q.data(), q.size(), quant);
}

// int32 bias in accumulator units: b / (s_in * s_w[c]).
int32_t quantize_bias(graph::Graph* g, int32_t tensor, double in_scale, const std::vector<float>& w_scales) {
    const std::vector<float> b = constant_floats(*g, tensor);
    std::vector<int32_t> q(b.size());
    graph::QuantParams quant;
    quant.axis = 0;
    for (size_t c = 0; c < b.size(); ++c) {
        const double scale = in_scale * w_scales[c];
        quant.scales.push_back(static_cast<float>(scale));
        quant.zero_points.push_back(0);
        const double v = std::nearbyint(b[c] / scale);
        q[c] = static_cast<int32_t>(std::clamp(v, -2147483648.0, 2147483647.0));
    }
    return add_typed_constant(g, g->tensors[tensor].name + "_int32", DType::kInt32,
                              {static_cast<int64_t>(b.size())}, q.data(), q.size() * 4, quant);
}

// Asymmetric int8 per tensor from the constant's own range.
int32_t quantize_constant(graph::Graph* g, int32_t tensor) {
    const std::vector<float> v = constant_floats(*g, tensor);
    float lo = 0.0f, hi = 0.0f;
    for (float x : v) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    const graph::QuantParams quant = int8_params(lo, hi);
    std::vector<int8_t> q(v.size());
    for (size_t i = 0; i < v.size(); ++i)
        q[i] = static_cast<int8_t>(std::clamp(std::nearbyint(v[i] / quant.scales[0]) + quant.zero_points[0], -128.0f, 127.0f));
    const graph::Shape shape = g->tensors[tensor].shape;  // copied: adding a constant may move the tensor list
    return add_typed_constant(g, g->tensors[tensor].name + "_int8", DType::kInt8, shape, q.data(), q.size(), quant);
}

int32_t to_fp16_constant(graph::Graph* g, int32_t tensor) {
    const std::vector<float> v = constant_floats(*g, tensor);
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = float_to_half(v[i]);
    const graph::Shape shape = g->tensors[tensor].shape;  // copied: adding a constant may move the tensor list
    return add_typed_constant(g, g->tensors[tensor].name + "_fp16", DType::kFloat16, shape, h.data(), h.size() * 2, {});
}

// Folds Gemm's alpha and beta into its constant operands so the int8 path sees alpha = beta = 1.
void fold_gemm_scalars(graph::Graph* g, Op* op) {
    const float alpha = op->attrs.get_float("alpha", 1.0f);
    const float beta = op->attrs.get_float("beta", 1.0f);
    if (alpha != 1.0f && g->is_constant(op->inputs[1])) {
        std::vector<float> w = constant_floats(*g, op->inputs[1]);
        for (float& x : w) x *= alpha;
        const graph::Shape shape = g->tensors[op->inputs[1]].shape;
        op->inputs[1] = add_float_constant(g, g->tensors[op->inputs[1]].name + "_scaled", shape, w);
        op->attrs.set_float("alpha", 1.0f);
    }
    if (beta != 1.0f && op->inputs.size() > 2 && op->inputs[2] >= 0 && g->is_constant(op->inputs[2])) {
        std::vector<float> c = constant_floats(*g, op->inputs[2]);
        for (float& x : c) x *= beta;
        const graph::Shape shape = g->tensors[op->inputs[2]].shape;
        op->inputs[2] = add_float_constant(g, g->tensors[op->inputs[2]].name + "_scaled", shape, c);
        op->attrs.set_float("beta", 1.0f);
    }
}

// Bias correction: the mean shift that rounding the weights adds to each
// output channel, (W_q - W) . E[x], for a Conv (weights [OC, IC/groups, ...],
// input channels on axis 1) or a Gemm (B [K, N], or [N, K] with transB).
std::vector<double> rounding_shift(const graph::Graph& g, const Op& op, int32_t float_w, int32_t int8_w,
                                   const std::vector<double>& means) {
    const std::vector<float> w = constant_floats(g, float_w);
    const graph::Tensor& q = g.tensors[int8_w];
    const graph::Buffer* qb = g.constant_buffer(int8_w);
    const graph::Shape& s = q.shape;
    if (qb == nullptr || w.size() != qb->size) return {};
    const auto* codes = reinterpret_cast<const int8_t*>(qb->data);
    const auto error = [&](size_t i, size_t channel) { return codes[i] * double(q.quant.scale(channel)) - w[i]; };
    std::vector<double> shift;
    if (op.type == OpType::kConv) {
        const int64_t oc = s[0], icg = s[1], groups = op.attrs.get_int("group", 1);
        if (groups <= 0 || oc % groups != 0 || static_cast<int64_t>(means.size()) != icg * groups) return {};
        const int64_t taps = static_cast<int64_t>(w.size()) / (oc * icg);
        shift.assign(static_cast<size_t>(oc), 0.0);
        for (int64_t o = 0; o < oc; ++o)
            for (int64_t j = 0; j < icg; ++j)
                for (int64_t k = 0; k < taps; ++k) {
                    const size_t i = static_cast<size_t>((o * icg + j) * taps + k);
                    shift[o] += error(i, static_cast<size_t>(o)) * means[static_cast<size_t>((o / (oc / groups)) * icg + j)];
                }
        return shift;
    }
    const bool trans_b = op.type == OpType::kGemm && op.attrs.get_int("transB", 0) != 0;
    const int64_t k_dim = trans_b ? s[1] : s[0], n = trans_b ? s[0] : s[1];
    if (static_cast<int64_t>(means.size()) != k_dim) return {};
    shift.assign(static_cast<size_t>(n), 0.0);
    for (int64_t kk = 0; kk < k_dim; ++kk)
        for (int64_t c = 0; c < n; ++c) {
            const size_t i = static_cast<size_t>(trans_b ? c * k_dim + kk : kk * n + c);
            shift[c] += error(i, static_cast<size_t>(c)) * means[static_cast<size_t>(kk)];
        }
    return shift;
}

// Quantises the weights (and bias) of an int8 Conv / Gemm / MatMul.
void quantize_layer(graph::Graph* g, Op* op, const std::map<std::string, std::vector<double>>* channel_means) {
    const int32_t w = op->inputs[1];
    if (!g->is_constant(w) || g->tensors[w].dtype != DType::kFloat32) return;
    int axis = 0;
    int64_t channels = 0;
    const graph::Shape& ws = g->tensors[w].shape;
    if (op->type == OpType::kConv) {
        axis = 0;
    } else if (op->type == OpType::kGemm) {
        fold_gemm_scalars(g, op);
        if (op->attrs.get_int("transA", 0) != 0 || op->attrs.get_float("alpha", 1.0f) != 1.0f) return;
        axis = op->attrs.get_int("transB", 0) != 0 ? 0 : 1;
    } else if (op->type == OpType::kMatMul) {
        if (ws.size() != 2) return;
        axis = 1;
    } else {
        return;
    }
    channels = g->tensors[op->inputs[1]].shape[axis];
    const bool has_bias = op->type != OpType::kMatMul && op->inputs.size() > 2 && op->inputs[2] >= 0;
    if (has_bias) {
        const int32_t b = op->inputs[2];
        int64_t n = 0;
        if (!g->is_constant(b) || g->tensors[b].dtype != DType::kFloat32 ||
            !graph::checked_num_elements(g->tensors[b].shape, &n) || n != channels)
            return;  // a bias the int8 path cannot take: keep the layer in float
    }
    std::vector<float> w_scales;
    const int32_t float_w = op->inputs[1];
    op->inputs[1] = quantize_weights(g, float_w, axis, &w_scales);
    // Bias correction where the layer has (or can take) a bias and the input's channel means are known.
    const bool takes_bias = op->type == OpType::kConv || op->type == OpType::kGemm;
    const auto means = channel_means != nullptr ? channel_means->find(g->tensors[op->inputs[0]].name)
                                                : std::map<std::string, std::vector<double>>::const_iterator();
    if (takes_bias && channel_means != nullptr && means != channel_means->end()) {
        const std::vector<double> shift = rounding_shift(*g, *op, float_w, op->inputs[1], means->second);
        if (static_cast<int64_t>(shift.size()) == channels) {
            std::vector<float> b = has_bias ? constant_floats(*g, op->inputs[2]) : std::vector<float>(shift.size(), 0.0f);
            for (size_t c = 0; c < b.size(); ++c) b[c] = static_cast<float>(b[c] - shift[c]);
            const std::string name = g->tensors[float_w].name + "_corrected_bias";
            if (op->inputs.size() < 3) op->inputs.resize(3, -1);
            op->inputs[2] = add_float_constant(g, name, {channels}, b);
        }
    }
    const bool biased = takes_bias && op->inputs.size() > 2 && op->inputs[2] >= 0;
    if (biased) op->inputs[2] = quantize_bias(g, op->inputs[2], g->tensors[op->inputs[0]].quant.scale(), w_scales);
}

bool is_binary_int8_op(OpType t) {
    return t == OpType::kAdd || t == OpType::kSub || t == OpType::kMul || t == OpType::kMax || t == OpType::kMin;
}

// Float constants a float16 op still reads as float32: biases accumulate in
// float32 on the NPU, and Resize's roi/scales are shape parameters.
bool stays_float32(const Op& op, size_t input) {
    const bool bias = input == 2 && (op.type == OpType::kConv || op.type == OpType::kConvTranspose ||
                                     op.type == OpType::kGemm);
    const bool shape_param = input >= 1 && (op.type == OpType::kResize || op.type == OpType::kUpsample);
    return bias || shape_param;
}

// Makes every layer wholly int8 or wholly float16, so that each runs on the
// NPU in its own precision (a layer that mixed the two fell back to the CPU:
// a 480x480 PP-OCRv4 det spent two thirds of its time there).
// - A float16 layer that reads an int8 tensor reads a DequantizeLinear copy
//   (one copy serves all its readers).
// - An int8 layer that reads a float16 tensor becomes a float16 layer whose
//   int8 outputs a QuantizeLinear writes. Quantising its input instead would
//   bring back the error the float16 producer was kept for; this way the
//   numbers are those of the mixed layer it replaces. Float16 layers read
//   its float16 result itself (no int8 round trip); the QuantizeLinear stays
//   only for int8 readers and goes with the dead ops when there are none.
// Int8 layers keep reading tensors under their float model names (channel
// means, bias correction). Adds the promoted layers to `fp16_ops`.
void insert_precision_boundaries(graph::Graph* g, std::set<std::string>* fp16_ops) {
    const auto is_int8 = [g](int32_t t) {
        return g->tensors[t].dtype == DType::kInt8 && g->tensors[t].quant.is_quantized() &&
               g->tensors[t].quant.scales.size() == 1;
    };
    // A (De)QuantizeLinear of `from` into the new tensor `to`, with `quant`'s one scale and zero point.
    const auto conversion = [g](OpType type, int32_t from, int32_t to, const graph::QuantParams& quant) {
        const float scale = quant.scales[0];
        const int8_t zp = static_cast<int8_t>(quant.zero_points.empty() ? 0 : quant.zero_points[0]);
        const std::string base = g->tensors[to].name;
        Op op;
        op.type = type;
        op.name = base + (type == OpType::kQuantizeLinear ? "_quantize" : "_dequantize");
        op.inputs = {from,
                     add_typed_constant(g, base + "_scale", DType::kFloat32, {}, &scale, sizeof(scale), graph::QuantParams()),
                     add_typed_constant(g, base + "_zero_point", DType::kInt8, {}, &zp, sizeof(zp), graph::QuantParams())};
        op.outputs = {to};
        return op;
    };
    const auto copy_of = [g](int32_t source, DType dtype, const std::string& suffix) {
        graph::Tensor t = g->tensors[source];
        t.name = g->unique_tensor_name(t.name + suffix);
        t.dtype = dtype;
        t.quant = graph::QuantParams();
        t.buffer = -1;
        return g->add_tensor(t);
    };
    std::map<int32_t, int32_t> dequantized;  // int8 tensor -> its float16 copy
    std::map<int32_t, int32_t> widened;      // int8 output of a promoted layer -> the float16 value it quantises
    std::vector<Op> ops;
    ops.reserve(g->ops.size());
    for (Op& op : g->ops) {
        bool fp16_layer = fp16_ops->count(op.name) > 0;
        const bool int8_layer = !fp16_layer && !op.outputs.empty() && op.outputs[0] >= 0 && is_int8(op.outputs[0]);
        if (op.type == OpType::kCustom || op.type == OpType::kQuantizeLinear || op.type == OpType::kDequantizeLinear ||
            (!fp16_layer && !int8_layer)) {
            ops.push_back(std::move(op));
            continue;
        }
        bool promoted = false;
        if (int8_layer) {
            for (int32_t in : op.inputs)
                promoted = promoted || (in >= 0 && !g->is_constant(in) && g->tensors[in].dtype == DType::kFloat16);
            if (!promoted) {
                ops.push_back(std::move(op));
                continue;
            }
            fp16_ops->insert(op.name);
            fp16_layer = true;
        }
        for (int32_t& in : op.inputs) {
            if (in < 0 || g->is_constant(in) || !is_int8(in)) continue;
            // A promoted layer's float16 result, rather than its int8 rounding dequantised again.
            if (const auto w = widened.find(in); w != widened.end()) {
                in = w->second;
                continue;
            }
            auto it = dequantized.find(in);
            if (it == dequantized.end()) {
                const int32_t copy = copy_of(in, DType::kFloat16, "_fp16");
                ops.push_back(conversion(OpType::kDequantizeLinear, in, copy, g->tensors[in].quant));
                it = dequantized.emplace(in, copy).first;
            }
            in = it->second;
        }
        std::vector<Op> after;
        if (promoted) {
            for (int32_t& out : op.outputs) {
                if (out < 0 || !is_int8(out)) continue;
                const int32_t wide = copy_of(out, DType::kFloat16, "_fp16");
                after.push_back(conversion(OpType::kQuantizeLinear, wide, out, g->tensors[out].quant));
                widened.emplace(out, wide);
                out = wide;
            }
        }
        ops.push_back(std::move(op));
        for (Op& q : after) ops.push_back(std::move(q));
    }
    g->ops = std::move(ops);
}

}  // namespace

graph::QuantParams int8_params(float min, float max) {
    const double lo = std::min<double>(min, 0.0);
    double hi = std::max<double>(max, 0.0);
    if (hi - lo < 1e-8) hi = lo + 1e-8;
    const double scale = (hi - lo) / 255.0;
    const double zp = std::clamp(std::nearbyint(-128.0 - lo / scale), -128.0, 127.0);
    graph::QuantParams q;
    q.scales = {static_cast<float>(scale)};
    q.zero_points = {static_cast<int32_t>(zp)};
    return q;
}

Status quantize_int8(graph::Graph* g, const std::vector<TensorRange>& ranges, const QuantizeOptions& options) {
    if (ranges.size() != g->tensors.size()) return Status(StatusCode::kInternal, "one range per tensor is needed");
    const GraphIndex index(*g);
    enum class Precision { kKeep, kInt8, kFloat16 };
    const size_t n = g->tensors.size();
    std::vector<Precision> precision(n, Precision::kKeep);
    // The layers kept in float16, grown until value-moving ops agree with
    // their inputs: a Reshape of a float16 tensor is float16, and a Concat's
    // inputs are all int8 or all float16 (their producers join the set).
    std::set<std::string> fp16_ops = options.fp16_ops;
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t t = 0; t < n; ++t) {
            if (g->is_constant(static_cast<int32_t>(t)) || g->tensors[t].dtype != DType::kFloat32) continue;
            const int32_t p = index.producer[t];
            const bool fp16_layer = p >= 0 && fp16_ops.count(g->ops[p].name) > 0;
            precision[t] = fp16_layer || !ranges[t].valid ? Precision::kFloat16 : Precision::kInt8;
        }
        for (const Op& op : g->ops) {
            if (!moves_values(op)) continue;
            const size_t data_inputs = op.type == OpType::kConcat ? op.inputs.size() : 1;
            bool any_fp16 = fp16_ops.count(op.name) > 0;
            for (size_t i = 0; i < data_inputs && i < op.inputs.size(); ++i)
                any_fp16 = any_fp16 || (op.inputs[i] >= 0 && precision[op.inputs[i]] == Precision::kFloat16);
            if (!any_fp16) continue;
            changed = fp16_ops.insert(op.name).second || changed;
            for (size_t i = 0; i < data_inputs && i < op.inputs.size(); ++i) {
                const int32_t in = op.inputs[i];
                if (in >= 0 && precision[in] == Precision::kInt8 && index.producer[in] >= 0)
                    changed = fp16_ops.insert(g->ops[index.producer[in]].name).second || changed;
            }
        }
    }
    // Share parameters across value-moving ops.
    UnionFind groups(n);
    for (const Op& op : g->ops) {
        if (!moves_values(op) || op.inputs.empty() || op.inputs[0] < 0) continue;
        const size_t shared_inputs = op.type == OpType::kConcat ? op.inputs.size() : 1;
        for (int32_t out : op.outputs) {
            if (precision[out] != Precision::kInt8) continue;
            for (size_t i = 0; i < shared_inputs; ++i) {
                if (op.inputs[i] >= 0 && precision[op.inputs[i]] == Precision::kInt8) groups.unite(op.inputs[i], out);
            }
        }
    }
    std::map<int32_t, TensorRange> group_range;
    for (size_t t = 0; t < n; ++t) {
        if (precision[t] != Precision::kInt8) continue;
        TensorRange& r = group_range[groups.find(static_cast<int32_t>(t))];
        r.min = r.valid ? std::min(r.min, ranges[t].min) : ranges[t].min;
        r.max = r.valid ? std::max(r.max, ranges[t].max) : ranges[t].max;
        r.valid = true;
    }
    for (size_t t = 0; t < n; ++t) {
        if (precision[t] == Precision::kInt8) {
            const TensorRange& r = group_range[groups.find(static_cast<int32_t>(t))];
            g->tensors[t].dtype = DType::kInt8;
            g->tensors[t].quant = int8_params(r.min, r.max);
        } else if (precision[t] == Precision::kFloat16) {
            g->tensors[t].dtype = DType::kFloat16;
        }
    }
    insert_precision_boundaries(g, &fp16_ops);
    // Constants, op by op.
    for (Op& op : g->ops) {
        const bool int8 = !op.inputs.empty() && op.inputs[0] >= 0 && g->tensors[op.inputs[0]].dtype == DType::kInt8 &&
                          g->tensors[op.inputs[0]].quant.is_quantized();
        const bool fp16_layer = fp16_ops.count(op.name) > 0;
        if (int8 && !fp16_layer) {
            if (op.type == OpType::kConv || op.type == OpType::kGemm || op.type == OpType::kMatMul)
                quantize_layer(g, &op, options.channel_means);
            if (is_binary_int8_op(op.type)) {
                for (int32_t& in : op.inputs) {
                    if (in >= 0 && g->is_constant(in) && g->tensors[in].dtype == DType::kFloat32) in = quantize_constant(g, in);
                }
            }
        } else if (fp16_layer) {
            for (size_t i = 0; i < op.inputs.size(); ++i) {
                const int32_t in = op.inputs[i];
                if (in >= 0 && !stays_float32(op, i) && g->is_constant(in) && g->tensors[in].dtype == DType::kFloat32)
                    op.inputs[i] = to_fp16_constant(g, in);
            }
        }
    }
    remove_dead_ops(g);  // drops the float constants nothing reads any more
    return Status::ok();
}

Status convert_to_fp16(graph::Graph* g) {
    for (size_t t = 0; t < g->tensors.size(); ++t) {
        if (!g->is_constant(static_cast<int32_t>(t)) && g->tensors[t].dtype == DType::kFloat32)
            g->tensors[t].dtype = DType::kFloat16;
    }
    std::map<int32_t, int32_t> converted;
    for (Op& op : g->ops) {
        for (size_t i = 0; i < op.inputs.size(); ++i) {
            const int32_t in = op.inputs[i];
            if (in < 0 || !g->is_constant(in) || g->tensors[in].dtype != DType::kFloat32 || stays_float32(op, i))
                continue;
            auto it = converted.find(in);
            if (it == converted.end()) it = converted.emplace(in, to_fp16_constant(g, in)).first;
            op.inputs[i] = it->second;
        }
    }
    remove_dead_ops(g);
    return Status::ok();
}

}  // namespace rknn::convert
