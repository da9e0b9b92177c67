// int8 pooling with the NPU's arithmetic (PPU, hw-facts 3.5 and 4.1).
//
// Max/min pools pick an input code and requantise it if the output scale
// differs. Average pools sum the codes a over the window and multiply by the
// Q16 reciprocals of the window height and width, as the PPU's RECIP_KERNEL
// registers do: v = round_shift(sum * round(65536/kh) * round(65536/kw), 32);
// the zero point comes off after that, with the requantisation (the DPU's BS
// stage on the NPU): y = sat(requant(v - za) + zy). The divisor counts only
// taps inside the input unless count_include_pad is set, as ONNX defines.
#include <limits>

#include "base/parallel.h"

#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/window.h"

namespace rknn::cpu::int8 {
namespace {

int64_t recip16(int64_t k) { return k > 0 ? round_even(65536.0 / static_cast<double>(k)) : 0; }

Status check(const KernelArgs& args) {
    RKNN_RETURN_IF_ERROR(require_int8(*args.inputs[0], "the input"));
    RKNN_RETURN_IF_ERROR(require_int8(*args.outputs[0], "the output"));
    if (args.inputs[0]->rank() != 4) return Status(StatusCode::kUnimplemented, "int8 pools are 2-D");
    return Status::ok();
}

StatusOr<kernels::Window3> window_of(const KernelArgs& args, bool global) {
    const HostTensor& x = *args.inputs[0];
    const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
    graph::Attributes attrs = args.op.attrs;
    if (global) attrs.set_ints("kernel_shape", {x.dim(2), x.dim(3)});
    RKNN_ASSIGN_OR_RETURN(graph::SpatialParams p,
                          graph::forward_spatial(attrs, in_spatial, attrs.get_ints("kernel_shape"), true));
    return kernels::to_window3(p, in_spatial);
}

// Number of window taps along one axis that fall inside [lo, hi).
int64_t taps_inside(int64_t start, int64_t kernel, int64_t dilation, int64_t lo, int64_t hi) {
    int64_t n = 0;
    for (int64_t k = 0; k < kernel; ++k) {
        const int64_t i = start + k * dilation;
        if (i >= lo && i < hi) ++n;
    }
    return n;
}

// One window that is exactly the 2-D plane (a global pool, or a pool whose
// kernel is the input): one output per plane, no padding.
bool covers_plane(const kernels::Window3& g) {
    for (int i = 1; i < 3; ++i) {
        if (g.kernel[i] != g.in[i] || g.out[i] != 1 || g.pad[i] != 0 || g.dilation[i] != 1) return false;
    }
    return g.in_size() < (int64_t{1} << 24);
}

Status pool(const KernelArgs& args, bool average, bool global) {
    RKNN_RETURN_IF_ERROR(check(args));
    const HostTensor& x = *args.inputs[0];
    HostTensor* y = args.outputs[0];
    if (!global && !average && args.outputs.size() > 1)
        return Status(StatusCode::kUnimplemented, "int8 MaxPool has no indices output");
    RKNN_ASSIGN_OR_RETURN(const kernels::Window3 g, window_of(args, global));
    const bool include_pad = args.op.attrs.get_int("count_include_pad", 0) != 0;
    const Requant r = make_requant(x.quant.scale() / y->quant.scale());
    const int64_t zx = x.quant.zero_point();
    const int64_t zy = y->quant.zero_point();
    const int64_t planes = x.dim(0) * x.dim(1);
    const bool whole_plane = covers_plane(g);
    // Planes are independent: large pools share them out over the host's threads.
    const int64_t work = planes * g.out_size() * g.kernel_size();
    parallel_for(planes, work >= (int64_t{1} << 16) ? 1 : planes, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const int8_t* in = x.data<int8_t>() + p * g.in_size();
            int8_t* out = y->data<int8_t>() + p * g.out_size();
            if (whole_plane) {
                // The one window's sum (or max) in a loop the compiler vectorises;
                // the same codes as the general loop below.
                const int64_t n = g.in_size();
                int64_t acc;
                if (average) {
                    int32_t sum = 0;  // |sum| <= 128 * n < 2^31 (covers_plane)
                    for (int64_t i = 0; i < n; ++i) sum += in[i];
                    acc = round_shift(int64_t{sum} * recip16(g.kernel[1]) * recip16(g.kernel[2]), 32);
                } else {
                    int8_t best = in[0];
                    for (int64_t i = 1; i < n; ++i) best = in[i] > best ? in[i] : best;
                    acc = best;
                }
                out[0] = saturate_int8(apply(r, 0, acc - zx) + zy);
                continue;
            }
            for (int64_t oy = 0; oy < g.out[1]; ++oy)
                for (int64_t ox = 0; ox < g.out[2]; ++ox) {
                    const int64_t y0 = oy * g.stride[1] - g.pad[1];
                    const int64_t x0 = ox * g.stride[2] - g.pad[2];
                    int64_t acc = average ? 0 : std::numeric_limits<int64_t>::min();
                    for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
                        const int64_t iy = y0 + ky * g.dilation[1];
                        if (iy < 0 || iy >= g.in[1]) continue;
                        for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
                            const int64_t ix = x0 + kx * g.dilation[2];
                            if (ix < 0 || ix >= g.in[2]) continue;
                            const int64_t v = in[iy * g.in[2] + ix];
                            acc = average ? acc + v : std::max(acc, v);
                        }
                    }
                    if (average) {
                        const int64_t lo_y = include_pad ? -g.pad[1] : 0, hi_y = g.in[1] + (include_pad ? g.pad_end[1] : 0);
                        const int64_t lo_x = include_pad ? -g.pad[2] : 0, hi_x = g.in[2] + (include_pad ? g.pad_end[2] : 0);
                        const int64_t kh = taps_inside(y0, g.kernel[1], g.dilation[1], lo_y, hi_y);
                        const int64_t kw = taps_inside(x0, g.kernel[2], g.dilation[2], lo_x, hi_x);
                        if (include_pad) {
                            // Padded taps count as zeros, which are codes of zx in this sum.
                            const int64_t inside = taps_inside(y0, g.kernel[1], g.dilation[1], 0, g.in[1]) *
                                                   taps_inside(x0, g.kernel[2], g.dilation[2], 0, g.in[2]);
                            acc += (kh * kw - inside) * zx;
                        }
                        acc = round_shift(acc * recip16(kh) * recip16(kw), 32);
                    } else if (acc == std::numeric_limits<int64_t>::min()) {
                        acc = zx;  // a window entirely in the padding: a zero
                    }
                    out[oy * g.out[2] + ox] = saturate_int8(apply(r, 0, acc - zx) + zy);
                }
        }
    });
    return Status::ok();
}

}  // namespace

Status max_pool(const KernelArgs& args) { return pool(args, false, false); }
Status average_pool(const KernelArgs& args) { return pool(args, true, false); }
Status global_average_pool(const KernelArgs& args) { return pool(args, true, true); }
Status global_max_pool(const KernelArgs& args) { return pool(args, false, true); }

}  // namespace rknn::cpu::int8
