#include "cpu/kernels/pool_float.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "base/hot_loops.h"
#include "base/parallel.h"

namespace rknn::cpu::kernels {
namespace {

// Outputs per vector block; each keeps its running value in a lane.
constexpr int kBlock = 16;
// Taps per chunk of work given to one thread at a time.
constexpr int64_t kTapsPerChunk = int64_t{1} << 15;

// The outputs [lo, hi) along one axis whose every tap lies inside [0, in).
void interior(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t pad, int64_t* lo,
              int64_t* hi) {
    *lo = std::min(out, (pad + stride - 1) / stride);
    const int64_t last_start = in - 1 + pad - (kernel - 1) * dilation;  // largest ox * stride allowed
    *hi = last_start < 0 ? 0 : std::min(out, last_start / stride + 1);
    *hi = std::max(*hi, *lo);
}

// The input rows (z, y) of an output row's windows that lie inside the
// input, in the reference's order (kz outer, ky inner).
int window_rows(const Window3& g, const float* plane, int64_t oz, int64_t oy, const float** rows) {
    int n = 0;
    for_each_window_row(g, oz, oy, [&](int64_t row, int64_t, int64_t) { rows[n++] = plane + row; });
    return n;
}

// The taps of output ox along x lie at row[x0 + kx * dilation], x0 = ox *
// stride - pad. S: the stride when known at compile time (0: `stride`).
template <int S, bool Max>
RKNN_HOT_LOOP_WIDE void block(const float* const* rows, int nrows, int64_t kernel, int64_t dilation, int64_t stride,
                              int64_t x0, float* out) {
    const int64_t s = S > 0 ? S : stride;
    float acc[kBlock];
    if (Max) {
        for (int j = 0; j < kBlock; ++j) acc[j] = rows[0][x0 + j * s];
    } else {
        for (int j = 0; j < kBlock; ++j) acc[j] = 0.0f;
    }
    for (int r = 0; r < nrows; ++r) {
        for (int64_t kx = 0; kx < kernel; ++kx) {
            if (Max && r == 0 && kx == 0) continue;
            const float* src = rows[r] + x0 + kx * dilation;
            for (int j = 0; j < kBlock; ++j) {
                const float v = src[j * s];
                acc[j] = Max ? (v > acc[j] ? v : acc[j]) : acc[j] + v;
            }
        }
    }
    for (int j = 0; j < kBlock; ++j) out[j] = acc[j];
}

template <bool Max>
using BlockFn = void (*)(const float* const*, int, int64_t, int64_t, int64_t, int64_t, float*);

template <bool Max>
BlockFn<Max> block_for(int64_t stride) {
    if (stride == 1) return block<1, Max>;
    if (stride == 2) return block<2, Max>;
    return block<0, Max>;
}

// One output by the reference's loop (pool.cc), for the edges.
template <bool Max>
float one_output(const Window3& g, bool include_pad, const float* const* rows, int nrows, int64_t count_without_x,
                 int64_t ox) {
    float best = std::numeric_limits<float>::lowest();
    float sum = 0.0f;
    bool any = false;
    int64_t inside_x = 0;
    for (int r = 0; r < nrows; ++r) {
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
            const int64_t ix = ox * g.stride[2] - g.pad[2] + kx * g.dilation[2];
            if (ix < 0 || ix >= g.in[2]) continue;
            const float v = rows[r][ix];
            if (Max) {
                if (!any || v > best) best = v;
            } else {
                sum += v;
            }
            any = true;
            if (r == 0) ++inside_x;
        }
    }
    if (Max) return best;
    int64_t count = static_cast<int64_t>(nrows) * inside_x;
    if (include_pad) {
        int64_t padded_x = 0;
        for (int64_t kx = 0; kx < g.kernel[2]; ++kx) {
            const int64_t ix = ox * g.stride[2] - g.pad[2] + kx * g.dilation[2];
            if (ix >= -g.pad[2] && ix < g.in[2] + g.pad_end[2]) ++padded_x;
        }
        count = count_without_x * padded_x;
    }
    return count > 0 ? sum / static_cast<float>(count) : 0.0f;
}

// Window positions inside the padded input along z and y (count_include_pad).
int64_t padded_rows(const Window3& g, int64_t oz, int64_t oy) {
    int64_t count = 1;
    const int64_t pos[2] = {oz, oy};
    for (int d = 0; d < 2; ++d) {
        int64_t inside = 0;
        for (int64_t k = 0; k < g.kernel[d]; ++k) {
            const int64_t i = pos[d] * g.stride[d] - g.pad[d] + k * g.dilation[d];
            if (i >= -g.pad[d] && i < g.in[d] + g.pad_end[d]) ++inside;
        }
        count *= inside;
    }
    return count;
}

template <bool Max>
void pool_rows(const Window3& g, bool include_pad, const float* x, float* y, int64_t planes) {
    int64_t lo, hi;
    interior(g.in[2], g.out[2], g.kernel[2], g.stride[2], g.dilation[2], g.pad[2], &lo, &hi);
    const BlockFn<Max> fn = block_for<Max>(g.stride[2]);
    const int64_t rows_per_plane = g.out[0] * g.out[1];
    const int64_t taps_per_row = std::max<int64_t>(1, g.out[2] * g.kernel_size());
    const int64_t grain = std::max<int64_t>(1, kTapsPerChunk / taps_per_row);
    const size_t max_rows = static_cast<size_t>(g.kernel[0] * g.kernel[1]);
    parallel_for(planes * rows_per_plane, grain, [&](int64_t first, int64_t last) {
        std::vector<const float*> rows(max_rows);
        for (int64_t item = first; item < last; ++item) {
            const int64_t plane = item / rows_per_plane, row = item % rows_per_plane;
            const int64_t oz = row / g.out[1], oy = row % g.out[1];
            const float* in = x + plane * g.in_size();
            float* out = y + plane * g.out_size() + row * g.out[2];
            const int n = window_rows(g, in, oz, oy, rows.data());
            const int64_t count_without_x = include_pad ? padded_rows(g, oz, oy) : n;
            int64_t ox = 0;
            const auto edge_until = [&](int64_t end) {
                for (; ox < end; ++ox) out[ox] = one_output<Max>(g, include_pad, rows.data(), n, count_without_x, ox);
            };
            if (n > 0) {
                edge_until(lo);
                // Interior outputs: every x tap inside, so the divisor is the row's.
                const int64_t count = include_pad ? count_without_x * g.kernel[2] : int64_t{n} * g.kernel[2];
                const float divisor = static_cast<float>(count);
                for (; ox + kBlock <= hi; ox += kBlock) {
                    fn(rows.data(), n, g.kernel[2], g.dilation[2], g.stride[2], ox * g.stride[2] - g.pad[2], out + ox);
                    if (!Max)
                        for (int j = 0; j < kBlock; ++j) out[ox + j] = out[ox + j] / divisor;
                }
            }
            edge_until(g.out[2]);
        }
    });
}

}  // namespace

