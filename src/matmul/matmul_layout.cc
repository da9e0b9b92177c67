#include "matmul/matmul_layout.h"

#include <algorithm>
#include <cstring>

#include "base/half.h"

namespace rknn::matmul {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

}  // namespace

int64_t Offsets::a(int64_t row, int64_t col) const {
    return tiled_index(row, col, m, plan->ac_layout == RKNN_MM_LAYOUT_NATIVE ? plan->tiles.a_sub_k : k);
}

int64_t Offsets::b(int64_t row, int64_t col) const {
    if (plan->b_layout == RKNN_MM_LAYOUT_NORM) return row * n + col;
    if (plan->b_layout == RKNN_MM_LAYOUT_TP_NORM) return col * k + row;
    // NATIVE: [N/sub_n][K/sub_k][sub_n][sub_k] within each K segment, the
    // segments one after another. A segment's K rows are a multiple of sub_k
    // except the last one's, so the earlier segments hold no padding in K.
    const NativeTiles& t = plan->tiles;
    const int64_t segment_rows = t.k_segment > 0 && k > t.k_segment ? t.k_segment : k;
    const int64_t segment = row / segment_rows, r = row % segment_rows;
    const int64_t rows_here = std::min(segment_rows, k - segment * segment_rows);
    const int64_t n_tiles = ceil_div(n, t.b_sub_n);
    const int64_t tile = static_cast<int64_t>(t.b_sub_n) * t.b_sub_k;
    const int64_t segment_base = segment * n_tiles * ceil_div(segment_rows, t.b_sub_k) * tile;
    return segment_base + (col / t.b_sub_n) * ceil_div(rows_here, t.b_sub_k) * tile + (r / t.b_sub_k) * tile +
           (col % t.b_sub_n) * t.b_sub_k + r % t.b_sub_k;
}

int64_t Offsets::c(int64_t row, int64_t col) const {
    return tiled_index(row, col, m, plan->ac_layout == RKNN_MM_LAYOUT_NATIVE ? plan->tiles.c_sub_n : n);
}

void copy_tiled(const uint8_t* src, int64_t src_sub, uint8_t* dst, int64_t dst_sub, int64_t rows, int64_t cols,
                size_t elem_bytes) {
    const int64_t e = static_cast<int64_t>(elem_bytes);
    if (src_sub == dst_sub && cols % src_sub == 0) {  // one layout, no partial tile
        std::memcpy(dst, src, static_cast<size_t>(rows * cols * e));
        return;
    }
    for (int64_t row = 0; row < rows; ++row) {
        for (int64_t col = 0; col < cols;) {
            const int64_t run = std::min({src_sub - col % src_sub, dst_sub - col % dst_sub, cols - col});
            std::memcpy(dst + tiled_index(row, col, rows, dst_sub) * e, src + tiled_index(row, col, rows, src_sub) * e,
                        static_cast<size_t>(run * e));
            col += run;
        }
    }
}

int32_t load_int(const uint8_t* base, int64_t index, Elem e) {
    switch (e) {
        case Elem::kInt4: {
            const uint8_t byte = base[index / 2];
            const int nibble = (index % 2 == 0) ? (byte & 0x0f) : (byte >> 4);
            return nibble >= 8 ? nibble - 16 : nibble;
        }
        case Elem::kInt8:
            return static_cast<int8_t>(base[index]);
        case Elem::kInt16: {
            int16_t v;
            std::memcpy(&v, base + index * 2, 2);
            return v;
        }
        case Elem::kInt32: {
            int32_t v;
            std::memcpy(&v, base + index * 4, 4);
            return v;
        }
        default:
            return 0;
    }
}

float load_float(const uint8_t* base, int64_t index, Elem e) {
    uint16_t h;
    switch (e) {
        case Elem::kFloat16:
            std::memcpy(&h, base + index * 2, 2);
            return half_to_float(h);
        case Elem::kBFloat16: {
            std::memcpy(&h, base + index * 2, 2);
            const uint32_t bits = static_cast<uint32_t>(h) << 16;
            float f;
            std::memcpy(&f, &bits, 4);
            return f;
        }
        case Elem::kFloat32: {
            float f;
            std::memcpy(&f, base + index * 4, 4);
            return f;
        }
        default:
            return static_cast<float>(load_int(base, index, e));
    }
}

void store_int(uint8_t* base, int64_t index, Elem e, int32_t value) {
    switch (e) {
        case Elem::kInt4: {
            uint8_t& byte = base[index / 2];
            const uint8_t nibble = static_cast<uint8_t>(value) & 0x0f;
            byte = index % 2 == 0 ? static_cast<uint8_t>((byte & 0xf0) | nibble)
                                  : static_cast<uint8_t>((byte & 0x0f) | (nibble << 4));
            break;
        }
        case Elem::kInt8:
            base[index] = static_cast<uint8_t>(static_cast<int8_t>(value));
            break;
        case Elem::kInt16: {
            const int16_t v = static_cast<int16_t>(value);
            std::memcpy(base + index * 2, &v, 2);
            break;
        }
        case Elem::kInt32:
            std::memcpy(base + index * 4, &value, 4);
            break;
        default:
            break;
    }
}

void store_float(uint8_t* base, int64_t index, Elem e, float value) {
    switch (e) {
        case Elem::kFloat16: {
            const uint16_t h = float_to_half(value);
            std::memcpy(base + index * 2, &h, 2);
            break;
        }
        case Elem::kBFloat16: {
            const uint16_t h = float_to_bfloat16(value);
            std::memcpy(base + index * 2, &h, 2);
            break;
        }
        case Elem::kFloat32:
            std::memcpy(base + index * 4, &value, 4);
            break;
        default:
            break;
    }
}

void b_norm_to_native(const Plan& plan, const uint8_t* in, uint8_t* out, int64_t k, int64_t n) {
    Plan norm = plan, native = plan;
    norm.b_layout = RKNN_MM_LAYOUT_NORM;
    native.b_layout = RKNN_MM_LAYOUT_NATIVE;
    std::memset(out, 0, static_cast<size_t>(b_bytes(native, k, n)));
    const Offsets from{&norm, 0, k, n}, to{&native, 0, k, n};
    const Elem e = plan.type.b;
    const size_t bytes = static_cast<size_t>(elem_bits(e) / 8);
    for (int64_t row = 0; row < k; ++row)
        for (int64_t col = 0; col < n; ++col) {
            if (e == Elem::kInt4) {
                store_int(out, to.b(row, col), e, load_int(in, from.b(row, col), e));
            } else {
                std::memcpy(out + to.b(row, col) * static_cast<int64_t>(bytes),
                            in + from.b(row, col) * static_cast<int64_t>(bytes), bytes);
            }
        }
}

}  // namespace rknn::matmul
