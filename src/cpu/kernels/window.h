// Window geometry padded to three spatial dims (missing dims have size 1), so
// that one loop nest serves 1-D, 2-D and 3-D convolutions and pools.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "graph/spatial.h"

namespace rknn::cpu::kernels {

constexpr size_t kMaxSpatialDims = 3;

struct Window3 {
    int64_t in[3] = {1, 1, 1};
    int64_t out[3] = {1, 1, 1};
    int64_t kernel[3] = {1, 1, 1};
    int64_t stride[3] = {1, 1, 1};
    int64_t dilation[3] = {1, 1, 1};
    int64_t pad[3] = {0, 0, 0};      // leading padding
    int64_t pad_end[3] = {0, 0, 0};  // trailing padding
    int64_t in_size() const { return in[0] * in[1] * in[2]; }
    int64_t out_size() const { return out[0] * out[1] * out[2]; }
    int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Calls f(row_offset, iz, iy) for each input row (z, y) of the windows at
// output row (oz, oy) that lies inside the input, kz outer and ky inner;
// row_offset is where the row starts within its plane.
template <typename F>
void for_each_window_row(const Window3& g, int64_t oz, int64_t oy, F f) {
    for (int64_t kz = 0; kz < g.kernel[0]; ++kz) {
        const int64_t iz = oz * g.stride[0] - g.pad[0] + kz * g.dilation[0];
        if (iz < 0 || iz >= g.in[0]) continue;
        for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
            const int64_t iy = oy * g.stride[1] - g.pad[1] + ky * g.dilation[1];
            if (iy < 0 || iy >= g.in[1]) continue;
            f((iz * g.in[1] + iy) * g.in[2], iz, iy);
        }
    }
}

inline StatusOr<Window3> to_window3(const graph::SpatialParams& p, const graph::Shape& in_spatial) {
    const size_t n = in_spatial.size();
    if (n == 0 || n > kMaxSpatialDims) {
        return Status(StatusCode::kInvalidArgument, "1 to 3 spatial dims are supported");
    }
    Window3 g;
    const size_t offset = kMaxSpatialDims - n;
    for (size_t i = 0; i < n; ++i) {
        g.in[offset + i] = in_spatial[i];
        g.out[offset + i] = p.out[i];
        g.kernel[offset + i] = p.kernel[i];
        g.stride[offset + i] = p.strides[i];
        g.dilation[offset + i] = p.dilations[i];
        g.pad[offset + i] = p.pads_begin[i];
        g.pad_end[offset + i] = p.pads_end[i];
    }
    return g;
}

}  // namespace rknn::cpu::kernels
