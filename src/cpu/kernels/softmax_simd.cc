// Highway re-includes this file once per SIMD target (foreach_target.h); the
// part under HWY_ONCE is compiled once and dispatches to the best target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/kernels/softmax_simd.cc"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cmath>
#include <cstring>

#include "cpu/kernels/softmax_simd.h"

HWY_BEFORE_NAMESPACE();
namespace rknn::cpu::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

// The row's largest value; `finite` is false when a value is NaN or infinite
// (x - x is then NaN, and so is their sum).
float RowMax(const float* x, int64_t n, bool* finite) {
    const D d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    V top = hn::Set(d, -INFINITY), check = hn::Zero(d);
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        const V v = hn::LoadU(d, x + i);
        top = hn::Max(top, v);
        check = hn::Add(check, hn::Sub(v, v));
    }
    float best = hn::GetLane(hn::MaxOfLanes(d, top));
    float rest = hn::GetLane(hn::SumOfLanes(d, check));
    for (; i < n; ++i) {
        best = x[i] > best ? x[i] : best;
        rest += x[i] - x[i];
    }
    *finite = !std::isnan(rest);
    return best;
}

// out[i] = exp(x[i] - max): every argument is <= 0, inside Exp's range.
void ShiftedExps(const float* x, float max, float* out, int64_t n) {
    const D d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    const V m = hn::Set(d, max);
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Exp(d, hn::Sub(hn::LoadU(d, x + i), m)), d, out + i);
    if (i == n) return;
    HWY_ALIGN float tail[hn::MaxLanes(d)];
    for (size_t l = 0; l < hn::MaxLanes(d); ++l) tail[l] = max;  // exp(0) in the unused lanes
    const size_t rest = static_cast<size_t>(n - i);
    std::memcpy(tail, x + i, rest * sizeof(float));
    hn::Store(hn::Exp(d, hn::Sub(hn::Load(d, tail), m)), d, tail);
    std::memcpy(out + i, tail, rest * sizeof(float));
}

const char* SoftmaxTargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace rknn::cpu::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rknn::cpu::kernels {

HWY_EXPORT(RowMax);
HWY_EXPORT(ShiftedExps);
HWY_EXPORT(SoftmaxTargetName);

const char* softmax_simd_target() { return HWY_DYNAMIC_DISPATCH(SoftmaxTargetName)(); }

bool softmax_row_simd(const float* src, float* dst, int64_t n) {
    if (n < 1) return false;
    bool finite = false;
    const float max = HWY_DYNAMIC_DISPATCH(RowMax)(src, n, &finite);
    if (!finite) return false;
    HWY_DYNAMIC_DISPATCH(ShiftedExps)(src, max, dst, n);
    // Eight running sums in double, lane-independent so the compiler can
    // keep them in vectors; the largest term is 1, so the sum is >= 1.
    double sums[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) sums[j] += static_cast<double>(dst[i + j]);
    double total = 0.0;
    for (; i < n; ++i) total += static_cast<double>(dst[i]);
    for (double s : sums) total += s;
    const double inverse = 1.0 / total;
    for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<float>(static_cast<double>(dst[k]) * inverse);
    return true;
}

}  // namespace rknn::cpu::kernels
#endif  // HWY_ONCE
