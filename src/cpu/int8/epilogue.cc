#include "cpu/int8/epilogue.h"

#include <cmath>

namespace rknn::cpu::int8 {
namespace {

// A clamp bound far outside any int8 result (in output units).
constexpr int64_t kUnbounded = int64_t{1} << 20;

}  // namespace

Status require_int8(const HostTensor& t, const char* what) {
    if (t.dtype() != graph::DType::kInt8 || !t.quant.is_quantized()) {
        return Status(StatusCode::kUnimplemented, std::string(what) + " is not a quantised int8 tensor");
    }
    return Status::ok();
}

StatusOr<Int8Activation> make_activation(const kernels::Activation& act, float out_scale) {
    Int8Activation a;
    switch (act.type) {
    case graph::OpType::kIdentity: break;
    case graph::OpType::kRelu: a.kind = Int8Activation::Kind::kRelu; break;
    case graph::OpType::kClip:
        a.kind = Int8Activation::Kind::kClip;
        // Bounds beyond the int8 range never bind; keep them representable.
        a.lo = std::isfinite(act.min) ? std::max<int64_t>(round_even(act.min / out_scale), -kUnbounded) : -kUnbounded;
        a.hi = std::isfinite(act.max) ? std::min<int64_t>(round_even(act.max / out_scale), kUnbounded) : kUnbounded;
        break;
    case graph::OpType::kLeakyRelu:
        a.kind = Int8Activation::Kind::kLeaky;
        a.slope = make_requant(act.alpha);
        break;
    case graph::OpType::kPRelu: {
        if (act.slopes.empty()) return Status(StatusCode::kUnimplemented, "a fused PRelu without slopes");
        a.kind = Int8Activation::Kind::kPRelu;
        a.slope = make_requant(std::vector<double>(act.slopes.begin(), act.slopes.end()));
        break;
    }
    default: return Status(StatusCode::kUnimplemented, "this activation is not fused in int8");
    }
    return a;
}

int64_t apply_activation(const Int8Activation& act, int64_t v) { return apply_activation(act, 0, v); }

int64_t apply_activation(const Int8Activation& act, size_t channel, int64_t v) {
    switch (act.kind) {
    case Int8Activation::Kind::kNone: return v;
    case Int8Activation::Kind::kRelu: return v > 0 ? v : 0;
    case Int8Activation::Kind::kClip: return v < act.lo ? act.lo : (v > act.hi ? act.hi : v);
    case Int8Activation::Kind::kLeaky: return v >= 0 ? v : apply(act.slope, 0, v);
    case Int8Activation::Kind::kPRelu: return v >= 0 ? v : apply(act.slope, channel, v);
    }
    return v;
}

int8_t Epilogue::finish(size_t channel, int64_t acc, int8_t residual) const {
    if (!bias.empty()) acc += bias[channel];
    int64_t v = apply(requant, channel, saturate_int32(acc));
    if (has_residual) v += apply(residual_requant, 0, static_cast<int64_t>(residual) - residual_zp);
    return saturate_int8((has_lut ? lut.apply(v) : apply_activation(activation, channel, v)) + out_zp);
}

StatusOr<Epilogue> make_epilogue(const HostTensor& in, const HostTensor& weights, int64_t out_channels,
                                 const HostTensor* bias, const HostTensor* residual, const HostTensor& out,
                                 const Fusion& fusion) {
    RKNN_RETURN_IF_ERROR(require_int8(in, "the input"));
    RKNN_RETURN_IF_ERROR(require_int8(weights, "the weights"));
    RKNN_RETURN_IF_ERROR(require_int8(out, "the output"));
    for (size_t i = 0; i < weights.quant.zero_points.size(); ++i) {
        if (weights.quant.zero_points[i] != 0) return Status(StatusCode::kUnimplemented, "weights are not symmetric");
    }
    if (weights.quant.per_channel() && static_cast<int64_t>(weights.quant.scales.size()) != out_channels) {
        return Status(StatusCode::kUnimplemented, "weight scales are not one per output channel");
    }
    Epilogue e;
    const double in_scale = in.quant.scale();
    // With a LUT activation the pipeline works in the table's input units.
    if (needs_lut(fusion.activation.type)) {
        if (!fusion.has_lut_range) return Status(StatusCode::kUnimplemented, "the fused activation has no input range");
        e.has_lut = true;
        e.lut = make_lut_stage(fusion.activation, fusion.lut_min, fusion.lut_max, out.quant.scale());
    }
    const double out_scale = e.has_lut ? e.lut.in_scale : out.quant.scale();
    std::vector<double> factors(static_cast<size_t>(out_channels));
    for (int64_t c = 0; c < out_channels; ++c) factors[c] = in_scale * weights.quant.scale(c) / out_scale;
    e.requant = make_requant(factors);
    e.out_zp = out.quant.zero_point();
    if (bias != nullptr) {
        if (bias->dtype() != graph::DType::kInt32 || bias->numel() != out_channels)
            return Status(StatusCode::kUnimplemented, "bias is not int32 with one value per channel");
        e.bias.assign(bias->data<int32_t>(), bias->data<int32_t>() + out_channels);
    }
    if (residual != nullptr) {
        RKNN_RETURN_IF_ERROR(require_int8(*residual, "the residual"));
        e.has_residual = true;
        e.residual_requant = make_requant(residual->quant.scale() / out_scale);
        e.residual_zp = residual->quant.zero_point();
    }
    if (!e.has_lut) {
        if (fusion.activation.type == graph::OpType::kPRelu &&
            static_cast<int64_t>(fusion.activation.slopes.size()) != out_channels)
            return Status(StatusCode::kInvalidArgument, "the fused PRelu's slopes are not one per output channel");
        RKNN_ASSIGN_OR_RETURN(e.activation, make_activation(fusion.activation, static_cast<float>(out_scale)));
    }
    return e;
}

}  // namespace rknn::cpu::int8
