#include "runtime/cube_float.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/byte_transpose.h"
#include "base/half.h"
#include "base/parallel.h"
#include "cpu/convert.h"
#include "npu/prepared_op.h"

namespace rknn::runtime {

namespace {

constexpr uint64_t kAtomBytes = 16;

struct Layout {
    size_t channels = 0, plane = 0, lanes = 0;  // lanes: channels per atom
    uint64_t surface = 0, bytes = 0;
};

bool layout_of(const graph::Tensor& t, Layout* l) {
    npu::CubeShape cube;
    if (t.shape.size() != 4 || t.shape[0] != 1 || !npu::cube_of_shape(t.shape, &cube)) return false;
    l->channels = static_cast<size_t>(cube.c);
    l->plane = static_cast<size_t>(cube.h) * static_cast<size_t>(cube.w);
    l->lanes = kAtomBytes / graph::dtype_size(t.dtype);
    l->surface = static_cast<uint64_t>(l->plane) * kAtomBytes;
    l->bytes = (l->channels + l->lanes - 1) / l->lanes * l->surface;
    return true;
}

// Channels per parallel_for grain: about 64 KiB of floats each.
int64_t channel_grain(size_t plane) { return std::max<int64_t>(1, static_cast<int64_t>(16384 / std::max<size_t>(plane, 1))); }

// int8 cubes move as blocks of 16 pixels x 16 channels (one surface's lanes),
// transposed in registers (base/byte_transpose.h); a work unit is one
// surface's run of kChunk pixels.
constexpr size_t kLanes8 = 16;
constexpr size_t kChunk = 512;

// Calls body(surface, first pixel, end pixel, real lanes) for every work
// unit, shared out over the host's threads.
template <typename Body>
void for_each_int8_unit(const Layout& l, Body&& body) {
    const size_t surfaces = (l.channels + kLanes8 - 1) / kLanes8, chunks = (l.plane + kChunk - 1) / kChunk;
    parallel_for(static_cast<int64_t>(surfaces * chunks), 1, [&](int64_t begin, int64_t end) {
        for (auto u = static_cast<size_t>(begin); u < static_cast<size_t>(end); ++u) {
            const size_t s = u / chunks, first = (u % chunks) * kChunk;
            body(s, first, std::min(l.plane, first + kChunk), std::min(kLanes8, l.channels - s * kLanes8));
        }
    });
}

void int8_cube_to_float32(const uint8_t* src, const Layout& l, int32_t zp, float scale, float* dst) {
    for_each_int8_unit(l, [&](size_t s, size_t first, size_t last, size_t lanes) {
        const uint8_t* surface = src + s * l.surface;
        float* out = dst + s * kLanes8 * l.plane;
        size_t p = first;
        for (; p + 16 <= last; p += 16) {
            Bytes16 rows[16];
            std::memcpy(rows, surface + p * kAtomBytes, sizeof(rows));
            transpose_16x16(rows);
            for (size_t lane = 0; lane < lanes; ++lane) widen_16_to_float(rows[lane], zp, scale, out + lane * l.plane + p);
        }
        for (; p < last; ++p)
            for (size_t lane = 0; lane < lanes; ++lane)
                out[lane * l.plane + p] = static_cast<float>(static_cast<int8_t>(surface[p * kAtomBytes + lane]) - zp) * scale;
    });
}

// Codes as [lane][pixel] rows (16 lanes, the padding ones zero) into the
// surface's atoms of pixels [0, n).
void codes_to_atoms(const int8_t (*codes)[kChunk], size_t n, uint8_t* surface) {
    size_t q = 0;
    for (; q + 16 <= n; q += 16) {
        Bytes16 rows[16];
        for (size_t lane = 0; lane < kLanes8; ++lane) std::memcpy(&rows[lane], &codes[lane][q], 16);
        transpose_16x16(rows);
        std::memcpy(surface + q * kAtomBytes, rows, sizeof(rows));
    }
    for (; q < n; ++q)
        for (size_t lane = 0; lane < kLanes8; ++lane) surface[q * kAtomBytes + lane] = static_cast<uint8_t>(codes[lane][q]);
}

void float32_to_int8_cube(const float* src, const Layout& l, double scale, double zp, uint8_t* dst) {
    for_each_int8_unit(l, [&](size_t s, size_t first, size_t last, size_t lanes) {
        alignas(16) int8_t codes[kLanes8][kChunk];
        const size_t n = last - first;
        for (size_t lane = 0; lane < kLanes8; ++lane) {
            if (lane < lanes)
                cpu::quantize_int8(src + (s * kLanes8 + lane) * l.plane + first, static_cast<int64_t>(n), scale, zp,
                                   codes[lane]);
            else
                std::memset(codes[lane], 0, n);  // the padding lanes of the last surface
        }
        codes_to_atoms(codes, n, dst + s * l.surface + first * kAtomBytes);
    });
}

// The cube's int8 codes into NCHW codes, 16 x 16 blocks at a time.
void int8_cube_to_codes(const uint8_t* src, const Layout& l, int8_t* dst) {
    for_each_int8_unit(l, [&](size_t s, size_t first, size_t last, size_t lanes) {
        const uint8_t* surface = src + s * l.surface;
        int8_t* out = dst + s * kLanes8 * l.plane;
        size_t p = first;
        for (; p + 16 <= last; p += 16) {
            Bytes16 rows[16];
            std::memcpy(rows, surface + p * kAtomBytes, sizeof(rows));
            transpose_16x16(rows);
            for (size_t lane = 0; lane < lanes; ++lane) std::memcpy(out + lane * l.plane + p, &rows[lane], 16);
        }
        for (; p < last; ++p)
            for (size_t lane = 0; lane < lanes; ++lane) out[lane * l.plane + p] = static_cast<int8_t>(surface[p * kAtomBytes + lane]);
    });
}

// NCHW codes into the cube, padding lanes zeroed.
void codes_to_int8_cube(const int8_t* src, const Layout& l, uint8_t* dst) {
    for_each_int8_unit(l, [&](size_t s, size_t first, size_t last, size_t lanes) {
        alignas(16) int8_t codes[kLanes8][kChunk];
        const size_t n = last - first;
        for (size_t lane = 0; lane < kLanes8; ++lane) {
            if (lane < lanes)
                std::memcpy(codes[lane], src + (s * kLanes8 + lane) * l.plane + first, n);
            else
                std::memset(codes[lane], 0, n);
        }
        codes_to_atoms(codes, n, dst + s * l.surface + first * kAtomBytes);
    });
}

// The float path's products equal the double arithmetic's only while
// code - zp stays an exact float (byte_transpose.h).
bool int8_fast_path(const graph::Tensor& t) {
    const int32_t zp = t.quant.zero_point(0);  // a range compare: std::abs(INT32_MIN) is undefined
    return zp >= -(1 << 20) && zp <= (1 << 20);
}

}  // namespace

bool cube_converts_to_float32(const graph::Tensor& t, const NativeForm& form, uint32_t packed_row_pixels) {
    Layout l;
    if (form.rk356x || packed_row_pixels > 0 || !layout_of(t, &l)) return false;
    if (t.dtype == graph::DType::kFloat16) return !t.quant.is_quantized();
    return t.dtype == graph::DType::kInt8 && t.quant.is_quantized() && !t.quant.per_channel() && t.quant.scale(0) > 0;
}

Status cube_to_float32(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& t, const NativeForm& form,
                       float* dst) {
    Layout l;
    if (!cube_converts_to_float32(t, form, 0) || !layout_of(t, &l))
        return Status(StatusCode::kInternal, "tensor " + t.name + " has no cube this path converts");
    if (l.bytes > src_bytes) return Status(StatusCode::kInternal, "the cube of " + t.name + " is cut short");
    if (t.dtype == graph::DType::kInt8 && l.lanes == kLanes8 && int8_fast_path(t)) {
        int8_cube_to_float32(src, l, t.quant.zero_point(0), t.quant.scale(0), dst);
        return Status::ok();
    }
    float table[256];
    if (t.dtype == graph::DType::kInt8) {  // the arithmetic of cpu::to_float32_into
        for (int code = -128; code < 128; ++code)
            table[code + 128] = static_cast<float>((static_cast<double>(code) - t.quant.zero_point(0)) * t.quant.scale(0));
    }
    const bool int8 = t.dtype == graph::DType::kInt8;
    parallel_for(static_cast<int64_t>(l.channels), channel_grain(l.plane), [&](int64_t begin, int64_t end) {
        for (auto c = static_cast<size_t>(begin); c < static_cast<size_t>(end); ++c) {
            const uint8_t* atom = src + (c / l.lanes) * l.surface + (c % l.lanes) * graph::dtype_size(t.dtype);
            float* out = dst + c * l.plane;
            if (int8) {
                for (size_t p = 0; p < l.plane; ++p) out[p] = table[static_cast<int8_t>(atom[p * kAtomBytes]) + 128];
            } else {
                for (size_t p = 0; p < l.plane; ++p) {
                    uint16_t h;
                    std::memcpy(&h, atom + p * kAtomBytes, 2);
                    out[p] = half_to_float(h);
                }
            }
        }
    });
    return Status::ok();
}

Status float32_to_cube(const float* src, const graph::Tensor& t, const NativeForm& form, uint8_t* dst,
                       uint64_t dst_bytes) {
    Layout l;
    if (!cube_converts_to_float32(t, form, 0) || !layout_of(t, &l))
        return Status(StatusCode::kInternal, "tensor " + t.name + " has no cube this path converts");
    if (l.bytes > dst_bytes) return Status(StatusCode::kInternal, "the cube of " + t.name + " exceeds its home");
    if (t.dtype == graph::DType::kInt8 && l.lanes == kLanes8) {
        float32_to_int8_cube(src, l, t.quant.scale(0), t.quant.zero_point(0), dst);
        return Status::ok();
    }
    // Padding lanes: those of the last surface, when the channels do not fill it.
    if (l.channels % l.lanes != 0) std::memset(dst + l.bytes - l.surface, 0, static_cast<size_t>(l.surface));
    const bool int8 = t.dtype == graph::DType::kInt8;
    const double scale = int8 ? t.quant.scale(0) : 1.0, zp = int8 ? t.quant.zero_point(0) : 0.0;
    parallel_for(static_cast<int64_t>(l.channels), channel_grain(l.plane), [&](int64_t begin, int64_t end) {
        std::vector<uint8_t> row(l.plane * graph::dtype_size(t.dtype));
        for (auto c = static_cast<size_t>(begin); c < static_cast<size_t>(end); ++c) {
            const float* in = src + c * l.plane;
            uint8_t* atom = dst + (c / l.lanes) * l.surface + (c % l.lanes) * graph::dtype_size(t.dtype);
            if (int8) {
                cpu::quantize_int8(in, static_cast<int64_t>(l.plane), scale, zp, reinterpret_cast<int8_t*>(row.data()));
                for (size_t p = 0; p < l.plane; ++p) atom[p * kAtomBytes] = row[p];
            } else {
                floats_to_halves(in, row.data(), l.plane);
                for (size_t p = 0; p < l.plane; ++p) std::memcpy(atom + p * kAtomBytes, row.data() + p * 2, 2);
            }
        }
    });
    return Status::ok();
}

bool cube_moves_as_nchw(const graph::Tensor& t, const NativeForm& form, uint32_t packed_row_pixels) {
    Layout l;
    if (form.rk356x || packed_row_pixels > 0 || !layout_of(t, &l)) return false;
    return t.dtype == graph::DType::kInt8 || t.dtype == graph::DType::kFloat16;
}

Status cube_to_nchw(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& t, const NativeForm& form,
                    uint8_t* dst) {
    Layout l;
    if (!cube_moves_as_nchw(t, form, 0) || !layout_of(t, &l))
        return Status(StatusCode::kInternal, "tensor " + t.name + " has no cube this path moves");
    if (l.bytes > src_bytes) return Status(StatusCode::kInternal, "the cube of " + t.name + " is cut short");
    if (l.lanes == kLanes8) {
        int8_cube_to_codes(src, l, reinterpret_cast<int8_t*>(dst));
        return Status::ok();
    }
    const size_t element = graph::dtype_size(t.dtype);
    parallel_for(static_cast<int64_t>(l.channels), channel_grain(l.plane), [&](int64_t begin, int64_t end) {
        for (auto c = static_cast<size_t>(begin); c < static_cast<size_t>(end); ++c) {
            const uint8_t* atom = src + (c / l.lanes) * l.surface + (c % l.lanes) * element;
            uint8_t* out = dst + c * l.plane * element;
            for (size_t p = 0; p < l.plane; ++p) std::memcpy(out + p * element, atom + p * kAtomBytes, element);
        }
    });
    return Status::ok();
}

Status nchw_to_cube(const uint8_t* src, const graph::Tensor& t, const NativeForm& form, uint8_t* dst,
                    uint64_t dst_bytes) {
    Layout l;
    if (!cube_moves_as_nchw(t, form, 0) || !layout_of(t, &l))
        return Status(StatusCode::kInternal, "tensor " + t.name + " has no cube this path moves");
    if (l.bytes > dst_bytes) return Status(StatusCode::kInternal, "the cube of " + t.name + " exceeds its home");
    if (l.lanes == kLanes8) {
        codes_to_int8_cube(reinterpret_cast<const int8_t*>(src), l, dst);
        return Status::ok();
    }
    if (l.channels % l.lanes != 0) std::memset(dst + l.bytes - l.surface, 0, static_cast<size_t>(l.surface));
    const size_t element = graph::dtype_size(t.dtype);
    parallel_for(static_cast<int64_t>(l.channels), channel_grain(l.plane), [&](int64_t begin, int64_t end) {
        for (auto c = static_cast<size_t>(begin); c < static_cast<size_t>(end); ++c) {
            uint8_t* atom = dst + (c / l.lanes) * l.surface + (c % l.lanes) * element;
            const uint8_t* in = src + c * l.plane * element;
            for (size_t p = 0; p < l.plane; ++p) std::memcpy(atom + p * kAtomBytes, in + p * element, element);
        }
    });
    return Status::ok();
}

}  // namespace rknn::runtime