void average_pool_f32(const Window3& g, bool include_pad, const float* x, float* y, int64_t planes) {
    pool_rows<false>(g, include_pad, x, y, planes);
}

void max_pool_f32(const Window3& g, const float* x, float* y, int64_t planes) { pool_rows<true>(g, false, x, y, planes); }

namespace {

RKNN_HOT_LOOP_WIDE double plane_sum(const float* x, int64_t n) {
    double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(x[i + j]);
    for (int j = 0; i < n; ++i, ++j) part[j] += static_cast<double>(x[i]);
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

RKNN_HOT_LOOP_WIDE float plane_max(const float* x, int64_t n) {
    float lane[kBlock];
    for (float& v : lane) v = std::numeric_limits<float>::lowest();
    int64_t i = 0;
    for (; i + kBlock <= n; i += kBlock)
        for (int j = 0; j < kBlock; ++j) lane[j] = lane[j] < x[i + j] ? x[i + j] : lane[j];
    for (int j = 0; i < n; ++i, ++j) lane[j] = lane[j] < x[i] ? x[i] : lane[j];
    float best = std::numeric_limits<float>::lowest();
    for (float v : lane) best = best < v ? v : best;
    return best;
}

template <typename F>
void over_planes(int64_t planes, int64_t size, F f) {
    const int64_t grain = std::max<int64_t>(1, kTapsPerChunk / std::max<int64_t>(1, size));
    parallel_for(planes, grain, [&](int64_t first, int64_t last) {
        for (int64_t p = first; p < last; ++p) f(p);
    });
}

}  // namespace

void global_average_pool_f32(const float* x, float* y, int64_t planes, int64_t size) {
    over_planes(planes, size, [&](int64_t p) {
        y[p] = size > 0 ? static_cast<float>(plane_sum(x + p * size, size) / static_cast<double>(size)) : 0.0f;
    });
}

void global_max_pool_f32(const float* x, float* y, int64_t planes, int64_t size) {
    over_planes(planes, size, [&](int64_t p) { y[p] = plane_max(x + p * size, size); });
}

}  // namespace rknn::cpu::kernels
