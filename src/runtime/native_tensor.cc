#include "runtime/native_tensor.h"

#include <algorithm>
#include <cstring>

#include "base/half.h"
#include "base/parallel.h"
#include "base/sign_bits.h"
#include "cpu/graph_executor.h"
#include "npu/native_layout.h"
#include "npu/prepared_op.h"
#include "npu/atom_transpose.h"

namespace rknn::runtime {
namespace {

constexpr int kAtomBytes = 16;
constexpr int kRk356xAtomBytes = 8;

int channels_per_atom(graph::DType dtype) { return dtype == graph::DType::kFloat16 ? 8 : 16; }

bool cube_of(graph::DType dtype, const graph::Shape& shape, npu::CubeShape* cube) {
    if (dtype != graph::DType::kInt8 && dtype != graph::DType::kFloat16) return false;
    return npu::cube_of_shape(shape, cube);
}

bool cube_of(const graph::Tensor& t, npu::CubeShape* cube) { return cube_of(t.dtype, t.shape, cube); }

}  // namespace

NativeForm native_form(const hw::SocProfile& soc) {
    NativeForm form;
    form.rk356x = soc.arch == hw::NpuArch::kRk356x;
    return form;
}

bool has_native_cube(const graph::Tensor& t) {
    npu::CubeShape cube;
    return cube_of(t, &cube);
}

uint64_t native_cube_bytes(const graph::Tensor& t, const NativeForm& form) {
    npu::CubeShape cube;
    if (!cube_of(t, &cube)) return 0;
    if (form.rk356x)
        return t.dtype == graph::DType::kInt8 ? npu::rk356x_cube_bytes(npu::align_up(cube.c, 32), cube.h, cube.w) : 0;
    const int c2 = channels_per_atom(t.dtype);
    const uint64_t c1 = static_cast<uint64_t>((cube.c + c2 - 1) / c2);
    return c1 * static_cast<uint64_t>(cube.h) * static_cast<uint64_t>(cube.w) * kAtomBytes;
}

CubeDims native_cube_dims(const graph::Tensor& t, const NativeForm& form) {
    npu::CubeShape cube;
    if (!cube_of(t, &cube) || (form.rk356x && t.dtype != graph::DType::kInt8)) return {};
    const int c2 = form.rk356x ? kRk356xAtomBytes : channels_per_atom(t.dtype);
    const auto c1 = static_cast<uint32_t>((cube.c + c2 - 1) / c2);
    const uint64_t surface = form.rk356x ? npu::rk356x_surface_bytes(cube.h, cube.w)
                                         : static_cast<uint64_t>(cube.h) * static_cast<uint64_t>(cube.w) * kAtomBytes;
    return {c1, static_cast<uint32_t>(cube.h), static_cast<uint32_t>(cube.w), static_cast<uint32_t>(c2), c1 * surface};
}

bool native_cube_shape(const graph::Tensor& t, int* c, int* h, int* w) {
    npu::CubeShape cube;
    if (!cube_of(t, &cube)) return false;
    *c = cube.c, *h = cube.h, *w = cube.w;
    return true;
}

uint32_t packed_image_row_pixels(const graph::Tensor& t, const NativeForm& form) {
    npu::CubeShape cube;
    if (t.shape.size() != 4 || !cube_of(t, &cube) || (cube.c != 1 && cube.c != 3 && cube.c != 4)) return 0;
    if (form.rk356x)
        return t.dtype == graph::DType::kInt8 && cube.c == 3 ? static_cast<uint32_t>(npu::rk356x_image_row_pixels(cube.w))
                                                             : 0;
    return static_cast<uint32_t>(npu::packed_row_pixels(cube.w, t.dtype == graph::DType::kFloat16));
}

bool packed_image_biased(const NativeForm& form) { return form.rk356x; }

uint64_t packed_image_bytes(const graph::Tensor& t, const NativeForm& form) {
    const uint32_t pitch = packed_image_row_pixels(t, form);
    if (pitch == 0) return 0;
    return static_cast<uint64_t>(t.shape[2]) * pitch * static_cast<uint64_t>(t.shape[1]) * graph::dtype_size(t.dtype);
}

namespace {

// Whether a tensor's device form is a cube in channel-major order (no packed
// image, no multi-row matrix) of an element type the form holds: the form the
// direct copies below handle.
bool direct_cube(graph::DType dtype, const graph::Shape& shape, const NativeForm& form, uint32_t packed_row_pixels,
                 npu::CubeShape* cube) {
    if (packed_row_pixels > 0 || !cube_of(dtype, shape, cube)) return false;
    if (npu::matrix_rows(shape) > 0) return false;  // rows reorder their values
    return dtype == graph::DType::kInt8 || (dtype == graph::DType::kFloat16 && !form.rk356x);
}

// Bytes between surfaces and between pixels of the cube's atoms, and the
// bytes of the surfaces its channels fill.
struct CubeStrides {
    uint64_t surface = 0, atom = 0, bytes = 0;
};
CubeStrides cube_strides(graph::DType dtype, const npu::CubeShape& cube, const NativeForm& form) {
    CubeStrides s;
    s.atom = static_cast<uint64_t>(form.rk356x ? kRk356xAtomBytes : kAtomBytes);
    s.surface = form.rk356x ? npu::rk356x_surface_bytes(cube.h, cube.w)
                            : static_cast<uint64_t>(cube.h) * static_cast<uint64_t>(cube.w) * kAtomBytes;
    const uint64_t c2 = s.atom / graph::dtype_size(dtype);
    s.bytes = (static_cast<uint64_t>(cube.c) + c2 - 1) / c2 * s.surface;
    return s;
}

// Copies between an NCHW host buffer and the cube, one element of type T at
// a time (typed, so that each is a plain load and store).
// Large cubes share their surfaces (c2 channels each, disjoint bytes on both
// sides) out over the host's threads.
template <bool kToCube, typename T>
void copy_cube_of(const npu::CubeShape& cube, uint64_t surface, uint64_t atom, const uint8_t* from, uint8_t* to) {
    const size_t plane = static_cast<size_t>(cube.h) * static_cast<size_t>(cube.w);
    const size_t c2 = static_cast<size_t>(atom) / sizeof(T);
    // Blocks of pixels small enough that the strided side stays in L1
    // while every channel of the surface passes over it.
    constexpr size_t kBlock = 256;
    const auto channels = [&](size_t c_begin, size_t c_end) {
        // 16-byte atoms (contiguous in each surface): a vector transpose per
        // block of pixels, the last surface's padding lanes written as zero.
        if (atom == 16) {
            const size_t plane_bytes = plane * sizeof(T);
            for (; c_begin < c_end && c_begin % c2 == 0; c_begin += c2) {
                const uint64_t surface_at = (c_begin / c2) * surface;
                const size_t lanes = std::min(c2, c_end - c_begin);
                if (kToCube) {
                    npu::planes_to_atoms(from + c_begin * plane_bytes, plane_bytes, sizeof(T), lanes, plane, to + surface_at);
                } else {
                    npu::atoms_to_planes(from + surface_at, sizeof(T), lanes, plane, to + c_begin * plane_bytes, plane_bytes);
                }
            }
            return;
        }
        for (size_t p0 = 0; p0 < plane; p0 += kBlock) {
            const size_t p1 = std::min(plane, p0 + kBlock);
            for (size_t c = c_begin; c < c_end; ++c) {
                const uint64_t base = (c / c2) * surface + (c % c2) * sizeof(T);
                if (kToCube) {
                    const T* host = reinterpret_cast<const T*>(from) + c * plane;
                    T* device = reinterpret_cast<T*>(to + base);
                    for (size_t p = p0; p < p1; ++p) device[p * c2] = host[p];
                } else {
                    const T* device = reinterpret_cast<const T*>(from + base);
                    T* host = reinterpret_cast<T*>(to) + c * plane;
                    for (size_t p = p0; p < p1; ++p) host[p] = device[p * c2];
                }
            }
        }
    };
    const size_t surfaces = (static_cast<size_t>(cube.c) + c2 - 1) / c2;
    constexpr size_t kParallelElements = size_t{1} << 16;
    if (surfaces < 2 || plane * static_cast<size_t>(cube.c) < kParallelElements) {
        channels(0, static_cast<size_t>(cube.c));
        return;
    }
    parallel_for(static_cast<int64_t>(surfaces), 1, [&](int64_t s0, int64_t s1) {
        channels(static_cast<size_t>(s0) * c2, std::min(static_cast<size_t>(s1) * c2, static_cast<size_t>(cube.c)));
    });
}

// A [rows][cols] matrix and its cube (cols channels, one pixel per row):
// row r of surface s is the 16-byte atom at s * surface + r * 16, so each
// row is a run of atoms, one from each surface.
template <bool kToCube>
void copy_matrix(int64_t rows, int64_t cols, size_t elem, uint64_t surface, const uint8_t* from, uint8_t* to) {
    const int64_t c2 = static_cast<int64_t>(kAtomBytes / elem);
    const auto copy_rows = [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
            for (int64_t c0 = 0; c0 < cols; c0 += c2) {
                const size_t bytes = static_cast<size_t>(std::min(c2, cols - c0)) * elem;
                const uint64_t atom = static_cast<uint64_t>(c0 / c2) * surface + static_cast<uint64_t>(r) * kAtomBytes;
                const uint64_t host = (static_cast<uint64_t>(r * cols + c0)) * elem;
                if (kToCube) {
                    std::memcpy(to + atom, from + host, bytes);
                } else {
                    std::memcpy(to + host, from + atom, bytes);
                }
            }
    };
    parallel_for(rows, rows * cols >= (int64_t{1} << 16) ? 1 : rows, copy_rows);
}

template <bool kToCube>
void copy_cube(const npu::CubeShape& cube, size_t elem, uint64_t surface, uint64_t atom, const uint8_t* from, uint8_t* to) {
    if (elem == 1) copy_cube_of<kToCube, uint8_t>(cube, surface, atom, from, to);
    else copy_cube_of<kToCube, uint16_t>(cube, surface, atom, from, to);
}

}  // namespace

Status pack_native(const cpu::HostTensor& value, uint8_t* dst, uint64_t dst_bytes, const NativeForm& form,
                   uint32_t packed_row_pixels) {
    npu::CubeShape cube;
    if (direct_cube(value.dtype(), value.shape(), form, packed_row_pixels, &cube)) {
        const CubeStrides s = cube_strides(value.dtype(), cube, form);
        if (s.bytes > dst_bytes)
            return RKNN_INTERNAL_ERROR("native cube of %llu bytes exceeds its %llu-byte home",
                                       static_cast<unsigned long long>(s.bytes), static_cast<unsigned long long>(dst_bytes));
        // Padding lanes zero (and on RK356x the spare surfaces and the gaps
        // between them). Only the last surface has padding lanes on RK3588.
        if (form.rk356x) {
            std::memset(dst, 0, static_cast<size_t>(dst_bytes));
        } else {
            const uint64_t c2 = s.atom / graph::dtype_size(value.dtype());
            if (static_cast<uint64_t>(cube.c) % c2 != 0) std::memset(dst + s.bytes - s.surface, 0, static_cast<size_t>(s.surface));
        }
        copy_cube<true>(cube, graph::dtype_size(value.dtype()), s.surface, s.atom, static_cast<const uint8_t*>(value.raw()), dst);
        return Status::ok();
    }
    graph::Tensor declared;
    declared.dtype = value.dtype();
    declared.shape = value.shape();
    if (!cube_of(declared, &cube)) return RKNN_INTERNAL_ERROR("tensor of %s has no native cube",
                                                              graph::shape_to_string(value.shape()).c_str());
    if (const int64_t rows = npu::matrix_rows(value.shape()); rows > 0 && packed_row_pixels == 0 && !form.rk356x) {
        const CubeStrides s = cube_strides(value.dtype(), cube, form);
        if (s.bytes > dst_bytes)
            return RKNN_INTERNAL_ERROR("native cube of %llu bytes exceeds its %llu-byte home",
                                       static_cast<unsigned long long>(s.bytes), static_cast<unsigned long long>(dst_bytes));
        std::memset(dst + s.bytes - s.surface, 0, static_cast<size_t>(s.surface));  // the last surface's padding lanes
        copy_matrix<true>(rows, cube.c, graph::dtype_size(value.dtype()), s.surface, static_cast<const uint8_t*>(value.raw()), dst);
        return Status::ok();
    }
    const int c2 = channels_per_atom(value.dtype());
    const std::vector<uint8_t> ordered = npu::to_cube_order(value.raw(), value.shape(), graph::dtype_size(value.dtype()));
    std::vector<uint8_t> bytes;
    if (packed_row_pixels > 0) {
        if (packed_row_pixels != packed_image_row_pixels(declared, form))
            return RKNN_INTERNAL_ERROR("tensor of %s has no %u-pixel packed form",
                                       graph::shape_to_string(value.shape()).c_str(), packed_row_pixels);
        bytes = npu::pack_nhwc_image(ordered.data(), cube.c, cube.h, cube.w, static_cast<int>(packed_row_pixels),
                                     graph::dtype_size(value.dtype()));
        if (packed_image_biased(form)) copy_sign_flipped(bytes.data(), bytes.data(), bytes.size());
    } else if (form.rk356x && value.dtype() != graph::DType::kInt8) {
        return RKNN_INTERNAL_ERROR("RK356x cubes are int8 only");
    } else if (form.rk356x) {
        bytes = npu::pack_int8_cube_rk356x(reinterpret_cast<const int8_t*>(ordered.data()), cube.c, cube.h, cube.w, 0);
    } else if (value.dtype() == graph::DType::kFloat16) {
        std::vector<float> widened(static_cast<size_t>(value.numel()));
        for (size_t i = 0; i < widened.size(); ++i) {
            uint16_t h;
            std::memcpy(&h, ordered.data() + i * 2, 2);
            widened[i] = half_to_float(h);
        }
        bytes = npu::pack_fp16_cube(widened.data(), cube.c, cube.h, cube.w, npu::align_up(cube.c, c2));
    } else {
        bytes = npu::pack_int8_cube(reinterpret_cast<const int8_t*>(ordered.data()), cube.c, cube.h, cube.w,
                                    npu::align_up(cube.c, c2), 0);
    }
    if (bytes.size() > dst_bytes) return RKNN_INTERNAL_ERROR("native cube of %zu bytes exceeds its %llu-byte home",
                                                             bytes.size(), static_cast<unsigned long long>(dst_bytes));
    std::memcpy(dst, bytes.data(), bytes.size());
    // RK356x homes have room for align(C, 32) channels: clear the surfaces past the data.
    if (form.rk356x && packed_row_pixels == 0) std::memset(dst + bytes.size(), 0, static_cast<size_t>(dst_bytes - bytes.size()));
    return Status::ok();
}

Status unpack_native_into(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& declared,
                          const NativeForm& form, uint32_t packed_row_pixels, cpu::HostTensor* out) {
    npu::CubeShape cube;
    if (!direct_cube(declared.dtype, declared.shape, form, packed_row_pixels, &cube)) {
        RKNN_ASSIGN_OR_RETURN(*out, unpack_native(src, src_bytes, declared, form, packed_row_pixels));
        return Status::ok();
    }
    const CubeStrides s = cube_strides(declared.dtype, cube, form);
    if (s.bytes > src_bytes) return RKNN_INTERNAL_ERROR("native form of %s is cut short", declared.name.c_str());
    if (out->dtype() != declared.dtype || out->shape() != declared.shape) *out = cpu::make_tensor_like(declared, declared.shape);
    copy_cube<false>(cube, graph::dtype_size(declared.dtype), s.surface, s.atom, src, static_cast<uint8_t*>(out->raw()));
    return Status::ok();
}

StatusOr<cpu::HostTensor> unpack_native(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& declared,
                                        const NativeForm& form, uint32_t packed_row_pixels) {
    npu::CubeShape cube;
    if (!cube_of(declared, &cube)) return RKNN_INTERNAL_ERROR("tensor %s has no native cube", declared.name.c_str());
    if (packed_row_pixels > 0 && packed_row_pixels != packed_image_row_pixels(declared, form))
        return RKNN_INTERNAL_ERROR("tensor %s has no %u-pixel packed form", declared.name.c_str(), packed_row_pixels);
    if (form.rk356x && declared.dtype != graph::DType::kInt8)
        return RKNN_INTERNAL_ERROR("tensor %s: RK356x cubes are int8 only", declared.name.c_str());
    const uint64_t needed =
        packed_row_pixels > 0 ? packed_image_bytes(declared, form) : native_cube_dims(declared, form).bytes;
    if (needed > src_bytes) return RKNN_INTERNAL_ERROR("native form of %s is cut short", declared.name.c_str());
    const uint64_t surface = static_cast<uint64_t>(cube.h) * static_cast<uint64_t>(cube.w) * kAtomBytes;
    cpu::HostTensor out = cpu::make_tensor_like(declared, declared.shape);
    if (const int64_t rows = npu::matrix_rows(declared.shape); rows > 0 && packed_row_pixels == 0 && !form.rk356x) {
        copy_matrix<false>(rows, cube.c, graph::dtype_size(declared.dtype), surface, src, static_cast<uint8_t*>(out.raw()));
        return out;
    }
    std::vector<uint8_t> ordered;  // the cube's NCHW order
    if (packed_row_pixels > 0) {
        ordered = npu::unpack_nhwc_image(src, cube.c, cube.h, cube.w, static_cast<int>(packed_row_pixels),
                                         graph::dtype_size(declared.dtype));
        if (packed_image_biased(form)) copy_sign_flipped(ordered.data(), ordered.data(), ordered.size());
    } else if (form.rk356x) {
        const std::vector<int8_t> codes = npu::unpack_int8_cube_rk356x(src, cube.c, cube.h, cube.w);
        ordered.assign(reinterpret_cast<const uint8_t*>(codes.data()), reinterpret_cast<const uint8_t*>(codes.data()) + codes.size());
    } else if (declared.dtype == graph::DType::kFloat16) {
        const std::vector<float> values = npu::unpack_fp16_cube(src, cube.c, cube.h, cube.w, surface);
        ordered.resize(values.size() * 2);
        for (size_t i = 0; i < values.size(); ++i) {
            const uint16_t h = float_to_half(values[i]);
            std::memcpy(ordered.data() + i * 2, &h, 2);
        }
    } else {
        const std::vector<int8_t> codes = npu::unpack_int8_cube(src, cube.c, cube.h, cube.w, surface);
        ordered.assign(reinterpret_cast<const uint8_t*>(codes.data()), reinterpret_cast<const uint8_t*>(codes.data()) + codes.size());
    }
    const std::vector<uint8_t> logical = npu::from_cube_order(ordered.data(), declared.shape, graph::dtype_size(declared.dtype));
    std::memcpy(out.raw(), logical.data(), logical.size());
    return out;
}

}  // namespace rknn::runtime
