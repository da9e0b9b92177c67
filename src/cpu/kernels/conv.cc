// Float convolution and transposed convolution (1 to 3 spatial dims, groups,
// strides, dilations, padding) through im2col / col2im and the float GEMM
// (base/gemm_f32.h); depthwise and 1x1 convolutions read the input directly.
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/gemm_f32.h"
#include "base/hot_loops.h"
#include "base/uninit_vector.h"
#include "base/parallel.h"
#include "cpu/fused_ops.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "cpu/kernels/window.h"
#include "graph/spatial.h"

namespace rknn::cpu::kernels {
namespace {

// col[(c, kz, ky, kx), (oz, oy, ox)] = x[c, iz, iy, ix] or 0 in the padding.
void im2col(const float* x, int64_t channels, const Window3& g, float* col) {
    const int64_t out_size = g.out_size();
    int64_t row = 0;
    for (int64_t c = 0; c < channels; ++c) {
        const float* xc = x + c * g.in_size();
        for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
            for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
                for (int64_t kx = 0; kx < g.kernel[2]; ++kx, ++row) {
                    float* dst = col + row * out_size;
                    for (int64_t oz = 0; oz < g.out[0]; ++oz) {
                        const int64_t iz = oz * g.stride[0] - g.pad[0] + kz * g.dilation[0];
                        for (int64_t oy = 0; oy < g.out[1]; ++oy) {
                            const int64_t iy = oy * g.stride[1] - g.pad[1] + ky * g.dilation[1];
                            const bool row_inside = iz >= 0 && iz < g.in[0] && iy >= 0 && iy < g.in[1];
                            const float* src = xc + (iz * g.in[1] + iy) * g.in[2];
                            for (int64_t ox = 0; ox < g.out[2]; ++ox) {
                                const int64_t ix = ox * g.stride[2] - g.pad[2] + kx * g.dilation[2];
                                *dst++ = row_inside && ix >= 0 && ix < g.in[2] ? src[ix] : 0.0f;
                            }
                        }
                    }
                }
    }
}

// The adjoint of im2col: y[c, z, y, x] += col[(c, kz, ky, kx), (iz, iy, ix)]
// where the input positions here are the small (pre-transpose) grid.
void col2im(const float* col, int64_t channels, const Window3& g, float* y) {
    const int64_t small = g.in_size();
    int64_t row = 0;
    for (int64_t c = 0; c < channels; ++c) {
        float* yc = y + c * g.out_size();
        for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
            for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
                for (int64_t kx = 0; kx < g.kernel[2]; ++kx, ++row) {
                    const float* src = col + row * small;
                    for (int64_t iz = 0; iz < g.in[0]; ++iz) {
                        const int64_t oz = iz * g.stride[0] - g.pad[0] + kz * g.dilation[0];
                        for (int64_t iy = 0; iy < g.in[1]; ++iy) {
                            const int64_t oy = iy * g.stride[1] - g.pad[1] + ky * g.dilation[1];
                            const bool row_inside = oz >= 0 && oz < g.out[0] && oy >= 0 && oy < g.out[1];
                            for (int64_t ix = 0; ix < g.in[2]; ++ix, ++src) {
                                const int64_t ox = ix * g.stride[2] - g.pad[2] + kx * g.dilation[2];
                                if (row_inside && ox >= 0 && ox < g.out[2]) yc[(oz * g.out[1] + oy) * g.out[2] + ox] += *src;
                            }
                        }
                    }
                }
    }
}

// A transposed window whose kernel equals its stride, with no padding,
// dilation or extra output: every output takes exactly one column value, so
// col2im is a scatter that also adds the bias (0 + v, then + bias, as the
// general path's zeroed output, col2im and bias loop give it).
bool tiles_exactly(const Window3& g) {
    for (int i = 0; i < 3; ++i) {
        if (g.kernel[i] != g.stride[i] || g.dilation[i] != 1 || g.pad[i] != 0 || g.out[i] != g.in[i] * g.stride[i])
            return false;
    }
    return true;
}

// tiles_exactly's scatter for output channels [c0, c1).
RKNN_HOT_LOOP void scatter_tiles(const float* col, const Window3& g, const float* bias, int64_t c0, int64_t c1, float* y) {
    const int64_t small = g.in_size();
    for (int64_t c = c0; c < c1; ++c) {
        float* yc = y + c * g.out_size();
        const float b = bias != nullptr ? bias[c] : 0.0f;
        const float* src = col + c * g.kernel_size() * small;
        for (int64_t kz = 0; kz < g.kernel[0]; ++kz)
            for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
                for (int64_t kx = 0; kx < g.kernel[2]; ++kx)
                    for (int64_t iz = 0; iz < g.in[0]; ++iz)
                        for (int64_t iy = 0; iy < g.in[1]; ++iy) {
                            float* dst = yc + ((iz * g.stride[0] + kz) * g.out[1] + iy * g.stride[1] + ky) * g.out[2] + kx;
                            const int64_t step = g.stride[2];
                            if (bias != nullptr) {
                                for (int64_t ix = 0; ix < g.in[2]; ++ix, ++src) dst[ix * step] = (0.0f + *src) + b;
                            } else {
                                for (int64_t ix = 0; ix < g.in[2]; ++ix, ++src) dst[ix * step] = 0.0f + *src;
                            }
                        }
    }
}

// A 1x1 window with unit strides and no padding: the input is its own im2col.
bool is_pointwise(const Window3& g) {
    for (int i = 0; i < 3; ++i) {
        if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad[i] != 0 || g.in[i] != g.out[i]) return false;
    }
    return true;
}

RKNN_HOT_LOOP void add_to_row(float* row, int64_t n, float b) {
    for (int64_t i = 0; i < n; ++i) row[i] += b;
}

// One channel of a depthwise convolution, straight from the input: every
// output sums its window's taps in im2col order (taps in the padding add
// nothing), as the GEMM over im2col rows would.
RKNN_HOT_LOOP void depthwise_channel(const float* __restrict x, const float* w, const Window3& g, float* __restrict y) {
    for (int64_t oz = 0; oz < g.out[0]; ++oz)
        for (int64_t oy = 0; oy < g.out[1]; ++oy) {
            // The sums build up in the output row itself.
            float* row = y + (oz * g.out[1] + oy) * g.out[2];
            std::fill(row, row + g.out[2], 0.0f);
            int64_t tap = 0;
            for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
                const int64_t iz = oz * g.stride[0] - g.pad[0] + kz * g.dilation[0];
                for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                    const int64_t iy = oy * g.stride[1] - g.pad[1] + ky * g.dilation[1];
                    if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
                        tap += g.kernel[2];  // a row of taps in the padding
                        continue;
                    }
                    const float* src = x + (iz * g.in[1] + iy) * g.in[2];
                    for (int64_t kx = 0; kx < g.kernel[2]; ++kx, ++tap) {
                        // The outputs whose input column ox * stride - pad + kx * dilation is inside.
                        const int64_t shift = kx * g.dilation[2] - g.pad[2], s = g.stride[2];
                        const int64_t lo = shift >= 0 ? 0 : (-shift + s - 1) / s;
                        const int64_t hi = std::min(g.out[2], g.in[2] - shift <= 0 ? 0 : (g.in[2] - shift + s - 1) / s);
                        const float wt = w[tap];
                        if (s == 1) {
                            for (int64_t ox = lo; ox < hi; ++ox) row[ox] += wt * src[ox + shift];
                        } else {
                            for (int64_t ox = lo; ox < hi; ++ox) row[ox] += wt * src[ox * s + shift];
                        }
                    }
                }
            }
        }
}

