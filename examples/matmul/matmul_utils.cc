#include "matmul_utils.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace examples {

namespace {

// IEEE half conversions for the demo's own use (round to nearest even).
uint16_t to_half(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const uint32_t sign = (bits >> 16) & 0x8000u, magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
    if (magnitude < 0x38800000u) return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(std::ldexp(std::fabs(f), 24))));
    const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float from_half(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    if (exponent == 0) {
        const float f = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -f : f;
    }
    const uint32_t bits = sign | (exponent == 31 ? 0x7f800000u | (mantissa << 13) : ((exponent + 112) << 23) | (mantissa << 13));
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

void put(uint8_t* p, size_t i, rknn_tensor_type type, double v) {
    switch (type) {
    case RKNN_TENSOR_INT4: {  // two to a byte, the even element in the low nibble
        const uint8_t nibble = static_cast<uint8_t>(static_cast<int>(v)) & 0x0f;
        p[i / 2] = i % 2 == 0 ? static_cast<uint8_t>((p[i / 2] & 0xf0) | nibble)
                              : static_cast<uint8_t>((p[i / 2] & 0x0f) | (nibble << 4));
        break;
    }
    case RKNN_TENSOR_INT8: p[i] = static_cast<uint8_t>(static_cast<int8_t>(v)); break;
    case RKNN_TENSOR_FLOAT16: {
        const uint16_t h = to_half(static_cast<float>(v));
        std::memcpy(p + i * 2, &h, 2);
        break;
    }
    default: break;
    }
}

double get(const uint8_t* p, size_t i, rknn_tensor_type type) {
    switch (type) {
    case RKNN_TENSOR_INT8: return static_cast<int8_t>(p[i]);
    case RKNN_TENSOR_INT16: {
        int16_t v;
        std::memcpy(&v, p + i * 2, 2);
        return v;
    }
    case RKNN_TENSOR_INT32: {
        int32_t v;
        std::memcpy(&v, p + i * 4, 4);
        return v;
    }
    case RKNN_TENSOR_FLOAT16: {
        uint16_t h;
        std::memcpy(&h, p + i * 2, 2);
        return from_half(h);
    }
    case RKNN_TENSOR_FLOAT32: {
        float f;
        std::memcpy(&f, p + i * 4, 4);
        return f;
    }
    default: return 0;
    }
}

size_t bytes_for(size_t elements, rknn_tensor_type type) {
    switch (type) {
    case RKNN_TENSOR_INT4: return (elements + 1) / 2;
    case RKNN_TENSOR_INT8: return elements;
    case RKNN_TENSOR_INT16:
    case RKNN_TENSOR_FLOAT16: return elements * 2;
    default: return elements * 4;
    }
}

}  // namespace

Matrix random_matrix(int rows, int cols, rknn_tensor_type type, uint32_t seed) {
    Matrix m;
    m.rows = rows, m.cols = cols;
    m.values.resize(static_cast<size_t>(rows) * cols);
    std::mt19937 rng(seed);
    for (double& v : m.values) {
        if (type == RKNN_TENSOR_INT4) v = static_cast<int>(rng() % 16) - 8;
        else if (type == RKNN_TENSOR_INT8) v = static_cast<int>(rng() % 256) - 128;
        else v = from_half(to_half(static_cast<float>(rng() % 2000) / 1000.0f - 1.0f));
    }
    return m;
}

bool write_matrix(const Matrix& m, const rknn_matmul_tensor_attr& attr, bool is_b, rknn_matmul_info* info, void* dst) {
    auto* out = static_cast<uint8_t*>(dst);
    std::memset(out, 0, attr.size);
    if (attr.n_dims == 2) {
        const bool transposed = is_b && info->B_layout == RKNN_MM_LAYOUT_TP_NORM;  // B as [N][K]
        for (int r = 0; r < m.rows; ++r)
            for (int c = 0; c < m.cols; ++c)
                put(out, transposed ? static_cast<size_t>(c) * m.rows + r : static_cast<size_t>(r) * m.cols + c, attr.type,
                    m.at(r, c));
        return true;
    }
    if (attr.n_dims == 3 && !is_b) {  // A native: [K/s][M][s]
        const int s = static_cast<int>(attr.dims[2]);
        for (int r = 0; r < m.rows; ++r)
            for (int c = 0; c < m.cols; ++c)
                put(out, static_cast<size_t>(c / s) * m.rows * s + static_cast<size_t>(r) * s + c % s, attr.type, m.at(r, c));
        return true;
    }
    if (attr.n_dims == 4 && is_b) {  // B native, through the runtime's helper
        std::vector<uint8_t> norm(bytes_for(m.values.size(), attr.type), 0);
        for (size_t i = 0; i < m.values.size(); ++i) put(norm.data(), i, attr.type, m.values[i]);
        return rknn_B_normal_layout_to_native_layout(norm.data(), out, m.rows, m.cols, info) == RKNN_SUCC;
    }
    return false;
}

Matrix read_matrix(const void* src, const rknn_matmul_tensor_attr& attr, int rows, int cols) {
    const auto* in = static_cast<const uint8_t*>(src);
    Matrix m;
    m.rows = rows, m.cols = cols;
    m.values.resize(static_cast<size_t>(rows) * cols);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            size_t i = static_cast<size_t>(r) * cols + c;
            if (attr.n_dims == 3) {
                const int s = static_cast<int>(attr.dims[2]);
                i = static_cast<size_t>(c / s) * rows * s + static_cast<size_t>(r) * s + c % s;
            }
            m.values[static_cast<size_t>(r) * cols + c] = get(in, i, attr.type);
        }
    return m;
}

Matrix reference_matmul(const Matrix& a, const Matrix& b, double a_scale, int a_zp, double b_scale, int b_zp) {
    Matrix c;
    c.rows = a.rows, c.cols = b.cols;
    c.values.assign(static_cast<size_t>(c.rows) * c.cols, 0.0);
    for (int r = 0; r < a.rows; ++r)
        for (int n = 0; n < b.cols; ++n) {
            double sum = 0;
            for (int k = 0; k < a.cols; ++k) sum += (a.at(r, k) - a_zp) * (b.at(k, n) - b_zp);
            c.values[static_cast<size_t>(r) * c.cols + n] = sum * a_scale * b_scale;
        }
    return c;
}

bool same_result(const Matrix& got, const Matrix& want, rknn_tensor_type c_type, int k, double c_scale, int c_zp) {
    for (int r = 0; r < got.rows; ++r)
        for (int c = 0; c < got.cols; ++c) {
            const double g = got.at(r, c), w = want.at(r, c);
            double expected = w, tolerance = 0;
            switch (c_type) {
            case RKNN_TENSOR_INT32: break;
            case RKNN_TENSOR_INT16: expected = std::fmax(-32768.0, std::fmin(32767.0, w)); break;
            case RKNN_TENSOR_INT8:
                expected = std::fmax(-128.0, std::fmin(127.0, std::nearbyint(w / c_scale) + c_zp));
                tolerance = 1;
                break;
            case RKNN_TENSOR_FLOAT32: tolerance = 1e-6 * k * (1 + std::fabs(w)); break;
            default: tolerance = 1e-3 * (1 + std::fabs(w)) + 1e-4 * k; break;  // float16
            }
            if (std::fabs(g - expected) > tolerance) {
                std::printf("C[%d][%d] = %f, the CPU reference gives %f\n", r, c, g, expected);
                return false;
            }
        }
    return true;
}

}  // namespace examples
