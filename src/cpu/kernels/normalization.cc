// Normalisation kernels (float32): BatchNormalization (inference),
// InstanceNormalization, LayerNormalization, Softmax, LogSoftmax.
#include <cmath>
#include <vector>

#include "base/parallel.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "cpu/kernels/softmax_simd.h"

namespace rknn::cpu::kernels {
namespace {

Status all_float(const KernelArgs& args) {
    for (const HostTensor* t : args.inputs) {
        if (t != nullptr && t->dtype() != DType::kFloat32)
            return Status(StatusCode::kInvalidArgument, "normalisation kernels take float32");
    }
    return Status::ok();
}

Status softmax_impl(const KernelArgs& args, bool log) {
    RKNN_RETURN_IF_ERROR(all_float(args));
    RKNN_ASSIGN_OR_RETURN(const AxisSplit s, softmax_view(args));
    const float* src = args.inputs[0]->data<float>();
    float* dst = args.outputs[0]->data<float>();
    // Each exponential once: kept in doubles for the division, so the values
    // are those of computing it twice. Rows share out over the host's threads.
    // The reference form; contiguous softmax rows take softmax_simd.h's,
    // within its documented tolerance.
    const auto rows = [&](int64_t r0, int64_t r1) {
        thread_local std::vector<double> exps;
        exps.resize(static_cast<size_t>(s.axis));
        for (int64_t r = r0; r < r1; ++r) {
            const int64_t o = r / s.inner, i = r % s.inner;
            const int64_t base = o * s.axis * s.inner + i;
            // Contiguous rows without NaNs or infinities: the vector form.
            if (!log && s.inner == 1 && softmax_row_simd(src + base, dst + base, s.axis)) continue;
            float max = -INFINITY;
            for (int64_t a = 0; a < s.axis; ++a) max = std::fmax(max, src[base + a * s.inner]);
            double total = 0.0;
            for (int64_t a = 0; a < s.axis; ++a) {
                const double e = std::exp(static_cast<double>(src[base + a * s.inner] - max));
                exps[static_cast<size_t>(a)] = e;
                total += e;
            }
            for (int64_t a = 0; a < s.axis; ++a) {
                const float shifted = src[base + a * s.inner] - max;
                dst[base + a * s.inner] = log ? static_cast<float>(shifted - std::log(total))
                                              : static_cast<float>(exps[static_cast<size_t>(a)] / total);
            }
        }
    };
    const int64_t count = s.outer * s.inner;
    parallel_for(count, count * s.axis >= (int64_t{1} << 14) ? std::max<int64_t>(1, (int64_t{1} << 12) / std::max<int64_t>(s.axis, 1)) : count,
                 rows);
    return Status::ok();
}

}  // namespace

Status batch_normalization(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(all_float(args));
    const HostTensor& x = *args.inputs[0];
    const float eps = args.op.attrs.get_float("epsilon", 1e-5f);
    const int64_t channels = x.dim(1);
    for (int i = 1; i <= 4; ++i) {
        RKNN_RETURN_IF_ERROR(require(args.inputs[i]->numel() == channels, "parameters need one value per channel"));
    }
    const float* scale = args.inputs[1]->data<float>();
    const float* bias = args.inputs[2]->data<float>();
    const float* mean = args.inputs[3]->data<float>();
    const float* var = args.inputs[4]->data<float>();
    const AxisSplit s = split_at_axis(x.shape(), 1);
    const float* src = x.data<float>();
    float* dst = args.outputs[0]->data<float>();
    for (int64_t n = 0; n < s.outer; ++n)
        for (int64_t c = 0; c < channels; ++c) {
            const float k = scale[c] / std::sqrt(var[c] + eps);
            const float b = bias[c] - mean[c] * k;
            const int64_t base = (n * channels + c) * s.inner;
            for (int64_t i = 0; i < s.inner; ++i) dst[base + i] = src[base + i] * k + b;
        }
    // Inference never updates the running statistics; report them unchanged.
    for (size_t i = 1; i < args.outputs.size(); ++i) {
        const HostTensor& source = *args.inputs[i + 2];
        std::copy(source.data<float>(), source.data<float>() + source.numel(), args.outputs[i]->data<float>());
    }
    return Status::ok();
}

Status instance_normalization(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(all_float(args));
    const HostTensor& x = *args.inputs[0];
    const float eps = args.op.attrs.get_float("epsilon", 1e-5f);
    const int64_t channels = x.dim(1);
    RKNN_RETURN_IF_ERROR(require(args.inputs[1]->numel() == channels && args.inputs[2]->numel() == channels,
                                 "scale and bias need one value per channel"));
    const AxisSplit s = split_at_axis(x.shape(), 1);
    const float* src = x.data<float>();
    float* dst = args.outputs[0]->data<float>();
    for (int64_t n = 0; n < s.outer; ++n)
        for (int64_t c = 0; c < channels; ++c) {
            const int64_t base = (n * channels + c) * s.inner;
            double mean = 0.0;
            for (int64_t i = 0; i < s.inner; ++i) mean += src[base + i];
            mean /= static_cast<double>(s.inner);
            double var = 0.0;
            for (int64_t i = 0; i < s.inner; ++i) var += (src[base + i] - mean) * (src[base + i] - mean);
            var /= static_cast<double>(s.inner);
            const double k = args.inputs[1]->data<float>()[c] / std::sqrt(var + eps);
            for (int64_t i = 0; i < s.inner; ++i)
                dst[base + i] = static_cast<float>((src[base + i] - mean) * k + args.inputs[2]->data<float>()[c]);
        }
    return Status::ok();
}

Status layer_normalization(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(all_float(args));
    const HostTensor& x = *args.inputs[0];
    const HostTensor& scale = *args.inputs[1];
    const HostTensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    const int64_t rank = x.rank();
    RKNN_ASSIGN_OR_RETURN(int64_t axis, graph::normalize_axis(args.op.attrs.get_int("axis", -1), rank, "LayerNormalization"));
    const float eps = args.op.attrs.get_float("epsilon", 1e-5f);
    int64_t outer = 1;
    int64_t inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= x.dim(d);
    const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
    RKNN_RETURN_IF_ERROR(require(broadcasts_into(scale.shape(), norm_shape), "scale does not match the normalised dims"));
    RKNN_RETURN_IF_ERROR(
        require(bias == nullptr || broadcasts_into(bias->shape(), norm_shape), "bias does not match the normalised dims"));
    const std::vector<std::vector<int64_t>> strides = {broadcast_strides(scale.shape(), norm_shape),
                                                       bias ? broadcast_strides(bias->shape(), norm_shape)
                                                            : std::vector<int64_t>(norm_shape.size(), 0)};
    const float* src = x.data<float>();
    float* dst = args.outputs[0]->data<float>();
    for (int64_t o = 0; o < outer; ++o) {
        const float* row = src + o * inner;
        double mean = 0.0;
        for (int64_t i = 0; i < inner; ++i) mean += row[i];
        mean /= static_cast<double>(inner);
        double var = 0.0;
        for (int64_t i = 0; i < inner; ++i) var += (row[i] - mean) * (row[i] - mean);
        var /= static_cast<double>(inner);
        const double inv_std = 1.0 / std::sqrt(var + eps);
        float* out = dst + o * inner;
        for_each_broadcast(norm_shape, strides, [&](int64_t i, int64_t os, int64_t ob, int64_t) {
            const float b = bias ? bias->data<float>()[ob] : 0.0f;
            out[i] = static_cast<float>((row[i] - mean) * inv_std) * scale.data<float>()[os] + b;
        });
        if (args.outputs.size() > 1) args.outputs[1]->data<float>()[o] = static_cast<float>(mean);
        if (args.outputs.size() > 2) args.outputs[2]->data<float>()[o] = static_cast<float>(inv_std);
    }
    return Status::ok();
}

// Softmax along one axis of an (outer, axis, inner) view. Opsets before 13
// flatten everything from `axis` on into the softmax dimension.
StatusOr<AxisSplit> softmax_view(const KernelArgs& args) {
    const Shape& shape = args.inputs[0]->shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    const bool legacy = args.op.attrs.get_int("legacy_2d", 0) != 0;
    RKNN_ASSIGN_OR_RETURN(int64_t axis,
                          graph::normalize_axis(args.op.attrs.get_int("axis", legacy ? 1 : -1), rank, "Softmax"));
    if (!legacy) return split_at_axis(shape, axis);
    AxisSplit s;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? s.outer : s.axis) *= shape[d];
    return s;
}

Status softmax(const KernelArgs& args) { return softmax_impl(args, false); }
Status log_softmax(const KernelArgs& args) { return softmax_impl(args, true); }

}  // namespace rknn::cpu::kernels