Status check_float(const KernelArgs& args) {
    for (const HostTensor* t : args.inputs) {
        if (t != nullptr && t->dtype() != DType::kFloat32) {
            return Status(StatusCode::kInvalidArgument, "the float convolution takes float32 tensors");
        }
    }
    return Status::ok();
}

}  // namespace

Status conv(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(check_float(args));
    const HostTensor& x = *args.inputs[0];
    const HostTensor& w = *args.inputs[1];
    const HostTensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    HostTensor* y = args.outputs[0];
    const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    RKNN_ASSIGN_OR_RETURN(graph::SpatialParams p, graph::forward_spatial(args.op.attrs, in_spatial, kernel, false));
    RKNN_ASSIGN_OR_RETURN(Window3 g, to_window3(p, in_spatial));
    const int64_t batch = x.dim(0);
    const int64_t groups = args.op.attrs.get_int("group", 1);
    const int64_t in_per_group = x.dim(1) / groups;
    const int64_t out_channels = w.dim(0);
    const int64_t out_per_group = out_channels / groups;
    const int64_t patch = in_per_group * g.kernel_size();
    const bool depthwise = in_per_group == 1 && out_per_group == 1;
    const bool pointwise = is_pointwise(g);
    // Groups are independent: with several, each host thread takes whole
    // groups (a GEMM called from inside one runs on that thread).
    const int64_t jobs = batch * groups;
    const int64_t work = jobs * out_per_group * patch * g.out_size();
    parallel_for(jobs, groups > 1 && work >= (int64_t{1} << 18) ? 1 : jobs, [&](int64_t j0, int64_t j1) {
        std::vector<float> col(depthwise || pointwise ? 0 : static_cast<size_t>(patch * g.out_size()));
        for (int64_t job = j0; job < j1; ++job) {
            const int64_t n = job / groups, grp = job % groups;
            const float* xg = x.data<float>() + (n * x.dim(1) + grp * in_per_group) * g.in_size();
            float* yg = y->data<float>() + (n * out_channels + grp * out_per_group) * g.out_size();
            const float* wg = w.data<float>() + grp * out_per_group * patch;
            if (depthwise) {
                depthwise_channel(xg, wg, g, yg);
            } else {
                const float* cols = xg;
                if (!pointwise) {
                    im2col(xg, in_per_group, g, col.data());
                    cols = col.data();
                }
                gemm_f32(out_per_group, g.out_size(), patch, wg, patch, cols, g.out_size(), yg, g.out_size(), false);
            }
            if (bias != nullptr && groups > 1) {
                for (int64_t oc = 0; oc < out_per_group; ++oc)
                    add_to_row(yg + oc * g.out_size(), g.out_size(), bias->data<float>()[grp * out_per_group + oc]);
            }
        }
    });
    // One job: the bias, and a fused activation that needs nothing but the
    // value, go over the rows on the threads, each row once while in cache.
    const Fusion fusion = fusion_of(args.op);
    const bool activation_in_rows = groups == 1 && fusion.residual_input < 0 &&
                                    fusion.activation.type != graph::OpType::kIdentity &&
                                    fusion.activation.type != graph::OpType::kPRelu;
    if ((bias != nullptr && groups == 1) || activation_in_rows) {
        const int64_t rows = batch * out_channels;
        parallel_for(rows, rows * g.out_size() >= (int64_t{1} << 16) ? 1 : rows, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                float* row = y->data<float>() + r * g.out_size();
                if (bias != nullptr && groups == 1) add_to_row(row, g.out_size(), bias->data<float>()[r % out_channels]);
                if (activation_in_rows) apply_activation(fusion.activation, row, g.out_size());
            }
        });
    }
    if (activation_in_rows) return Status::ok();
    return apply_fusion_float(fusion, fusion.residual_input >= 0 ? args.inputs[fusion.residual_input] : nullptr, y);
}

