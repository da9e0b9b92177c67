// Compiled with -ffp-contract=fast (src/CMakeLists.txt): the products are of
// fp16 values, exact in fp32, so a fused multiply-add gives the float that
// the separate multiply and add give.
#include "emulator/depthwise_fp16.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/half.h"
#include "base/parallel.h"
#include "base/uninit_vector.h"

namespace rknn::emulator {

namespace {

constexpr int kLanes = 8;   // fp16 channels per 16-byte atom
constexpr int kPixels = 8;  // output pixels whose sums stay in registers across the taps
constexpr int64_t kSinkPixels = 256;  // output pixels per band handed to the sink

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define RKNN_DEPTHWISE_F16_LOOP __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RKNN_DEPTHWISE_F16_LOOP
#endif

// One surface's rows of the padded input as fp32, [row][x][lane], `pitch`
// floats a row; columns beyond the padded width (read by the last pixel
// block, whose extra outputs are dropped) hold the pad value too.
struct SurfaceRows {
    const float* data = nullptr;
    size_t pitch = 0;
    int first_row = 0;  // padded row of data's row 0
};

uint64_t surface_row_offset(const ConvDesc& d, int surface, int iy) {
    return static_cast<uint64_t>(surface) * d.surf_stride + static_cast<uint64_t>(iy) * d.row_stride;
}

// Padded rows [y0, y1) of a surface into `out` (pitch floats a row).
void widen_rows(const ConvDesc& d, const uint8_t* in, int surface, int y0, int y1, float pad, size_t pitch,
                float* out) {
    const size_t left = static_cast<size_t>(d.pad_left) * kLanes;
    const size_t inside = static_cast<size_t>(d.in_w) * kLanes;
    for (int y = y0; y < y1; ++y) {
        float* row = out + static_cast<size_t>(y - y0) * pitch;
        const int iy = y - d.pad_top;
        if (iy < 0 || iy >= d.in_h) {
            std::fill(row, row + pitch, pad);
            continue;
        }
        std::fill(row, row + left, pad);
        halves_to_floats(in + surface_row_offset(d, surface, iy), row + left, inside);
        std::fill(row + left + inside, row + pitch, pad);
    }
}

// Output rows [oy0, oy1) of one surface: each block of kPixels outputs sums
// the taps in window order (the first product, then each added), then its
// `lanes` channels are stored at out (+ pixel * out_step).
template <int kStride>
__attribute__((always_inline)) inline void surface_rows(const ConvDesc& d, const SurfaceRows& rows,
                                                        const int64_t* tap_at, const float* weights, int taps, int oy0,
                                                        int oy1, int lanes, float* out, size_t out_step) {
    const int sx = kStride > 0 ? kStride : d.stride_x;
    for (int oy = oy0; oy < oy1; ++oy) {
        const float* line = rows.data + static_cast<size_t>(oy * d.stride_y - rows.first_row) * rows.pitch;
        float* out_row = out + static_cast<size_t>(oy) * d.out_w * out_step;
        for (int ox0 = 0; ox0 < d.out_w; ox0 += kPixels) {
            const float* block = line + static_cast<size_t>(ox0) * sx * kLanes;
            float acc[kPixels * kLanes];
            for (int p = 0; p < kPixels; ++p)
                for (int l = 0; l < kLanes; ++l) acc[p * kLanes + l] = block[p * sx * kLanes + l] * weights[l];
            for (int t = 1; t < taps; ++t) {
                const float* px = block + tap_at[t];
                const float* w = weights + static_cast<size_t>(t) * kLanes;
                for (int p = 0; p < kPixels; ++p)
                    for (int l = 0; l < kLanes; ++l) acc[p * kLanes + l] += px[p * sx * kLanes + l] * w[l];
            }
            const int n = std::min(kPixels, d.out_w - ox0);
            float* dst = out_row + static_cast<size_t>(ox0) * out_step;
            if (lanes == kLanes) {
                for (int p = 0; p < n; ++p) std::memcpy(dst + p * out_step, acc + p * kLanes, kLanes * sizeof(float));
            } else {
                for (int p = 0; p < n; ++p) std::memcpy(dst + p * out_step, acc + p * kLanes, lanes * sizeof(float));
            }
        }
    }
}

RKNN_DEPTHWISE_F16_LOOP void surface_rows_stride1(const ConvDesc& d, const SurfaceRows& rows, const int64_t* tap_at,
                                                  const float* weights, int taps, int oy0, int oy1, int lanes, float* out,
                                                  size_t out_step) {
    surface_rows<1>(d, rows, tap_at, weights, taps, oy0, oy1, lanes, out, out_step);
}

RKNN_DEPTHWISE_F16_LOOP void surface_rows_stride2(const ConvDesc& d, const SurfaceRows& rows, const int64_t* tap_at,
                                                  const float* weights, int taps, int oy0, int oy1, int lanes, float* out,
                                                  size_t out_step) {
    surface_rows<2>(d, rows, tap_at, weights, taps, oy0, oy1, lanes, out, out_step);
}

RKNN_DEPTHWISE_F16_LOOP void surface_rows_any(const ConvDesc& d, const SurfaceRows& rows, const int64_t* tap_at,
                                              const float* weights, int taps, int oy0, int oy1, int lanes, float* out,
                                              size_t out_step) {
    surface_rows<0>(d, rows, tap_at, weights, taps, oy0, oy1, lanes, out, out_step);
}

#undef RKNN_DEPTHWISE_F16_LOOP

// What every band and surface of a task shares.
struct Task {
    const ConvDesc& d;
    const uint8_t* in;
    ConvOutput* out;
    float pad = 0.0f;
    int surfaces = 0, taps = 0;
    size_t pitch = 0;            // floats per widened row
    std::vector<float> weights;  // [surface][tap][lane], zero beyond in_c
    std::vector<int64_t> tap_at;  // each tap's offset in the widened rows

