// Float (and integer max) pooling: MaxPool with optional indices, AveragePool,
// and the global pools. 1 to 3 spatial dims. float32 goes through the
// threaded, vectorised forms in pool_float.cc; the loops here take what
// they do not (other dtypes, MaxPool's indices output).
#include <cmath>
#include <limits>

#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "cpu/kernels/pool_float.h"
#include "cpu/kernels/window.h"

namespace rknn::cpu::kernels {
namespace {

StatusOr<Window3> pool_window(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    const Shape in_spatial(x.shape().begin() + 2, x.shape().end());
    RKNN_ASSIGN_OR_RETURN(graph::SpatialParams p,
                          graph::forward_spatial(args.op.attrs, in_spatial, args.op.attrs.get_ints("kernel_shape"), true));
    return to_window3(p, in_spatial);
}

// Calls f(input_offset_within_plane, z, y, x) for each tap of the window at
// output position (oz, oy, ox) that lies inside the input.
template <typename F>
void for_each_tap(const Window3& g, int64_t oz, int64_t oy, int64_t ox, F f) {
    for_each_window_row(g, oz, oy, [&](int64_t row, int64_t iz, int64_t iy) {
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
            const int64_t ix = ox * g.stride[2] - g.pad[2] + kx * g.dilation[2];
            if (ix < 0 || ix >= g.in[2]) continue;
            f(row + ix, iz, iy, ix);
        }
    });
}

}  // namespace

Status max_pool(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    RKNN_ASSIGN_OR_RETURN(const Window3 g, pool_window(args));
    HostTensor* indices = args.outputs.size() > 1 ? args.outputs[1] : nullptr;
    const bool column_major = args.op.attrs.get_int("storage_order", 0) != 0;
    const int64_t planes = x.dim(0) * x.dim(1);
    if (x.dtype() == DType::kFloat32 && indices == nullptr) {
        max_pool_f32(g, x.data<float>(), args.outputs[0]->data<float>(), planes);
        return Status::ok();
    }
    return visit_numeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* src = x.data<T>();
        T* dst = args.outputs[0]->template data<T>();
        int64_t* idx = indices ? indices->data<int64_t>() : nullptr;
        for (int64_t plane = 0; plane < planes; ++plane) {
            const T* in = src + plane * g.in_size();
            for (int64_t oz = 0, o = plane * g.out_size(); oz < g.out[0]; ++oz)
                for (int64_t oy = 0; oy < g.out[1]; ++oy)
                    for (int64_t ox = 0; ox < g.out[2]; ++ox, ++o) {
                        T best = std::numeric_limits<T>::lowest();
                        int64_t best_index = -1;
                        for_each_tap(g, oz, oy, ox, [&](int64_t off, int64_t iz, int64_t iy, int64_t ix) {
                            if (best_index < 0 || in[off] > best) {
                                best = in[off];
                                best_index = column_major ? (ix * g.in[1] + iy) * g.in[0] + iz : off;
                            }
                        });
                        dst[o] = best;
                        if (idx) idx[o] = plane * g.in_size() + std::max<int64_t>(best_index, 0);
                    }
        }
        return Status::ok();
    });
}

Status average_pool(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    RKNN_RETURN_IF_ERROR(require(x.dtype() == DType::kFloat32, "AveragePool takes float32"));
    RKNN_ASSIGN_OR_RETURN(const Window3 g, pool_window(args));
    const bool include_pad = args.op.attrs.get_int("count_include_pad", 0) != 0;
    average_pool_f32(g, include_pad, x.data<float>(), args.outputs[0]->data<float>(), x.dim(0) * x.dim(1));
    return Status::ok();
}

Status global_average_pool(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    RKNN_RETURN_IF_ERROR(require(x.dtype() == DType::kFloat32, "GlobalAveragePool takes float32"));
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t size = planes > 0 ? x.numel() / planes : 0;
    global_average_pool_f32(x.data<float>(), args.outputs[0]->data<float>(), planes, size);
    return Status::ok();
}

Status global_max_pool(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t size = planes > 0 ? x.numel() / planes : 0;
    if (x.dtype() == DType::kFloat32) {
        global_max_pool_f32(x.data<float>(), args.outputs[0]->data<float>(), planes, size);
        return Status::ok();
    }
    return visit_numeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        for (int64_t p = 0; p < planes; ++p) {
            T best = std::numeric_limits<T>::lowest();
            for (int64_t i = 0; i < size; ++i) best = std::max(best, x.data<T>()[p * size + i]);
            args.outputs[0]->template data<T>()[p] = best;
        }
        return Status::ok();
    });
}

}  // namespace rknn::cpu::kernels
