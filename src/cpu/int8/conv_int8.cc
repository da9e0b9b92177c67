// int8 convolution with the NPU's arithmetic (2-D, any group count, so also
// depthwise): int32 accumulation of (x - zx) * w, then the DPU epilogue.
// Padded taps contribute nothing, which is what a pad value of zx gives.
#include <algorithm>
#include <vector>

#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/window.h"

namespace rknn::cpu::int8 {

// 65000 * 128 * 255 < 2^31.
constexpr int64_t kTapsPerChunk = 65000;

Status conv(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    const HostTensor& w = *args.inputs[1];
    const HostTensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    const Fusion fusion = fusion_of(args.op);
    const HostTensor* residual = fusion.residual_input >= 0 ? args.inputs[fusion.residual_input] : nullptr;
    HostTensor* y = args.outputs[0];
    if (x.rank() != 4) return Status(StatusCode::kUnimplemented, "the int8 convolution is 2-D");
    RKNN_ASSIGN_OR_RETURN(const Epilogue e, make_epilogue(x, w, w.dim(0), bias, residual, *y, fusion));
    if (residual != nullptr && residual->shape() != y->shape())
        return Status(StatusCode::kInvalidArgument, "the fused residual must match the output shape");

    const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    RKNN_ASSIGN_OR_RETURN(graph::SpatialParams p, graph::forward_spatial(args.op.attrs, in_spatial, kernel, false));
    RKNN_ASSIGN_OR_RETURN(const kernels::Window3 g, kernels::to_window3(p, in_spatial));
    const int64_t groups = args.op.attrs.get_int("group", 1);
    const int64_t in_per_group = x.dim(1) / groups;
    const int64_t out_channels = w.dim(0);
    const int64_t out_per_group = out_channels / groups;
    const int64_t taps = in_per_group * g.kernel_size();
    const int64_t plane = g.out_size();
    const int32_t zx = x.quant.zero_point();

    // col[tap][pixel] = x - zx (0 in the padding); acc[pixel] accumulates one channel.
    std::vector<int16_t> col(static_cast<size_t>(taps * plane));
    std::vector<int64_t> acc(static_cast<size_t>(plane));
    std::vector<int32_t> partial(static_cast<size_t>(plane));
    for (int64_t n = 0; n < x.dim(0); ++n) {
        for (int64_t grp = 0; grp < groups; ++grp) {
            const int8_t* xg = x.data<int8_t>() + (n * x.dim(1) + grp * in_per_group) * g.in_size();
            int64_t row = 0;
            for (int64_t c = 0; c < in_per_group; ++c)
                for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
                    for (int64_t kx = 0; kx < g.kernel[2]; ++kx, ++row) {
                        int16_t* dst = col.data() + row * plane;
                        for (int64_t oy = 0; oy < g.out[1]; ++oy) {
                            const int64_t iy = oy * g.stride[1] - g.pad[1] + ky * g.dilation[1];
                            for (int64_t ox = 0; ox < g.out[2]; ++ox) {
                                const int64_t ix = ox * g.stride[2] - g.pad[2] + kx * g.dilation[2];
                                const bool inside = iy >= 0 && iy < g.in[1] && ix >= 0 && ix < g.in[2];
                                *dst++ = inside ? static_cast<int16_t>(xg[(c * g.in[1] + iy) * g.in[2] + ix] - zx) : 0;
                            }
                        }
                    }
            for (int64_t oc = 0; oc < out_per_group; ++oc) {
                const int64_t channel = grp * out_per_group + oc;
                const int8_t* wrow = w.data<int8_t>() + channel * taps;
                std::fill(acc.begin(), acc.end(), 0);
                // int32 partial sums cannot overflow within kTapsPerChunk taps
                // (|w| <= 128, |x - zx| <= 255); longer sums spill into int64.
                for (int64_t t0 = 0; t0 < taps; t0 += kTapsPerChunk) {
                    std::fill(partial.begin(), partial.end(), 0);
                    const int64_t t1 = std::min(taps, t0 + kTapsPerChunk);
                    for (int64_t t = t0; t < t1; ++t) {
                        const int32_t wt = wrow[t];
                        const int16_t* src = col.data() + t * plane;
                        for (int64_t i = 0; i < plane; ++i) partial[i] += wt * src[i];
                    }
                    for (int64_t i = 0; i < plane; ++i) acc[i] += partial[i];
                }
                int8_t* out = y->data<int8_t>() + (n * out_channels + channel) * plane;
                const int8_t* res = residual ? residual->data<int8_t>() + (n * out_channels + channel) * plane : nullptr;
                for (int64_t i = 0; i < plane; ++i) out[i] = e.finish(static_cast<size_t>(channel), acc[i], res ? res[i] : 0);
            }
        }
    }
    return Status::ok();
}

}  // namespace rknn::cpu::int8
