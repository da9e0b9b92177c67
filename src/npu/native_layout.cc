#include "npu/native_layout.h"

#include <algorithm>
#include <cstring>

#include "base/half.h"
#include "npu/atom_transpose.h"

namespace rknn::npu {

int align_up(int v, int a) { return (v + a - 1) / a * a; }

int packed_row_pixels(int width, bool fp16) { return align_up(width, fp16 ? 8 : 16); }

std::vector<uint8_t> pack_nhwc_image(const void* nchw, int c, int h, int w, int row_pixels, size_t elem_bytes) {
    const auto* src = static_cast<const uint8_t*>(nchw);
    const size_t plane = static_cast<size_t>(h) * w;
    std::vector<uint8_t> out(static_cast<size_t>(h) * row_pixels * c * elem_bytes, 0);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int ch = 0; ch < c; ++ch)
                std::memcpy(&out[((static_cast<size_t>(y) * row_pixels + x) * c + ch) * elem_bytes],
                            src + (static_cast<size_t>(ch) * plane + static_cast<size_t>(y) * w + x) * elem_bytes, elem_bytes);
    return out;
}

std::vector<uint8_t> unpack_nhwc_image(const uint8_t* image, int c, int h, int w, int row_pixels, size_t elem_bytes) {
    const size_t plane = static_cast<size_t>(h) * w;
    std::vector<uint8_t> out(plane * c * elem_bytes);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int ch = 0; ch < c; ++ch)
                std::memcpy(&out[(static_cast<size_t>(ch) * plane + static_cast<size_t>(y) * w + x) * elem_bytes],
                            image + ((static_cast<size_t>(y) * row_pixels + x) * c + ch) * elem_bytes, elem_bytes);
    return out;
}

namespace {
// NCHW -> atoms of `c2` bytes, surfaces `surf_bytes` apart (rows dense).
std::vector<uint8_t> pack_int8_atoms(const int8_t* nchw, int c, int h, int w, int surfaces, int c2,
                                     uint64_t surf_bytes, int8_t fill) {
    std::vector<uint8_t> out(static_cast<size_t>(surfaces) * surf_bytes, static_cast<uint8_t>(fill));
    const size_t plane = static_cast<size_t>(h) * w;
    if (c2 == 16 && fill == 0) {  // 16-byte atoms, the padding lanes zero: the vector transpose
        for (int c0 = 0; c0 < c; c0 += 16)
            planes_to_atoms(reinterpret_cast<const uint8_t*>(nchw) + static_cast<size_t>(c0) * plane, plane, 1,
                            static_cast<size_t>(std::min(16, c - c0)), plane, out.data() + static_cast<size_t>(c0 / 16) * surf_bytes);
        return out;
    }
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                out[static_cast<size_t>(ch / c2) * surf_bytes + (static_cast<size_t>(y) * w + x) * c2 + ch % c2] =
                    static_cast<uint8_t>(nchw[(static_cast<size_t>(ch) * h + y) * w + x]);
    return out;
}

std::vector<int8_t> unpack_int8_atoms(const uint8_t* bytes, int c, int h, int w, int c2, uint64_t surf_bytes) {
    std::vector<int8_t> out(static_cast<size_t>(c) * h * w);
    const size_t plane = static_cast<size_t>(h) * w;
    if (c2 == 16) {  // 16-byte atoms: the vector transpose
        for (int c0 = 0; c0 < c; c0 += 16)
            atoms_to_planes(bytes + static_cast<size_t>(c0 / 16) * surf_bytes, 1, static_cast<size_t>(std::min(16, c - c0)), plane,
                            reinterpret_cast<uint8_t*>(out.data()) + static_cast<size_t>(c0) * plane, plane);
        return out;
    }
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                out[(static_cast<size_t>(ch) * h + y) * w + x] = static_cast<int8_t>(
                    bytes[static_cast<size_t>(ch / c2) * surf_bytes + (static_cast<size_t>(y) * w + x) * c2 + ch % c2]);
    return out;
}

constexpr int kRk356xAtom = 8;
}  // namespace

uint64_t rk356x_surface_bytes(int h, int w) {
    const uint64_t pixels = static_cast<uint64_t>(h) * static_cast<uint64_t>(w);
    return (pixels > 1 ? (pixels + 3) / 4 * 4 : 1) * kRk356xAtom;
}

uint64_t rk356x_cube_bytes(int c, int h, int w) {
    return static_cast<uint64_t>(align_up(c, 16) / kRk356xAtom) * rk356x_surface_bytes(h, w);
}

std::vector<uint8_t> pack_int8_cube_rk356x(const int8_t* nchw, int c, int h, int w, int8_t fill) {
    return pack_int8_atoms(nchw, c, h, w, align_up(c, 16) / kRk356xAtom, kRk356xAtom, rk356x_surface_bytes(h, w), fill);
}

std::vector<int8_t> unpack_int8_cube_rk356x(const uint8_t* bytes, int c, int h, int w) {
    return unpack_int8_atoms(bytes, c, h, w, kRk356xAtom, rk356x_surface_bytes(h, w));
}

std::vector<uint8_t> pack_int8_cube(const int8_t* nchw, int c, int h, int w, int channels, int8_t fill) {
    return pack_int8_atoms(nchw, c, h, w, align_up(channels, 16) / 16, 16, static_cast<uint64_t>(h) * w * 16, fill);
}

std::vector<int8_t> unpack_int8_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    return unpack_int8_atoms(bytes, c, h, w, 16, surf_stride);
}

