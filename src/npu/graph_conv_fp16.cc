// fp16 convolutions from the graph (the converter's fp16 models: float16
// activations and weights, float32 bias): products and sums in fp32 in the
// CNA, the bias and one activation (ReLU, Clip, LeakyRelu, HardSigmoid) in
// the DPU's float pipeline, a fused fp16 residual added in the EW stage (then
// ReLU), one rounding to fp16 at the output, as the CPU reference computes
// them in float32 and rounds the result. Equal within a few fp16 ulps (the
// sums run in another order).
// HardSwish, y * clip(y + 3, 0, 6) / 6, needs y twice, and only the EW stage
// reads a second cube: the convolution writes y to a scratch cube, a DPU pass
// reads it as both operands, and a third adds a post affine's bias when
// there is one (each pass rounds to fp16). Other LUT activations stay on the
// CPU for fp16: the emulator does not model the LUT in the float pipeline.
#include <cmath>
#include <cstring>

#include "base/half.h"
#include "cpu/fused_ops.h"
#include "npu/conv_lowering.h"
#include "npu/dpu_regs.h"
#include "npu/graph_conv.h"
#include "npu/native_layout.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

namespace {

using graph::DType;
using graph::OpType;

Status unsupported(std::string message) { return Status(StatusCode::kUnimplemented, std::move(message)); }

// A multiplier the fp16 MUL operand holds: finite and normal once rounded.
bool fits_multiplier(float v) {
    const float h = half_to_float(float_to_half(v));
    return std::isfinite(v) && std::isfinite(h) && (v == 0.0f || std::fabs(h) >= 6.103515625e-05f);
}

// HardSwish after the convolution, then post_scale * h + post_bias: DPU passes
// over the convolution's output (HardSwishPasses::on).
struct HardSwishPasses {
    bool on = false;
    float post_scale = 1.0f, post_bias = 0.0f;
};

class Fp16ConvOp : public PreparedOp {
public:
    Fp16ConvOp(ConvGeometry g, FloatEpilogue epilogue, HardSwishPasses passes, int residual_input,
               std::vector<uint8_t> weights, std::vector<uint8_t> records)
        : geometry_(g), epilogue_(epilogue), passes_(passes) {
        feature_inputs_ = {0};
        if (residual_input >= 0) feature_inputs_.push_back(residual_input);
        constants_ = {std::move(weights), std::move(records)};
    }

    // The passes' intermediate cubes: y, and y's HardSwish before the bias.
    size_t scratch_bytes() const override {
        return passes_.on ? cube_bytes() * (passes_.post_bias != 0.0f ? 2 : 1) : 0;
    }

    Status lower(const OpBuffers& buffers, const hw::SocProfile& soc, uint32_t core_mask,
                 ProgramBuilder* program) const override {
        if (buffers.features.size() != feature_inputs_.size() || buffers.constants.size() != 2)
            return RKNN_INVALID_ARGUMENT("fp16 convolution bound to %zu features and %zu constants",
                                         buffers.features.size(), buffers.constants.size());
        ConvAddresses a{buffers.features[0], buffers.constants[0], buffers.constants[1], buffers.output};
        FloatEpilogue e = epilogue_;
        if (e.residual) e.residual_addr = buffers.features[1];
        ConvGeometry g = geometry_;
        g.packed_row_pixels = buffers.packed_row_pixels;
        if (!passes_.on) return lower_conv_fp16(g, a, false, soc, core_mask, program, e);
        // The passes read the whole cube: every task on one core, in order
        // (a core's tasks run one after another; cores run side by side).
        const int core = first_core(core_mask);
        a.output = buffers.scratch;
        RKNN_RETURN_IF_ERROR(lower_conv_fp16(g, a, false, soc, 1u << core, program, e));
        const BufferRef swished = passes_.post_bias != 0.0f ? buffers.scratch.plus(cube_bytes()) : buffers.output;
        DpuTask t = pass_over_cube(buffers.scratch, swished);
        // clip(y + 3, 0, 6) * (post_scale / 6), times y from the EW operand.
        t.bs.enabled = t.bs.alu = t.bs.relu = t.bs.relux = true;
        t.bs.alu_value = static_cast<int32_t>(float_bits(3.0f));
        t.bs.relux_value = static_cast<int32_t>(float_bits(6.0f));
        t.bn.enabled = t.bn.mul = true;
        t.bn.mul_value = static_cast<int16_t>(float_to_half(passes_.post_scale / 6.0f));
        t.ew.enabled = t.ew.op = t.ew.op_mul = t.ew.tensor = true;
        t.ew.operand_bytes = 2;
        t.ew.operand_addr = buffers.scratch;
        RKNN_RETURN_IF_ERROR(add_dpu_task(program, core, t));
        if (passes_.post_bias == 0.0f) return Status::ok();
        DpuTask add = pass_over_cube(swished, buffers.output);
        add.bs.enabled = add.bs.alu = true;
        add.bs.alu_value = static_cast<int32_t>(float_bits(passes_.post_bias));
        return add_dpu_task(program, core, add);
    }

