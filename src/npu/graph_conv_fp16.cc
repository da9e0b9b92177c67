// fp16 convolutions from the graph (the converter's fp16 models: float16
// activations and weights, float32 bias): products and sums in fp32 in the
// CNA, the bias and one activation (ReLU, Clip, LeakyRelu) in the DPU's float
// pipeline, a fused fp16 residual added in the EW stage (then ReLU), one
// rounding to fp16 at the output, as the CPU reference computes them in
// float32 and rounds the result. Equal within a few fp16 ulps (the sums run
// in another order). LUT activations stay on the CPU for fp16: the emulator
// does not model the LUT in the float pipeline.
#include <cstring>

#include "base/half.h"
#include "cpu/fused_ops.h"
#include "npu/conv_lowering.h"
#include "npu/graph_conv.h"
#include "npu/native_layout.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

namespace {

using graph::DType;
using graph::OpType;

Status unsupported(std::string message) { return Status(StatusCode::kUnimplemented, std::move(message)); }

class Fp16ConvOp : public PreparedOp {
public:
    Fp16ConvOp(ConvGeometry g, FloatEpilogue epilogue, int residual_input, std::vector<uint8_t> weights,
               std::vector<uint8_t> records)
        : geometry_(g), epilogue_(epilogue) {
        feature_inputs_ = {0};
        if (residual_input >= 0) feature_inputs_.push_back(residual_input);
        constants_ = {std::move(weights), std::move(records)};
    }

    Status lower(const OpBuffers& buffers, const hw::SocProfile& soc, uint32_t core_mask,
                 ProgramBuilder* program) const override {
        if (buffers.features.size() != feature_inputs_.size() || buffers.constants.size() != 2)
            return RKNN_INVALID_ARGUMENT("fp16 convolution bound to %zu features and %zu constants",
                                         buffers.features.size(), buffers.constants.size());
        const ConvAddresses a{buffers.features[0], buffers.constants[0], buffers.constants[1], buffers.output};
        FloatEpilogue e = epilogue_;
        if (e.residual) e.residual_addr = buffers.features[1];
        ConvGeometry g = geometry_;
        g.packed_row_pixels = buffers.packed_row_pixels;
        return lower_conv_fp16(g, a, false, soc, core_mask, program, e);
    }

    // fp16 convolutions are prepared for RK3588 only (RK356x has no fp16 path here).
    bool reads_packed_input() const override { return can_read_packed_input(geometry_, hw::NpuArch::kRk3588); }

    std::string describe(const hw::SocProfile& soc, uint32_t core_mask) const override {
        auto plan = plan_conv(geometry_, soc, core_mask);
        return std::string("fp16 ") + (geometry_.depthwise ? "depthwise " : "") + "convolution in " +
               std::to_string(plan.is_ok() ? plan.value().task_count() : 0) + " task(s)";
    }

private:
    ConvGeometry geometry_;
    FloatEpilogue epilogue_;
};

// The fused activation in the float pipeline's terms.
Status set_activation(const cpu::Fusion& fusion, FloatEpilogue* e) {
    if (fusion.activation.has_post_affine())
        return unsupported(std::string("fp16 ") + graph::op_type_name(fusion.activation.type) + " with an affine after it");
    switch (fusion.activation.type) {
    case OpType::kIdentity: return Status::ok();
    case OpType::kRelu: e->act = FloatEpilogue::Act::kRelu; return Status::ok();
    case OpType::kClip:
        e->act = FloatEpilogue::Act::kClip;
        e->lo = fusion.activation.min;
        e->hi = fusion.activation.max;
        return Status::ok();
    case OpType::kLeakyRelu:
        e->act = FloatEpilogue::Act::kLeaky;
        e->alpha = fusion.activation.alpha;
        return Status::ok();
    default:
        return unsupported(std::string("fp16 ") + graph::op_type_name(fusion.activation.type) +
                           " (the float pipeline's LUT is not modelled)");
    }
}

std::vector<uint8_t> as_bytes(const std::vector<uint16_t>& halves) {
    std::vector<uint8_t> bytes(halves.size() * 2);
    if (!bytes.empty()) std::memcpy(bytes.data(), halves.data(), bytes.size());
    return bytes;
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
        if (fusion.activation.type != OpType::kIdentity && fusion.activation.type != OpType::kRelu)
            return unsupported(std::string("fp16 ") + graph::op_type_name(fusion.activation.type) +
                               " after a fused add: the DPU applies it before the add");
        e.residual = true;
    }
    RKNN_RETURN_IF_ERROR(set_activation(fusion, &e));
    const ConvGeometry& geo = parts.geometry;
    const size_t count = static_cast<size_t>(graph::num_elements(parts.w->shape));
    std::vector<float> w(count);
    for (size_t i = 0; i < count; ++i) w[i] = half_at(parts.weights->data, i);
    const int c_aligned = align_up(geo.in_c, 8);
    const std::vector<uint16_t> packed = geo.depthwise
                                             ? pack_dw_weights_fp16(w.data(), geo.in_c, geo.kh, geo.kw, c_aligned)
                                             : pack_conv_weights_fp16(w.data(), geo.out_c, geo.in_c, geo.kh, geo.kw, c_aligned);
    std::vector<uint8_t> weights = as_bytes(packed);
    std::vector<float> bias;
    if (parts.bias != nullptr) {
        bias.resize(static_cast<size_t>(geo.out_c));
        std::memcpy(bias.data(), parts.bias->data, bias.size() * 4);
        e.bias = true;
    }
    std::vector<uint8_t> records = float_bias_records(bias, align_up(geo.out_c, 8));
    return std::unique_ptr<PreparedOp>(std::make_unique<Fp16ConvOp>(geo, e, e.residual ? fusion.residual_input : -1,
                                                                     std::move(weights), std::move(records)));
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_fp16_gemm_op(const graph::Graph& g, const graph::Op& op) {
    RKNN_ASSIGN_OR_RETURN(const GemmParts parts, gemm_parts(g, op, DType::kFloat16, DType::kFloat32));
    const int64_t k = parts.k, n = parts.n;
    const cpu::Fusion fusion = cpu::fusion_of(op);
    if (fusion.residual_input >= 0) return unsupported("an fp16 product with a fused add");
    FloatEpilogue e;
    RKNN_RETURN_IF_ERROR(set_activation(fusion, &e));
    std::vector<float> bias;
    if (parts.bias != nullptr) {
        bias.resize(static_cast<size_t>(n));
        std::memcpy(bias.data(), parts.bias->data, bias.size() * 4);
        e.bias = true;
    }
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
    std::vector<uint8_t> records = float_bias_records(bias, align_up(geo.out_c, 8));
    return std::unique_ptr<PreparedOp>(std::make_unique<Fp16ConvOp>(geo, e, -1, std::move(weights), std::move(records)));
}

}  // namespace rknn::npu