std::vector<uint8_t> pack_fp16_cube(const float* nchw, int c, int h, int w, int channels) {
    const int surfaces = align_up(channels, 8) / 8;
    std::vector<uint8_t> out(static_cast<size_t>(surfaces) * h * w * 16, 0);
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const uint16_t v = float_to_half(nchw[(static_cast<size_t>(ch) * h + y) * w + x]);
                std::memcpy(&out[((static_cast<size_t>(ch / 8) * h + y) * w + x) * 16 + (ch % 8) * 2], &v, 2);
            }
    return out;
}

namespace {
template <typename T, int kC2>
std::vector<float> unpack_float_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    std::vector<float> out(static_cast<size_t>(c) * h * w);
    for (int ch = 0; ch < c; ++ch)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                T v;
                std::memcpy(&v, bytes + static_cast<size_t>(ch / kC2) * surf_stride +
                                    (static_cast<size_t>(y) * w + x) * 16 + (ch % kC2) * sizeof(T),
                            sizeof(T));
                float fv;
                if constexpr (sizeof(T) == 2) {
                    fv = half_to_float(v);
                } else {
                    fv = v;
                }
                out[(static_cast<size_t>(ch) * h + y) * w + x] = fv;
            }
    return out;
}
}  // namespace

std::vector<float> unpack_fp16_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    return unpack_float_cube<uint16_t, 8>(bytes, c, h, w, surf_stride);
}

std::vector<float> unpack_fp32_cube(const uint8_t* bytes, int c, int h, int w, uint64_t surf_stride) {
    return unpack_float_cube<float, 4>(bytes, c, h, w, surf_stride);
}

namespace {
template <typename T, typename S>
std::vector<T> pack_blocks(const S* w, int oc, int ic, int kh, int kw, int ic_aligned, int oc_block, T (*conv)(S)) {
    std::vector<T> out;
    out.reserve(static_cast<size_t>(oc) * ic_aligned * kh * kw);
    for (int o0 = 0; o0 < oc; o0 += oc_block) {
        const int on = std::min(oc_block, oc - o0);
        for (int i0 = 0; i0 < ic_aligned; i0 += 32) {
            const int in = std::min(32, ic_aligned - i0);
            for (int y = 0; y < kh; ++y)
                for (int x = 0; x < kw; ++x)
                    for (int o = 0; o < on; ++o)
                        for (int i = 0; i < in; ++i) {
                            const int oi = o0 + o, ii = i0 + i;
                            out.push_back(ii < ic ? conv(w[((static_cast<size_t>(oi) * ic + ii) * kh + y) * kw + x])
                                                  : conv(S{}));
                        }
        }
    }
    return out;
}
int8_t same_int8(int8_t v) { return v; }
uint16_t to_half(float v) { return float_to_half(v); }
}  // namespace

std::vector<int8_t> pack_conv_weights_int8(const int8_t* w, int oc, int ic, int kh, int kw, int ic_aligned) {
    return pack_blocks<int8_t, int8_t>(w, oc, ic, kh, kw, ic_aligned, 32, same_int8);
}

std::vector<uint16_t> pack_conv_weights_fp16(const float* w, int oc, int ic, int kh, int kw, int ic_aligned) {
    return pack_blocks<uint16_t, float>(w, oc, ic, kh, kw, ic_aligned, 16, to_half);
}

std::vector<int8_t> pack_conv_weights_int8_rk356x(const int8_t* w, int oc, int ic, int kh, int kw) {
    return pack_blocks<int8_t, int8_t>(w, oc, ic, kh, kw, align_up(ic, 16), 16, same_int8);
}

int rk356x_image_row_pixels(int width) { return align_up(width, kRk356xAtom); }

uint32_t rk356x_image_row_entries(int width) {
    return static_cast<uint32_t>(align_up((width * kRk356xAtom + 31) / 32, 2));
}

std::vector<int8_t> pack_image_weights_int8_rk356x(const int8_t* w, int oc, int ic, int kh, int kw) {
    return pack_blocks<int8_t, int8_t>(w, oc, ic, kh, kw, kRk356xAtom, 16, same_int8);
}

namespace {
// Groups of 64 bytes of channels (64 int8, 32 fp16), [ky][kx][channel] inside.
template <typename T, typename S>
std::vector<T> pack_dw_groups(const S* w, int c, int kh, int kw, int c_aligned, T (*conv)(S),
                              int group_bytes = 64) {
    const int kGroup = group_bytes / static_cast<int>(sizeof(T));
    std::vector<T> out;
    out.reserve(static_cast<size_t>(c_aligned) * kh * kw);
    for (int c0 = 0; c0 < c_aligned; c0 += kGroup) {
        const int cn = std::min(kGroup, c_aligned - c0);
        for (int y = 0; y < kh; ++y)
            for (int x = 0; x < kw; ++x)
                for (int i = 0; i < cn; ++i) {
                    const int ch = c0 + i;
                    out.push_back(ch < c ? conv(w[(static_cast<size_t>(ch) * kh + y) * kw + x]) : conv(S{}));
                }
    }
    return out;
}
}  // namespace

std::vector<int8_t> pack_dw_weights_int8(const int8_t* w, int c, int kh, int kw, int c_aligned) {
    return pack_dw_groups<int8_t, int8_t>(w, c, kh, kw, c_aligned, same_int8);
}

std::vector<uint16_t> pack_dw_weights_fp16(const float* w, int c, int kh, int kw, int c_aligned) {
    return pack_dw_groups<uint16_t, float>(w, c, kh, kw, c_aligned, to_half);
}

std::vector<int8_t> pack_dw_weights_int8_rk356x(const int8_t* w, int c, int kh, int kw) {
    // Full groups are 32 wide; the last one holds align(its channels, 16).
    return pack_dw_groups<int8_t, int8_t>(w, c, kh, kw, align_up(c, 16), same_int8, 32);
}

}  // namespace rknn::npu