    // fp16 convolutions are prepared for RK3588 only (RK356x has no fp16 path here).
    bool reads_packed_input() const override { return can_read_packed_input(geometry_, hw::NpuArch::kRk3588); }

    std::string describe(const hw::SocProfile& soc, uint32_t core_mask) const override {
        auto plan = plan_conv(geometry_, soc, passes_.on ? 1u << first_core(core_mask) : core_mask);
        std::string text = std::string("fp16 ") + (geometry_.depthwise ? "depthwise " : "") + "convolution in " +
                           std::to_string(plan.is_ok() ? plan.value().task_count() : 0) + " task(s)";
        if (passes_.on) text += std::string(", HardSwish in ") + (passes_.post_bias != 0.0f ? "2" : "1") + " DPU pass(es)";
        return text;
    }

private:
    // The output cube's bytes: dense surfaces of 8 fp16 channels.
    size_t cube_bytes() const {
        return static_cast<size_t>(align_up(geometry_.out_c, 8) / 8) * static_cast<size_t>(geometry_.out_h()) *
               static_cast<size_t>(geometry_.out_w()) * 16;  // 16-byte atoms
    }

    DpuTask pass_over_cube(const BufferRef& src, const BufferRef& dst) const {
        DpuTask t;
        t.c = geometry_.out_c;
        t.h = geometry_.out_h();
        t.w = geometry_.out_w();
        t.fp16 = true;
        t.src = src;
        t.dst = dst;
        return t;
    }

    static Status add_dpu_task(ProgramBuilder* program, int core, const DpuTask& t) {
        TaskEmitter task;
        emit_dpu_task(&task, t);
        return program->add(core, task, kDpuEnable, kDpuInterrupts);
    }

    ConvGeometry geometry_;
    FloatEpilogue epilogue_;
    HardSwishPasses passes_;
};

// The fused activation in the float pipeline's terms; `bias_shift` receives
// what HardSigmoid adds to every channel's bias.
Status set_activation(const cpu::Fusion& fusion, FloatEpilogue* e, HardSwishPasses* passes, float* bias_shift) {
    const cpu::kernels::Activation& act = fusion.activation;
    const std::string name = std::string("fp16 ") + graph::op_type_name(act.type);
    if (act.has_post_affine()) {
        if (act.type != OpType::kRelu && act.type != OpType::kHardSigmoid && act.type != OpType::kHardSwish)
            return unsupported(name + " with an affine after it");
        if (!fits_multiplier(act.post_scale) || !std::isfinite(act.post_bias))
            return unsupported(name + ": its affine's scale is beyond an fp16 multiplier");
        e->post_affine = act.type != OpType::kHardSwish;
        e->post_scale = act.post_scale;
        e->post_bias = act.post_bias;
    }
    switch (act.type) {
    case OpType::kIdentity: return Status::ok();
    case OpType::kRelu: e->act = FloatEpilogue::Act::kRelu; return Status::ok();
    case OpType::kClip:
        e->act = FloatEpilogue::Act::kClip;
        e->lo = act.min;
        e->hi = act.max;
        return Status::ok();
    case OpType::kLeakyRelu:
        e->act = FloatEpilogue::Act::kLeaky;
        e->alpha = act.alpha;
        return Status::ok();
    case OpType::kHardSigmoid: {
        // (y + beta / alpha) * alpha, with alpha as the multiplier holds it.
        const float alpha = half_to_float(float_to_half(act.alpha));
        if (!fits_multiplier(act.alpha) || alpha == 0.0f || !std::isfinite(act.beta / alpha))
            return unsupported(name + ": its alpha is beyond an fp16 multiplier");
        e->act = FloatEpilogue::Act::kHardSigmoid;
        e->alpha = act.alpha;
        *bias_shift = act.beta / alpha;
        return Status::ok();
    }
    case OpType::kHardSwish:
        if (!fits_multiplier(act.post_scale / 6.0f)) return unsupported(name + ": its affine's scale is beyond an fp16 multiplier");
        passes->on = true;
        passes->post_scale = act.post_scale;
        passes->post_bias = act.post_bias;
        return Status::ok();
    default: return unsupported(name + " (the float pipeline's LUT is not modelled)");
    }
}

std::vector<uint8_t> as_bytes(const std::vector<uint16_t>& halves) {
    std::vector<uint8_t> bytes(halves.size() * 2);
    if (!bytes.empty()) std::memcpy(bytes.data(), halves.data(), bytes.size());
    return bytes;
}

// The per-channel ALU records: the model's fp32 bias (if any) plus
// `shift`; e->bias says whether the BS stage reads them.
std::vector<uint8_t> bias_records(const graph::Buffer* bias_tensor, int channels, float shift, FloatEpilogue* e) {
    std::vector<float> bias;
    if (bias_tensor != nullptr || shift != 0.0f) {
        bias.assign(static_cast<size_t>(channels), shift);
        if (bias_tensor != nullptr)
            for (size_t c = 0; c < bias.size(); ++c) {
                float v;
                std::memcpy(&v, bias_tensor->data + c * 4, 4);
                bias[c] += v;
            }
        e->bias = true;
    }
    return float_bias_records(bias, align_up(channels, 8));
}

float half_at(const uint8_t* bytes, size_t i) {
    uint16_t h;
    std::memcpy(&h, bytes + i * 2, 2);
    return half_to_float(h);
}

}  // namespace

