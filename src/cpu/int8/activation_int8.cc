// int8 activations with the NPU's arithmetic.
//
// ReLU, Clip and LeakyRelu/PRelu requantise and clamp like a fused
// activation (epilogue.h):  y = sat(act(round_shift((a - za) * M, S)) + zy).
// The other activations (sigmoid, tanh, SiLU, ...) are a 256-entry lookup
// table indexed by the int8 input, as the DPU's LUT stage evaluates them:
// T[q] = sat(round(f((q - za) * sa) / sy) + zy).
#include <array>
#include <cmath>

#include "cpu/convert.h"
#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/scalar_math.h"

namespace rknn::cpu::int8 {
namespace {

Status check_unary(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(require_int8(*args.inputs[0], "the input"));
    RKNN_RETURN_IF_ERROR(require_int8(*args.outputs[0], "the output"));
    if (args.inputs[0]->quant.per_channel() || args.outputs[0]->quant.per_channel())
        return Status(StatusCode::kUnimplemented, "per-tensor quantisation only");
    return Status::ok();
}

Status requant_activation(const KernelArgs& args, const kernels::Activation& act) {
    RKNN_RETURN_IF_ERROR(check_unary(args));
    const HostTensor& a = *args.inputs[0];
    HostTensor* y = args.outputs[0];
    const Requant r = make_requant(a.quant.scale() / y->quant.scale());
    RKNN_ASSIGN_OR_RETURN(const Int8Activation ia, make_activation(act, y->quant.scale()));
    const int64_t za = a.quant.zero_point();
    const int64_t zy = y->quant.zero_point();
    for (int64_t i = 0; i < a.numel(); ++i) {
        const int64_t v = apply(r, 0, a.data<int8_t>()[i] - za);
        y->data<int8_t>()[i] = saturate_int8(apply_activation(ia, v) + zy);
    }
    return Status::ok();
}

}  // namespace

Status relu(const KernelArgs& args) {
    kernels::Activation act;
    act.type = graph::OpType::kRelu;
    return requant_activation(args, act);
}

Status clip(const KernelArgs& args) {
    kernels::Activation act = kernels::activation_from_attrs(graph::OpType::kClip, args.op.attrs);
    for (size_t i = 1; i < args.inputs.size() && i <= 2; ++i) {
        const HostTensor* bound = args.inputs[i];
        if (bound == nullptr) continue;
        if (bound->numel() != 1 || !graph::is_float(bound->dtype()) || bound->quant.is_quantized())
            return Status(StatusCode::kUnimplemented, "int8 Clip takes float scalar bounds");
        (i == 1 ? act.min : act.max) = static_cast<float>(element_as_double(*bound, 0));
    }
    return requant_activation(args, act);
}

Status leaky_relu(const KernelArgs& args) {
    return requant_activation(args, kernels::activation_from_attrs(graph::OpType::kLeakyRelu, args.op.attrs));
}

Status prelu(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(check_unary(args));
    const HostTensor& a = *args.inputs[0];
    const HostTensor& slope = *args.inputs[1];
    HostTensor* y = args.outputs[0];
    if (slope.dtype() != graph::DType::kFloat32 || slope.quant.is_quantized() ||
        !kernels::broadcasts_into(slope.shape(), a.shape())) {
        return Status(StatusCode::kUnimplemented, "int8 PRelu takes a float32 slope that broadcasts to the input");
    }
    std::vector<double> slopes(slope.data<float>(), slope.data<float>() + slope.numel());
    const Requant slope_requant = make_requant(slopes);
    const Requant r = make_requant(a.quant.scale() / y->quant.scale());
    const int64_t za = a.quant.zero_point();
    const int64_t zy = y->quant.zero_point();
    const std::vector<std::vector<int64_t>> strides = {kernels::broadcast_strides(slope.shape(), a.shape())};
    kernels::for_each_broadcast(a.shape(), strides, [&](int64_t i, int64_t os, int64_t, int64_t) {
        int64_t v = apply(r, 0, a.data<int8_t>()[i] - za);
        if (v < 0) v = apply(slope_requant, static_cast<size_t>(os), v);
        y->data<int8_t>()[i] = saturate_int8(v + zy);
    });
    return Status::ok();
}

Status lut_activation(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(check_unary(args));
    const HostTensor& a = *args.inputs[0];
    HostTensor* y = args.outputs[0];
    const kernels::Activation act = kernels::activation_from_attrs(args.op.type, args.op.attrs);
    const double sa = a.quant.scale();
    const double sy = y->quant.scale();
    const int64_t za = a.quant.zero_point();
    const int64_t zy = y->quant.zero_point();
    std::array<int8_t, 256> table;
    for (int q = -128; q <= 127; ++q) {
        const float x = static_cast<float>((q - za) * sa);
        table[q + 128] = saturate_int8(round_even(kernels::apply_activation(act, x) / sy) + zy);
    }
    for (int64_t i = 0; i < a.numel(); ++i) y->data<int8_t>()[i] = table[a.data<int8_t>()[i] + 128];
    return Status::ok();
}

}  // namespace rknn::cpu::int8
