#include "cpu/matmul_reference.h"

#include <cstddef>

namespace rknn::cpu {

void matmul_int_reference(int64_t m, int64_t k, int64_t n, const int32_t* a, int32_t a_zp, float a_scale,
                          const int32_t* bt, const MatmulBQuant& b, int64_t* raw, double* real) {
    const int64_t group = b.mode == MatmulBQuant::Mode::kGroup && b.group_size > 0 ? b.group_size : k;
    for (int64_t row = 0; row < m; ++row) {
        const int32_t* a_row = a + row * k;
        for (int64_t col = 0; col < n; ++col) {
            const int32_t* b_row = bt + col * k;
            int64_t total = 0;
            double value = 0.0;
            for (int64_t start = 0; start < k; start += group) {
                const int64_t q = b.at(start, col, n);
                const int32_t b_zp = b.zp.empty() ? 0 : b.zp[static_cast<size_t>(q)];
                int64_t sum = 0;
                for (int64_t i = start; i < start + group && i < k; ++i)
                    sum += static_cast<int64_t>(a_row[i] - a_zp) * (b_row[i] - b_zp);
                total += sum;
                if (real != nullptr) {
                    const double b_scale = b.scale.empty() ? 1.0 : b.scale[static_cast<size_t>(q)];
                    value += static_cast<double>(a_scale) * b_scale * static_cast<double>(sum);
                }
            }
            raw[row * n + col] = total;
            if (real != nullptr) real[row * n + col] = value;
        }
    }
}

void matmul_float_reference(int64_t m, int64_t k, int64_t n, const float* a, const float* bt, float* c) {
    for (int64_t row = 0; row < m; ++row)
        for (int64_t col = 0; col < n; ++col) {
            float sum = 0.0f;
            for (int64_t i = 0; i < k; ++i) sum += a[row * k + i] * bt[col * k + i];
            c[row * n + col] = sum;
        }
}

}  // namespace rknn::cpu
