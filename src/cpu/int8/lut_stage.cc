#include "cpu/int8/lut_stage.h"

#include <algorithm>
#include <cmath>

namespace rknn::cpu::int8 {

bool needs_lut(graph::OpType type) {
    return kernels::is_activation(type) && type != graph::OpType::kRelu && type != graph::OpType::kClip &&
           type != graph::OpType::kLeakyRelu && type != graph::OpType::kIdentity;
}

int64_t LutStage::apply(int64_t v) const {
    const int64_t u = std::clamp<int64_t>(v, -kDomain, kDomain) + kDomain;
    const int64_t i = u >> kIndexShift;
    const int64_t f = u & ((1 << kIndexShift) - 1);
    int64_t t = table[static_cast<size_t>(i)];
    if (i + 1 < kEntries) t += round_shift((table[static_cast<size_t>(i) + 1] - t) * f, kIndexShift);
    return round_shift(t * out.multiplier(0), out.shift);
}

LutStage make_lut_stage(const kernels::Activation& act, float lo, float hi, float out_scale) {
    LutStage s;
    const double extent = std::max({std::fabs(static_cast<double>(lo)), std::fabs(static_cast<double>(hi)), 1e-6});
    s.in_scale = extent / LutStage::kDomain;
    std::vector<double> values(LutStage::kEntries);
    double peak = 0.0;
    for (int i = 0; i < LutStage::kEntries; ++i) {
        const double x = (static_cast<double>(i) * (1 << LutStage::kIndexShift) - LutStage::kDomain) * s.in_scale;
        values[i] = kernels::apply_activation(act, static_cast<float>(x));
        peak = std::max(peak, std::fabs(values[i]));
    }
    s.table_scale = peak > 0.0 ? peak / 32767.0 : 1.0;
    s.table.resize(LutStage::kEntries);
    for (int i = 0; i < LutStage::kEntries; ++i) {
        s.table[i] = static_cast<int16_t>(std::clamp<int64_t>(round_even(values[i] / s.table_scale), -32768, 32767));
    }
    s.out = make_requant(s.table_scale / out_scale);
    return s;
}

}  // namespace rknn::cpu::int8
