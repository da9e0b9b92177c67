#include "quantized_conv.h"

#include <random>

#include "cpu/fused_ops.h"
#include "cpu/graph_executor.h"
#include "cpu/int8/lut_stage.h"
#include "graph/graph.h"
#include "test_graphs.h"

namespace rknn::testing {

using graph::DType;
using graph::OpType;
using graph::QuantParams;
using graph::Shape;

std::string QuantConvSpec::describe() const {
    return std::to_string(c_in) + "->" + std::to_string(out_c()) + " " + std::to_string(h) + "x" + std::to_string(w) +
           " k" + std::to_string(kh) + "x" + std::to_string(kw) + " s" + std::to_string(stride_h) + "x" +
           std::to_string(stride_w) + " p" + std::to_string(pad_top) + "," + std::to_string(pad_left) + "," +
           std::to_string(pad_bottom) + "," + std::to_string(pad_right) + (depthwise ? " dw" : "") + " act " +
           graph::op_type_name(activation) + (residual ? " +residual" : "") + " zx " + std::to_string(input_zp);
}

Status make_quant_conv(const QuantConvSpec& s, uint32_t seed, QuantConvCase* out) {
    out->spec = s;
    const int groups = s.depthwise ? s.c_in : 1;
    const int oc = s.out_c();
    const int oh = s.out_h(), ow = s.out_w();
    graph::Graph g;
    const QuantParams qx = per_tensor(0.05f, s.input_zp);
    const int32_t x = add_tensor(&g, "x", DType::kInt8, {1, s.c_in, s.h, s.w}, qx);
    g.inputs = {x};
    std::mt19937 rng(seed);
    out->weights.assign(static_cast<size_t>(oc) * s.taps_per_kernel(), 0);
    for (int8_t& v : out->weights) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    QuantParams qw;
    qw.axis = 0;
    for (int o = 0; o < oc; ++o) {
        qw.scales.push_back(0.002f + 0.0007f * static_cast<float>(o % 7));
        qw.zero_points.push_back(0);
    }
    const Shape wshape = {oc, s.c_in / groups, s.kh, s.kw};
    const int32_t wt =
        g.add_constant("w", DType::kInt8, wshape, graph::Buffer::copy_of(out->weights.data(), out->weights.size()));
    g.tensors[wt].quant = qw;
    std::vector<int32_t> bias(static_cast<size_t>(oc));
    for (int32_t& v : bias) v = static_cast<int32_t>(rng() % 4001) - 2000;
    QuantParams qb = qw;
    for (float& sc : qb.scales) sc *= qx.scales[0];
    const int32_t bt = g.add_constant("b", DType::kInt32, {oc}, graph::Buffer::copy_of(bias.data(), bias.size() * 4));
    g.tensors[bt].quant = qb;
    const QuantParams qy = per_tensor(0.06f, 5);
    const int32_t y = add_tensor(&g, "y", DType::kInt8, {1, oc, oh, ow}, qy);
    graph::Op op{OpType::kConv, "conv", "", {x, wt, bt}, {y}, {}};
    op.attrs.set_ints("strides", {s.stride_h, s.stride_w});
    op.attrs.set_ints("pads", {s.pad_top, s.pad_left, s.pad_bottom, s.pad_right});
    op.attrs.set_int("group", groups);
    cpu::kernels::Activation act;
    act.type = s.activation;
    if (s.activation == OpType::kClip) {
        act.min = 0.0f;
        act.max = 3.0f;
    }
    if (s.activation == OpType::kLeakyRelu) act.alpha = 0.1f;
    if (s.activation == OpType::kPRelu) {
        // Slopes of both signs, small and above one, one per output channel.
        const float pattern[] = {0.25f, -0.3f, 0.01f, 1.5f, 0.0f, 0.7f, -1.2f};
        for (int o = 0; o < oc; ++o) act.slopes.push_back(pattern[o % 7] + 0.013f * static_cast<float>(o / 7));
    }
    if (s.activation != OpType::kIdentity) cpu::set_fused_activation(&op, act);
    if (cpu::int8::needs_lut(s.activation)) cpu::set_fused_activation_range(&op, -6.0f, 6.0f);
    out->input = random_int8({1, s.c_in, s.h, s.w}, qx, seed + 1);
    std::vector<cpu::HostTensor> inputs = {cpu::HostTensor::borrow(DType::kInt8, out->input.shape(),
                                                                   out->input.data<int8_t>())};
    inputs[0].quant = qx;
    if (s.residual) {
        const int32_t rt = add_tensor(&g, "r", DType::kInt8, {1, oc, oh, ow}, per_tensor(0.07f, -9));
        g.inputs.push_back(rt);
        out->residual = random_int8({1, oc, oh, ow}, g.tensors[rt].quant, seed + 2);
        inputs.push_back(cpu::HostTensor::borrow(DType::kInt8, out->residual.shape(), out->residual.data<int8_t>()));
        inputs.back().quant = g.tensors[rt].quant;
        op.inputs.push_back(rt);
        cpu::set_fused_residual(&op, rt);
    }
    g.add_op(op);
    g.outputs = {y};

    auto exec = cpu::GraphExecutor::create(g);
    if (!exec.is_ok()) return exec.status();
    std::vector<cpu::HostTensor> ref;
    cpu::GraphExecutor::RunStats stats;
    const Status ran = exec.value()->run(inputs, &ref, nullptr, &stats);
    if (!ran.is_ok()) return ran;
    if (stats.int8_ops != 1) return RKNN_INTERNAL_ERROR("the reference did not use its int8 kernel");
    out->reference = std::move(ref[0]);

    cpu::HostTensor w_host = cpu::HostTensor::borrow(DType::kInt8, wshape, out->weights.data());
    w_host.quant = qw;
    cpu::HostTensor b_host = cpu::HostTensor::borrow(DType::kInt32, {oc}, bias.data());
    cpu::HostTensor y_host(DType::kInt8, {1, oc, oh, ow});
    y_host.quant = qy;
    auto epi = cpu::int8::make_epilogue(inputs[0], w_host, oc, &b_host, s.residual ? &inputs[1] : nullptr, y_host,
                                        cpu::fusion_of(g.ops[0]));
    if (!epi.is_ok()) return epi.status();
    out->epilogue = std::move(epi).value();
    return Status::ok();
}

}  // namespace rknn::testing