Status conv_transpose(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(check_float(args));
    const HostTensor& x = *args.inputs[0];
    const HostTensor& w = *args.inputs[1];
    const HostTensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    HostTensor* y = args.outputs[0];
    const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    RKNN_ASSIGN_OR_RETURN(graph::SpatialParams p, graph::transpose_spatial(args.op.attrs, in_spatial, kernel));
    // col2im walks the small grid (the input) and scatters into the large one.
    RKNN_ASSIGN_OR_RETURN(Window3 g, to_window3(p, in_spatial));
    const int64_t batch = x.dim(0);
    const int64_t groups = args.op.attrs.get_int("group", 1);
    const int64_t in_per_group = x.dim(1) / groups;
    const int64_t out_per_group = w.dim(1);
    const int64_t out_channels = out_per_group * groups;
    const int64_t rows = out_per_group * g.kernel_size();
    UninitVector<float> col(static_cast<size_t>(rows * g.in_size()));  // the GEMM writes all of it
    // W viewed per group as [in_per_group, rows]; col = W^T x needs W transposed.
    std::vector<float> wt(static_cast<size_t>(rows * in_per_group));
    const bool tiles = tiles_exactly(g);
    if (!tiles) std::memset(y->raw(), 0, y->byte_size());
    for (int64_t grp = 0; grp < groups; ++grp) {
        const float* wg = w.data<float>() + grp * in_per_group * rows;
        for (int64_t c = 0; c < in_per_group; ++c)
            for (int64_t r = 0; r < rows; ++r) wt[r * in_per_group + c] = wg[c * rows + r];
        for (int64_t n = 0; n < batch; ++n) {
            const float* xg = x.data<float>() + (n * x.dim(1) + grp * in_per_group) * g.in_size();
            float* yg = y->data<float>() + (n * out_channels + grp * out_per_group) * g.out_size();
            gemm_f32(rows, g.in_size(), in_per_group, wt.data(), in_per_group, xg, g.in_size(), col.data(), g.in_size(),
                  false);
            if (tiles) {
                const float* bg = bias != nullptr ? bias->data<float>() + grp * out_per_group : nullptr;
                const int64_t grain = out_per_group * g.out_size() >= (int64_t{1} << 16) ? 1 : out_per_group;
                parallel_for(out_per_group, grain, [&](int64_t c0, int64_t c1) { scatter_tiles(col.data(), g, bg, c0, c1, yg); });
            } else {
                col2im(col.data(), out_per_group, g, yg);
            }
        }
    }
    if (bias != nullptr && !tiles) {
        for (int64_t n = 0; n < batch; ++n)
            for (int64_t oc = 0; oc < out_channels; ++oc) {
                float* row = y->data<float>() + (n * out_channels + oc) * g.out_size();
                for (int64_t i = 0; i < g.out_size(); ++i) row[i] += bias->data<float>()[oc];
            }
    }
    return apply_fusion_float(fusion_of(args.op), nullptr, y);  // an activation the converter fused
}

}  // namespace rknn::cpu::kernels