StatusOr<std::unique_ptr<PreparedOp>> prepare_fp16_conv_op(const graph::Graph& g, const graph::Op& op) {
    RKNN_ASSIGN_OR_RETURN(const ConvParts parts, conv_parts(g, op, DType::kFloat16, DType::kFloat32));
    const cpu::Fusion fusion = cpu::fusion_of(op);
    FloatEpilogue e;
    if (fusion.residual_input >= 0) {
        const size_t index = static_cast<size_t>(fusion.residual_input);
        if (index >= op.inputs.size() || op.inputs[index] < 0 || static_cast<size_t>(op.inputs[index]) >= g.tensors.size())
            return RKNN_INVALID_ARGUMENT("%s: bad residual input", op.name.c_str());
        const graph::Tensor& r = g.tensors[static_cast<size_t>(op.inputs[index])];
        if (r.dtype != DType::kFloat16 || r.shape != parts.y->shape)
            return unsupported("the fused residual is not an fp16 tensor of the output's shape");
        if ((fusion.activation.type != OpType::kIdentity && fusion.activation.type != OpType::kRelu) ||
            fusion.activation.has_post_affine())
            return unsupported(std::string("fp16 ") + graph::op_type_name(fusion.activation.type) +
                               (fusion.activation.has_post_affine() ? " with an affine" : "") +
                               " after a fused add: the DPU applies it before the add");
        e.residual = true;
    }
    HardSwishPasses passes;
    float bias_shift = 0.0f;
    RKNN_RETURN_IF_ERROR(set_activation(fusion, &e, &passes, &bias_shift));
    const ConvGeometry& geo = parts.geometry;
    const size_t count = static_cast<size_t>(graph::num_elements(parts.w->shape));
    std::vector<float> w(count);
    for (size_t i = 0; i < count; ++i) w[i] = half_at(parts.weights->data, i);
    const int c_aligned = align_up(geo.in_c, 8);
    const std::vector<uint16_t> packed = geo.depthwise
                                             ? pack_dw_weights_fp16(w.data(), geo.in_c, geo.kh, geo.kw, c_aligned)
                                             : pack_conv_weights_fp16(w.data(), geo.out_c, geo.in_c, geo.kh, geo.kw, c_aligned);
    std::vector<uint8_t> weights = as_bytes(packed);
    std::vector<uint8_t> records = bias_records(parts.bias, geo.out_c, bias_shift, &e);
    return std::unique_ptr<PreparedOp>(std::make_unique<Fp16ConvOp>(
        geo, e, passes, e.residual ? fusion.residual_input : -1, std::move(weights), std::move(records)));
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_fp16_gemm_op(const graph::Graph& g, const graph::Op& op) {
    RKNN_ASSIGN_OR_RETURN(const GemmParts parts, gemm_parts(g, op, DType::kFloat16, DType::kFloat32));
    const int64_t k = parts.k, n = parts.n;
    const cpu::Fusion fusion = cpu::fusion_of(op);
    if (fusion.residual_input >= 0) return unsupported("an fp16 product with a fused add");
    FloatEpilogue e;
    HardSwishPasses passes;
    float bias_shift = 0.0f;
    RKNN_RETURN_IF_ERROR(set_activation(fusion, &e, &passes, &bias_shift));
    ConvGeometry geo;
    geo.fp16 = true;
    geo.in_c = static_cast<int>(k);
    geo.in_h = static_cast<int>(parts.m);
    geo.in_w = 1;
    geo.out_c = static_cast<int>(n);
    // Weights as [N][K] rows: the 1x1 convolution's kernels.
    std::vector<float> rows(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j)
            rows[static_cast<size_t>(i * k + j)] = half_at(parts.weights->data, static_cast<size_t>(parts.weight_index(i, j)));
    std::vector<uint8_t> weights =
        as_bytes(pack_conv_weights_fp16(rows.data(), geo.out_c, geo.in_c, 1, 1, align_up(geo.in_c, 8)));
    std::vector<uint8_t> records = bias_records(parts.bias, geo.out_c, bias_shift, &e);
    return std::unique_ptr<PreparedOp>(
        std::make_unique<Fp16ConvOp>(geo, e, passes, -1, std::move(weights), std::move(records)));
}

}  // namespace rknn::npu