    // Output rows [oy0, oy1) of surface s, widening the rows they read.
    void run(int s, int oy0, int oy1, UninitVector<float>* rows_buffer) const {
        const int first = oy0 * d.stride_y;
        const int last = (oy1 - 1) * d.stride_y + d.kh;  // padded rows [first, last)
        rows_buffer->resize(static_cast<size_t>(last - first) * pitch);
        widen_rows(d, in, s, first, last, pad, pitch, rows_buffer->data());
        const SurfaceRows rows{rows_buffer->data(), pitch, first};
        const int c0 = s * kLanes;
        const int lanes = std::min(kLanes, out->channels - c0);
        const float* w = weights.data() + static_cast<size_t>(s) * taps * kLanes;
        float* acc = out->facc.data() + c0;
        const auto step = static_cast<size_t>(out->channels);
        switch (d.stride_x) {
        case 1: surface_rows_stride1(d, rows, tap_at.data(), w, taps, oy0, oy1, lanes, acc, step); break;
        case 2: surface_rows_stride2(d, rows, tap_at.data(), w, taps, oy0, oy1, lanes, acc, step); break;
        default: surface_rows_any(d, rows, tap_at.data(), w, taps, oy0, oy1, lanes, acc, step); break;
        }
    }
};

}  // namespace

bool depthwise_fp16_cube_fits(const ConvDesc& d) {
    return d.fp16 && d.depthwise && !d.channel_packed && d.esize == 2 && d.atom_bytes == 2 * kLanes;
}

void depthwise_fp16_from_cube(const ConvDesc& d, const uint8_t* in, const float* weights, ConvOutput* out,
                              ConvRowSink* sink) {
    Task task{d, in, out, 0.0f, 0, 0, 0, {}, {}};
    task.pad = half_to_float(static_cast<uint16_t>(d.pad_value & 0xffff));
    task.surfaces = (out->channels + kLanes - 1) / kLanes;
    task.taps = d.kh * d.kw;
    const int blocks = (d.out_w + kPixels - 1) / kPixels;
    const int padded_w = d.in_w + d.pad_left + d.pad_right;
    const int read_w = std::max(padded_w, (blocks * kPixels - 1) * d.stride_x + d.kw);
    task.pitch = static_cast<size_t>(read_w) * kLanes;
    task.weights.assign(static_cast<size_t>(task.surfaces) * task.taps * kLanes, 0.0f);
    for (int s = 0; s < task.surfaces; ++s)
        for (int t = 0; t < task.taps; ++t)
            for (int l = 0; l < kLanes && s * kLanes + l < d.in_c; ++l)
                task.weights[(static_cast<size_t>(s) * task.taps + t) * kLanes + l] =
                    weights[static_cast<size_t>(t) * d.in_c + s * kLanes + l];
    task.tap_at.resize(static_cast<size_t>(task.taps));
    for (int ky = 0; ky < d.kh; ++ky)
        for (int kx = 0; kx < d.kw; ++kx)
            task.tap_at[static_cast<size_t>(ky) * d.kw + kx] =
                static_cast<int64_t>(ky) * static_cast<int64_t>(task.pitch) + static_cast<int64_t>(kx) * kLanes;

    const uint64_t macs = static_cast<uint64_t>(d.out_w) * d.out_h * task.taps * static_cast<uint64_t>(out->channels);
    const bool parallel = macs >= kParallelMacs / 8 && host_threads() > 1;
    // Enough rows for every thread: bands of rows, all surfaces, handed to
    // the sink while their sums are in cache. Otherwise a surface per item
    // (all its rows), the sink left to run over the whole output afterwards.
    const int threads = host_threads();
    if (sink != nullptr && (!parallel || d.out_h >= 2 * threads)) {
        const int row_band = std::clamp(static_cast<int>(kSinkPixels / std::max(1, d.out_w)), 1,
                                        parallel ? std::max(1, d.out_h / (2 * threads)) : d.out_h);
        parallel_for(d.out_h, parallel ? row_band : d.out_h, [&](int64_t first_row, int64_t last_row) {
            thread_local UninitVector<float> rows;
            for (int64_t y0 = first_row; y0 < last_row; y0 += row_band) {
                const int64_t y1 = std::min<int64_t>(last_row, y0 + row_band);
                for (int s = 0; s < task.surfaces; ++s) task.run(s, static_cast<int>(y0), static_cast<int>(y1), &rows);
                sink->rows(static_cast<int>(y0), static_cast<int>(y1));
            }
        });
        out->rows_delivered = true;
        return;
    }
    parallel_for(task.surfaces, parallel ? 1 : task.surfaces, [&](int64_t s0, int64_t s1) {
        thread_local UninitVector<float> rows;
        for (int64_t s = s0; s < s1; ++s) task.run(static_cast<int>(s), 0, d.out_h, &rows);
    });
    out->rows_delivered = false;
}

}  // namespace rknn::emulator
