#include "emulator/conv_cube.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "base/parallel.h"
#include "base/sign_bits.h"
#include "emulator/kernels/depthwise_s8.h"

namespace rknn::emulator {

namespace {

constexpr int kRowsPerShare = 256;  // GEMM rows per host-thread share
constexpr size_t kParallelCopyBytes = size_t{1} << 16;
constexpr int kItemsPerThread = 8;  // work items per host thread where a task is cut two ways
constexpr int kGemmTileRows = 8;    // rows of the GEMM's register tile: row groups are whole tiles

std::atomic<bool> tap_groups_enabled{true};

// Output rows per band: bands of about kRowsPerShare pixels, as many as a
// multiple of the host threads (at most one per row), so that the last
// round of bands does not leave a thread idle.
int balanced_band(const ConvDesc& d) {
    const int threads = host_threads();
    const int64_t pixels = static_cast<int64_t>(d.out_w) * d.out_h;
    int64_t bands = (pixels + kRowsPerShare - 1) / kRowsPerShare;
    bands = std::min<int64_t>((bands + threads - 1) / threads * threads, d.out_h);
    return static_cast<int>((d.out_h + bands - 1) / std::max<int64_t>(1, bands));
}

// Where the windows are read: pixel (0, 0) of surface 0, padding included.
struct CubeView {
    const uint8_t* base = nullptr;
    uint64_t row_stride = 0;
    uint64_t surf_stride = 0;
    uint64_t atom = 0;
};

bool pads(const ConvDesc& d) { return d.pad_top || d.pad_left || d.pad_bottom || d.pad_right; }

// The strides the windows are read with (no base yet): the cube's own, or a
// padded copy's.
CubeView view_geometry(const ConvDesc& d) {
    const auto atom = static_cast<uint64_t>(d.atom_bytes);
    if (!pads(d)) return {nullptr, d.row_stride, d.surf_stride, atom};
    const uint64_t row = static_cast<uint64_t>(d.in_w + d.pad_left + d.pad_right) * atom;
    return {nullptr, row, static_cast<uint64_t>(d.in_h + d.pad_top + d.pad_bottom) * row, atom};
}

// The input as the datapaths read it: the cube itself, or (when the task
// pads) a copy with pad atoms around each surface, in `buffer`.
CubeView view_input(const ConvDesc& d, const uint8_t* in, UninitVector<uint8_t>* buffer) {
    CubeView v = view_geometry(d);
    if (!pads(d)) {
        v.base = in;
        return v;
    }
    const uint64_t atom = v.atom;
    const int width = d.in_w + d.pad_left + d.pad_right, height = d.in_h + d.pad_top + d.pad_bottom;
    const int surfaces = d.in_c / d.atom_bytes;
    buffer->resize(static_cast<size_t>(v.surf_stride) * static_cast<size_t>(surfaces));
    uint8_t* out = buffer->data();
    const int64_t rows = static_cast<int64_t>(surfaces) * height;
    parallel_for(rows, buffer->size() >= kParallelCopyBytes ? 1 : rows, [&](int64_t first, int64_t last) {
        uint8_t pad[kAtomBytes];
        int pad_surface = -1;
        for (int64_t i = first; i < last; ++i) {
            const int s = static_cast<int>(i / height), y = static_cast<int>(i % height);
            if (s != pad_surface) {
                for (int l = 0; l < d.atom_bytes; ++l)
                    pad[l] = static_cast<uint8_t>(int8_pad_for_channel(d, s * d.atom_bytes + l));
                pad_surface = s;
            }
            uint8_t* row = out + static_cast<size_t>(s) * v.surf_stride + static_cast<size_t>(y) * v.row_stride;
            const int iy = y - d.pad_top;
            const bool inside = iy >= 0 && iy < d.in_h;
            for (int x = 0; x < width; ++x) {
                if (!inside || x < d.pad_left || x >= d.pad_left + d.in_w) std::memcpy(row + x * atom, pad, atom);
            }
            if (inside) {
                const uint8_t* src = in + static_cast<uint64_t>(s) * d.surf_stride + static_cast<uint64_t>(iy) * d.row_stride;
                std::memcpy(row + static_cast<size_t>(d.pad_left) * atom, src, static_cast<size_t>(d.in_w) * atom);
            }
        }
    });
    v.base = out;
    return v;
}

// The offset of every group of 4 k values in a window, k = (ky kw + kx) in_c + c.
void window_offsets(const ConvDesc& d, const CubeView& v, std::vector<uint32_t>* offsets) {
    offsets->clear();
    for (int ky = 0; ky < d.kh; ++ky)
        for (int kx = 0; kx < d.kw; ++kx)
            for (int c = 0; c < d.in_c; c += PackedWeightsS8::kDepthGroup) {
                const uint64_t at = static_cast<uint64_t>(ky) * v.row_stride + static_cast<uint64_t>(kx) * v.atom +
                                    static_cast<uint64_t>(c / d.atom_bytes) * v.surf_stride +
                                    static_cast<uint64_t>(c % d.atom_bytes);
                offsets->push_back(static_cast<uint32_t>(at));
            }
}

// The GEMM over every output pixel, whose window starts at base + oy sy
// row_stride + ox sx pixel_step (s->offsets set), in bands of whole rows that
// go to the sink once done.
void gemm_over_windows(const ConvDesc& d, const uint8_t* base, uint64_t row_stride, uint64_t pixel_step, uint8_t flip,
                       const PackedWeightsS8& weights, ConvScratch* s, ConvOutput* out, ConvRowSink* sink) {
    const int pixels = d.out_w * d.out_h;
    s->rows.resize(static_cast<size_t>(pixels));
    for (int oy = 0, p = 0; oy < d.out_h; ++oy)
        for (int ox = 0; ox < d.out_w; ++ox, ++p)
            s->rows[static_cast<size_t>(p)] = base + static_cast<uint64_t>(oy) * d.stride_y * row_stride +
                                              static_cast<uint64_t>(ox) * d.stride_x * pixel_step;
    GemmRows a;
    a.offsets = s->offsets.data();
    a.flip = flip;
    const size_t ldc = static_cast<size_t>(out->channels);
    const uint64_t macs = static_cast<uint64_t>(pixels) * static_cast<uint64_t>(weights.k) * ldc;
    const bool parallel = macs >= kParallelMacs && host_threads() > 1;
    const int block_pairs = weights.n_blocks / 2;
    if (parallel && pixels < kRowsPerShare * host_threads() && block_pairs > 1) {
        // Few pixels (the deep layers): share out pairs of column blocks,
        // each cut into a few groups of rows when there are too few pairs to
        // keep every thread busy to the end. A thread's items run along one
        // pair's row groups, so its weights stay in cache.
        const int tiles = (pixels + kGemmTileRows - 1) / kGemmTileRows;
        const int want_groups = (kItemsPerThread * host_threads() + block_pairs - 1) / block_pairs;
        const int groups = std::clamp(want_groups, 1, tiles);
        const int group_rows = (tiles + groups - 1) / groups * kGemmTileRows;
        parallel_for(static_cast<int64_t>(block_pairs) * groups, 1, [&](int64_t first, int64_t last) {
            for (int64_t item = first; item < last; ++item) {
                const int pair = static_cast<int>(item / groups), r0 = static_cast<int>(item % groups) * group_rows;
                if (r0 >= pixels) continue;
                GemmRows share = a;
                share.rows = s->rows.data() + r0;
                gemm_u8s8_rows(std::min(group_rows, pixels - r0), share, weights, 2 * pair, 2 * pair + 2,
                               out->acc.data() + static_cast<size_t>(r0) * ldc, ldc);
            }
        });
        if (sink != nullptr) {
            parallel_for(d.out_h, 1, [&](int64_t y0, int64_t y1) {
                sink->rows(static_cast<int>(y0), static_cast<int>(y1));
            });
            out->rows_delivered = true;
        }
        return;
    }
    // Bands of whole output rows, about kRowsPerShare pixels each: the sink
    // takes each band while its accumulators are in cache.
    const int band = parallel ? balanced_band(d) : d.out_h;
    parallel_for(d.out_h, band, [&](int64_t first_row, int64_t last_row) {
        for (int64_t y0 = first_row; y0 < last_row; y0 += band) {
            const int64_t y1 = std::min<int64_t>(last_row, y0 + band);
            const int64_t first = y0 * d.out_w, count = (y1 - y0) * d.out_w;
            GemmRows share = a;
            share.rows = s->rows.data() + first;
            gemm_u8s8_rows(static_cast<int>(count), share, weights, 0, weights.n_blocks,
                           out->acc.data() + static_cast<size_t>(first) * ldc, ldc);
            if (sink != nullptr) sink->rows(static_cast<int>(y0), static_cast<int>(y1));
        }
    });
    out->rows_delivered = sink != nullptr;
}

// The padded copy of a channel-packed image: in_c_real bytes per pixel biased
// by +128, rows back to back, then 4 spare bytes (the last window's rows are
// read up to 3 bytes past their end, where the weights are 0).
void build_packed_image(const ConvDesc& d, const uint8_t* in, UninitVector<uint8_t>* buffer, uint64_t* row_bytes) {
    const int cr = d.in_c_real, width = d.in_w + d.pad_left + d.pad_right, height = d.in_h + d.pad_top + d.pad_bottom;
    *row_bytes = static_cast<uint64_t>(width) * cr;
    buffer->resize(static_cast<size_t>(*row_bytes) * height + 4);
    uint8_t pad[4];
    for (int c = 0; c < cr; ++c) pad[c] = static_cast<uint8_t>(int8_pad_for_channel(d, c) + 128);
    uint8_t* out = buffer->data();
    std::memset(out + static_cast<size_t>(*row_bytes) * height, 128, 4);
    const uint64_t row = *row_bytes;
    // A converting task: each lane's biased results in a table. The RK356x
    // ARGB converter (x - 128 of unsigned bytes) gives the bytes themselves.
    uint8_t converted[4][256];
    bool unchanged = !d.cvt_identity;
    if (!d.cvt_identity) {
        for (int c = 0; c < cr; ++c)
            for (int v = 0; v < 256; ++v) {
                converted[c][v] = static_cast<uint8_t>(convert_input(d, c, static_cast<uint8_t>(v)) + 128);
                unchanged = unchanged && converted[c][v] == v;
            }
    }
    parallel_for(height, buffer->size() >= kParallelCopyBytes ? 1 : height, [&](int64_t y0, int64_t y1) {
        for (int64_t y = y0; y < y1; ++y) {
            uint8_t* dst = out + static_cast<size_t>(y) * row;
            const int64_t iy = y - d.pad_top;
            const bool inside = iy >= 0 && iy < d.in_h;
            for (int x = 0; x < width; ++x) {
                if (!inside || x < d.pad_left || x >= d.pad_left + d.in_w) std::memcpy(dst + x * cr, pad, static_cast<size_t>(cr));
            }
            if (!inside) continue;
            const uint8_t* src = in + static_cast<uint64_t>(iy) * d.row_stride;
            uint8_t* first = dst + static_cast<size_t>(d.pad_left) * cr;
            const int bytes = d.in_w * cr;
            if (d.cvt_identity) {
                copy_sign_flipped(first, src, static_cast<size_t>(bytes));
            } else if (unchanged) {
                std::memcpy(first, src, static_cast<size_t>(bytes));
            } else {
                for (int i = 0; i < bytes; i += cr)
                    for (int c = 0; c < cr; ++c) first[i + c] = converted[c][src[i + c]];
            }
        }
    });
}

// Bytes of one kernel row of a packed image's window, rounded up to 4.
int packed_row_k(const ConvDesc& d) { return (d.kw * d.in_c_real + 3) & ~3; }

}  // namespace

void direct_int8_from_cube(const ConvDesc& d, const uint8_t* in, const DirectWeightsS8& weights, ConvScratch* s,
                           ConvOutput* out, ConvRowSink* sink) {
    const CubeView v = view_input(d, in, &s->image);
    window_offsets(d, v, &s->offsets);
    if (!weights.columns.empty()) {  // only the groups kept
        for (size_t j = 0; j < weights.columns.size(); ++j) s->offsets[j] = s->offsets[weights.columns[j]];
        s->offsets.resize(weights.columns.size());
    }
    gemm_over_windows(d, v.base, v.row_stride, v.atom, 0x80, weights.gemm, s, out, sink);  // the cube holds int8 values
}

bool packed_image_fits(const ConvDesc& d) {
    if (d.fp16 || d.in_c_real < 1 || d.in_c_real > 4 || d.in_c_real > d.in_c) return false;
    const uint64_t width = static_cast<uint64_t>(d.in_w + d.pad_left + d.pad_right);
    const uint64_t height = static_cast<uint64_t>(d.in_h + d.pad_top + d.pad_bottom);
    return width * height * static_cast<uint64_t>(d.in_c_real) + 4 < (uint64_t{1} << 32);
}

bool pack_packed_image_weights(const ConvDesc& d, const std::vector<int8_t>& weights, int kernels,
                               PackedWeightsS8* out) {
    const int cr = d.in_c_real, row_k = packed_row_k(d), k = d.kh * row_k;
    const size_t window = static_cast<size_t>(d.kh) * d.kw * d.in_c;
    std::vector<int8_t> rows(static_cast<size_t>(kernels) * k, 0);
    for (int o = 0; o < kernels; ++o) {
        const int8_t* w = weights.data() + static_cast<size_t>(o) * window;
        for (int ky = 0; ky < d.kh; ++ky)
            for (int kx = 0; kx < d.kw; ++kx)
                for (int c = 0; c < d.in_c; ++c) {
                    const int8_t v = w[(static_cast<size_t>(ky) * d.kw + kx) * d.in_c + c];
                    if (c >= cr) {
                        if (v != 0) return false;
                        continue;
                    }
                    rows[static_cast<size_t>(o) * k + static_cast<size_t>(ky) * row_k + kx * cr + c] = v;
                }
    }
    pack_weights(rows.data(), kernels, k, static_cast<size_t>(k), out);
    return true;
}

void direct_int8_from_packed_image(const ConvDesc& d, const uint8_t* in, const PackedWeightsS8& weights,
                                   ConvScratch* s, ConvOutput* out, ConvRowSink* sink) {
    uint64_t row_bytes = 0;
    build_packed_image(d, in, &s->image, &row_bytes);
    const int row_k = packed_row_k(d);
    s->offsets.clear();
    for (int ky = 0; ky < d.kh; ++ky)
        for (int j = 0; j < row_k; j += PackedWeightsS8::kDepthGroup)
            s->offsets.push_back(static_cast<uint32_t>(static_cast<uint64_t>(ky) * row_bytes + static_cast<uint64_t>(j)));
    gemm_over_windows(d, s->image.data(), row_bytes, static_cast<uint64_t>(d.in_c_real), 0, weights, s, out, sink);
}

namespace {

// Whether the tap-group kernel can take a depthwise task's window here.
bool tap_groups_run(const ConvDesc& d) {
    return depthwise_band_s8_available() && d.atom_bytes == 16 && d.kh <= kDepthwiseBandMaxKernel &&
           d.kw <= kDepthwiseBandMaxKernel;
}

}  // namespace

void widen_depthwise_weights(const ConvDesc& d, const int8_t* weights, int channels, DepthwiseWeightsS8* out) {
    const int c2 = d.atom_bytes, taps = d.kh * d.kw;
    const int surfaces = (channels + c2 - 1) / c2;
    std::vector<int32_t>& widened = out->widened;
    widened.assign(static_cast<size_t>(surfaces) * taps * c2, 0);
    for (int sf = 0; sf < surfaces; ++sf)
        for (int t = 0; t < taps; ++t)
            for (int l = 0; l < c2 && sf * c2 + l < d.in_c; ++l)
                widened[(static_cast<size_t>(sf) * taps + t) * c2 + l] = weights[static_cast<size_t>(t) * d.in_c + sf * c2 + l];
    out->tap_groups.clear();
    if (!tap_groups_run(d)) return;
    const size_t words = depthwise_band_weight_words(d.kh, d.kw);
    out->tap_groups.resize(static_cast<size_t>(surfaces) * words);
    for (int sf = 0; sf < surfaces; ++sf)
        pack_depthwise_band_weights(widened.data() + static_cast<size_t>(sf) * taps * c2, d.kh, d.kw,
                                    out->tap_groups.data() + static_cast<size_t>(sf) * words);
}

void set_depthwise_tap_groups(bool enabled) { tap_groups_enabled.store(enabled, std::memory_order_relaxed); }

void depthwise_int8_from_cube(const ConvDesc& d, const uint8_t* in, const DepthwiseWeightsS8& weights, ConvScratch* s,
                              ConvOutput* out, ConvRowSink* sink) {
    const bool tap_groups = tap_groups_enabled.load(std::memory_order_relaxed) && !weights.tap_groups.empty();
    const int32_t* widened = weights.widened.data();
    const size_t band_words = depthwise_band_weight_words(d.kh, d.kw);
    // The tap-group kernel reads the cube in place, padding included; the
    // other form reads the cube, or a padded copy of it.
    const CubeView v = tap_groups ? CubeView{} : view_input(d, in, &s->image);
    const int c2 = d.atom_bytes, taps = d.kh * d.kw, ch = out->channels;
    const int surfaces = (ch + c2 - 1) / c2, in_surfaces = d.in_c / c2;
    s->tap_offsets.clear();
    for (int ky = 0; ky < d.kh && !tap_groups; ++ky)
        for (int kx = 0; kx < d.kw; ++kx)
            s->tap_offsets.push_back(static_cast<int64_t>(ky * v.row_stride + kx * v.atom));
    const uint64_t macs = static_cast<uint64_t>(d.out_w) * d.out_h * taps * static_cast<uint64_t>(ch);
    // The tap-group kernel's fields every surface shares, and each surface's
    // pad atom, set once per task.
    DepthwiseBand shared;
    if (tap_groups) {
        s->pad_atoms.resize(static_cast<size_t>(in_surfaces) * kAtomBytes);
        for (size_t c = 0; c < s->pad_atoms.size(); ++c)
            s->pad_atoms[c] = static_cast<uint8_t>(int8_pad_for_channel(d, static_cast<int>(c)));
        shared.row_bytes = static_cast<size_t>(d.row_stride);
        shared.in_w = d.in_w;
        shared.in_h = d.in_h;
        shared.pad_top = d.pad_top;
        shared.pad_left = d.pad_left;
        shared.kh = d.kh;
        shared.kw = d.kw;
        shared.stride_x = d.stride_x;
        shared.stride_y = d.stride_y;
        shared.out_w = d.out_w;
        shared.out_pixel_stride = static_cast<size_t>(ch);
        shared.out_row_stride = static_cast<size_t>(d.out_w) * ch;
    }
    // Output rows [y0, y1) of surfaces [s0, s1).
    const auto surface_rows = [&](int s0, int s1, int64_t y0, int64_t y1) {
        for (int sf = s0; sf < s1; ++sf) {
            const int lanes = std::min(c2, ch - sf * c2);
            int32_t* corner = out->acc.data() + static_cast<size_t>(y0) * d.out_w * ch + static_cast<size_t>(sf) * c2;
            if (sf >= in_surfaces) {  // RK356x groups announce 32 outputs for fewer inputs: the rest are 0
                for (int64_t oy = y0; oy < y1; ++oy)
                    for (int x = 0; x < d.out_w; ++x)
                        std::fill_n(corner + static_cast<size_t>((oy - y0) * d.out_w + x) * ch, lanes, 0);
                continue;
            }
            if (tap_groups) {
                DepthwiseBand band = shared;
                band.surface = in + static_cast<uint64_t>(sf) * d.surf_stride;
                band.pad = s->pad_atoms.data() + static_cast<size_t>(sf) * kAtomBytes;
                band.weights = weights.tap_groups.data() + static_cast<size_t>(sf) * band_words;
                band.y0 = static_cast<int>(y0);
                band.y1 = static_cast<int>(y1);
                band.out = corner;
                band.store_lanes = lanes;
                depthwise_band_s8(band);
                continue;
            }
            for (int64_t oy = y0; oy < y1; ++oy) {
                DepthwiseRow row;
                row.origin = v.base + sf * v.surf_stride + static_cast<uint64_t>(oy) * d.stride_y * v.row_stride;
                row.tap_offsets = s->tap_offsets.data();
                row.taps = taps;
                row.step = static_cast<int64_t>(d.stride_x * v.atom);
                row.weights = widened + static_cast<size_t>(sf) * taps * c2;
                row.lanes = c2;
                row.width = d.out_w;
                row.out = corner + static_cast<size_t>(oy - y0) * d.out_w * ch;
                row.out_stride = static_cast<size_t>(ch);
                row.store_lanes = lanes;
                depthwise_row_s8(row);
            }
        }
    };
    const bool parallel = macs >= kParallelMacs / 8 && host_threads() > 1;
    const int threads = host_threads();
    if (parallel && d.out_h < kItemsPerThread * threads && surfaces > 1) {
        // Too few rows to share out evenly (the deep layers): items of one
        // row of a few surfaces each, then the sink over the rows.
        const int want_parts = (kItemsPerThread * threads + d.out_h - 1) / d.out_h;
        const int parts = std::clamp(want_parts, 1, surfaces);
        const int part_surfaces = (surfaces + parts - 1) / parts;
        parallel_for(static_cast<int64_t>(d.out_h) * parts, 1, [&](int64_t first, int64_t last) {
            for (int64_t item = first; item < last; ++item) {
                const int s0 = static_cast<int>(item % parts) * part_surfaces;
                const int64_t y = item / parts;
                surface_rows(s0, std::min(surfaces, s0 + part_surfaces), y, y + 1);
            }
        });
        if (sink != nullptr) {
            parallel_for(d.out_h, 1, [&](int64_t y0, int64_t y1) { sink->rows(static_cast<int>(y0), static_cast<int>(y1)); });
        }
        out->rows_delivered = sink != nullptr;
        return;
    }
    // Bands of whole output rows, about kRowsPerShare pixels each (as many as
    // a multiple of the threads), each handed to the sink once done; smaller
    // maps go a row at a time, so that the threads finish together.
    const int band = parallel ? (d.out_h < 2 * kItemsPerThread * threads ? 1 : balanced_band(d)) : d.out_h;
    parallel_for(d.out_h, band, [&](int64_t first_row, int64_t last_row) {
        for (int64_t y0 = first_row; y0 < last_row; y0 += band) {
            const int64_t y1 = std::min<int64_t>(last_row, y0 + band);
            surface_rows(0, surfaces, y0, y1);
            if (sink != nullptr) sink->rows(static_cast<int>(y0), static_cast<int>(y1));
        }
    });
    out->rows_delivered = sink != nullptr;
}

bool cube_offsets_fit(const ConvDesc& d) {
    if (!int8_input_as_stored(d) || (d.atom_bytes != 8 && d.atom_bytes != kAtomBytes)) return false;
    const CubeView v = view_geometry(d);
    const uint64_t last = static_cast<uint64_t>(d.kh - 1) * v.row_stride + static_cast<uint64_t>(d.kw - 1) * v.atom +
                          static_cast<uint64_t>(d.in_c / d.atom_bytes - 1) * v.surf_stride + v.atom;
    return last < (uint64_t{1} << 32);
}

}  // namespace rknn::emulator
