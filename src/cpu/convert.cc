#include "cpu/convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "base/half.h"
#include "base/parallel.h"

namespace rknn::cpu {
namespace {

template <typename T>
T saturate_round(double x) {
    if (std::isnan(x)) return T(0);
    const double r = std::nearbyint(x);  // default rounding mode: half to even
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
}

// The size of the slice a per-channel parameter applies to: elements after the axis.
int64_t inner_size(const Shape& shape, int32_t axis) {
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    return inner;
}

size_t channel_of(const HostTensor& t, int64_t i, int64_t inner) {
    if (!t.quant.per_channel() || t.quant.axis < 0 || t.quant.axis >= t.rank()) return 0;
    return static_cast<size_t>((i / inner) % t.dim(t.quant.axis));
}

// Element-wise conversions of large tensors run in chunks over the host's
// threads (each element is converted on its own, so the split cannot change
// a result); small ones stay on the caller's thread.
constexpr int64_t kChunk = int64_t{1} << 15;
void in_chunks(int64_t n, const std::function<void(int64_t begin, int64_t end)>& body) {
    if (n < 2 * kChunk) {
        body(0, n);
        return;
    }
    parallel_for(n, kChunk, body);
}

// saturate_round(nearbyint(x / scale) + zp) for int8, fast and exact.
// Loops the compiler vectorises (with -fno-trapping-math, src/CMakeLists.txt)
// round x * (1 / scale) in float: adding and subtracting 1.5 * 2^23 rounds a
// float below 2^22 in magnitude to an integer, half to even, as nearbyint
// does in the default rounding mode. The product may differ from the exact
// quotient by a few float ulps (under 3e-4 once clamped to +-1024, beyond
// which every code saturates anyway), so it can only round differently when
// the quotient lies within that of a half; those few values are computed
// again in double, exactly as the scalar path does. NaN gives code 0.
// Assumes IEEE arithmetic in the default rounding mode (no -ffast-math).
// An AVX2 clone on x86 (an ifunc: not under the sanitizers, whose runtime is
// not up yet when the resolver runs).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("avx2", "default")))
#endif
void quantize_int8_per_tensor(const float* values, int64_t n, double scale, double zp, int8_t* codes, int8_t nan_code) {
    constexpr float kRound = 12582912.0f;
    constexpr int64_t kBlock = 256;
    const float inverse = static_cast<float>(1.0 / scale);
    const float zero_point = static_cast<float>(zp);
    const float nan_value = nan_code;
    float rounded[kBlock];
    int32_t near_half[kBlock];  // per element, so that only those take the double path
    for (int64_t start = 0; start < n; start += kBlock) {
        const int64_t count = std::min(kBlock, n - start);
        const float* x = values + start;
        int32_t any_near_half = 0;
        for (int64_t i = 0; i < count; ++i) {
            float t = x[i] * inverse;
            t = t < -1024.0f ? -1024.0f : t;
            t = t > 1024.0f ? 1024.0f : t;  // NaN stays NaN
            const float r = (t + kRound) - kRound;
            const float distance = t - r;  // within [-0.5, 0.5]
            near_half[i] = (distance > 0.4995f) | (distance < -0.4995f);
            any_near_half |= near_half[i];
            float c = r + zero_point;
            c = c < -128.0f ? -128.0f : c;
            c = c > 127.0f ? 127.0f : c;
            rounded[i] = c == c ? c : nan_value;
        }
        for (int64_t i = 0; i < count; ++i) codes[start + i] = static_cast<int8_t>(static_cast<int32_t>(rounded[i]));
        if (any_near_half == 0) continue;
        // 1 / scale and the product each round once, so t errs by under
        // 2^-23 of |t| <= 1024 (1.2e-4); every element it may round the wrong
        // way is flagged.
        for (int64_t i = 0; i < count; ++i) {
            if (near_half[i] == 0) continue;
            const double q = static_cast<double>(x[i]) / scale;
            if (std::fabs(std::fabs(q - std::trunc(q)) - 0.5) < 1e-3) codes[start + i] = saturate_round<int8_t>(std::nearbyint(q) + zp);
        }
    }
}

template <typename T>
void store_rounded(HostTensor* dst, int64_t i, double value) {
    dst->data<T>()[i] = saturate_round<T>(value);
}

void store_double(HostTensor* dst, int64_t i, double value) {
    using graph::DType;
    switch (dst->dtype()) {
    case DType::kFloat32: dst->data<float>()[i] = static_cast<float>(value); break;
    case DType::kFloat64: dst->data<double>()[i] = value; break;
    case DType::kFloat16: dst->data<uint16_t>()[i] = float_to_half(static_cast<float>(value)); break;
    case DType::kBFloat16: dst->data<uint16_t>()[i] = float_to_bfloat16(static_cast<float>(value)); break;
    case DType::kInt8: store_rounded<int8_t>(dst, i, value); break;
    case DType::kUInt8: store_rounded<uint8_t>(dst, i, value); break;
    case DType::kInt16: store_rounded<int16_t>(dst, i, value); break;
    case DType::kUInt16: store_rounded<uint16_t>(dst, i, value); break;
    case DType::kInt32: store_rounded<int32_t>(dst, i, value); break;
    case DType::kUInt32: store_rounded<uint32_t>(dst, i, value); break;
    case DType::kInt64: store_rounded<int64_t>(dst, i, value); break;
    case DType::kUInt64: store_rounded<uint64_t>(dst, i, value); break;
    case DType::kBool: dst->data<uint8_t>()[i] = value != 0.0 ? 1 : 0; break;
    case DType::kUndefined: break;
    }
}

}  // namespace

double element_as_double(const HostTensor& t, int64_t i) {
    using graph::DType;
    switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kFloat16: return half_to_float(t.data<uint16_t>()[i]);
    case DType::kBFloat16: return bfloat16_to_float(t.data<uint16_t>()[i]);
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    case DType::kUInt32: return t.data<uint32_t>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kUInt64: return static_cast<double>(t.data<uint64_t>()[i]);
    case DType::kBool: return t.data<uint8_t>()[i] ? 1.0 : 0.0;
    case DType::kUndefined: break;
    }
    return 0.0;
}

HostTensor to_float32(const HostTensor& src) {
    HostTensor out = HostTensor::uninitialized(graph::DType::kFloat32, src.shape());  // to_float32_into writes all
    to_float32_into(src, out.data<float>());
    return out;
}

void to_float32_into(const HostTensor& src, float* dst) {
    const int64_t n = src.numel();
    if (src.dtype() == graph::DType::kInt8 && src.quant.is_quantized() && !src.quant.per_channel()) {
        // One scale: a table of the 256 codes' values, the same arithmetic as below.
        float table[256];
        for (int code = -128; code < 128; ++code)
            table[code + 128] = static_cast<float>((static_cast<double>(code) - src.quant.zero_point(0)) * src.quant.scale(0));
        const int8_t* codes = src.data<int8_t>();
        in_chunks(n, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) dst[i] = table[codes[i] + 128];
        });
        return;
    }
    if (src.quant.is_quantized() && graph::is_integer(src.dtype())) {
        const int64_t inner = src.quant.axis >= 0 ? inner_size(src.shape(), src.quant.axis) : 1;
        for (int64_t i = 0; i < n; ++i) {
            const size_t c = channel_of(src, i, inner);
            dst[i] = static_cast<float>((element_as_double(src, i) - src.quant.zero_point(c)) * src.quant.scale(c));
        }
        return;
    }
    if (src.dtype() == graph::DType::kFloat32) {
        std::memcpy(dst, src.raw(), src.byte_size());
        return;
    }
    if (src.dtype() == graph::DType::kFloat16) {
        const auto* halves = static_cast<const uint8_t*>(src.raw());
        in_chunks(n, [&](int64_t begin, int64_t end) {
            halves_to_floats(halves + 2 * begin, dst + begin, static_cast<size_t>(end - begin));
        });
        return;
    }
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(element_as_double(src, i));
}

void quantize_int8(const float* values, int64_t n, double scale, double zp, int8_t* codes, int8_t nan_code) {
    // The fast path's bounds: 1 / scale a finite float, and a zero point for
    // which the +-1024 clamp still saturates every code. Else the plain loop.
    if (1.0 / scale <= static_cast<double>(std::numeric_limits<float>::max()) && zp >= -896.0 && zp <= 896.0) {
        in_chunks(n, [&](int64_t begin, int64_t end) {
            quantize_int8_per_tensor(values + begin, end - begin, scale, zp, codes + begin, nan_code);
        });
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        const double q = std::nearbyint(static_cast<double>(values[i]) / scale) + zp;
        codes[i] = std::isnan(q) ? nan_code : saturate_round<int8_t>(q);
    }
}

Status from_float32(const HostTensor& src, HostTensor* dst) {
    if (src.dtype() != graph::DType::kFloat32 || src.numel() != dst->numel()) {
        return Status(StatusCode::kInternal, "from_float32 needs a float32 source of the same size");
    }
    const float* values = src.data<float>();
    const int64_t n = src.numel();
    if (dst->dtype() == graph::DType::kInt8 && dst->quant.is_quantized() && !dst->quant.per_channel()) {
        // One scale: the loop below without the per-element dispatch.
        const double scale = dst->quant.scale(0);
        const double zp = dst->quant.zero_point(0);
        int8_t* codes = dst->data<int8_t>();
        if (!(scale > 0)) {
            std::memset(codes, saturate_round<int8_t>(zp), static_cast<size_t>(n));
            return Status::ok();
        }
        quantize_int8(values, n, scale, zp, codes);
        return Status::ok();
    }
    if (dst->quant.is_quantized() && graph::is_integer(dst->dtype())) {
        const int64_t inner = dst->quant.axis >= 0 ? inner_size(dst->shape(), dst->quant.axis) : 1;
        for (int64_t i = 0; i < n; ++i) {
            const size_t c = channel_of(*dst, i, inner);
            const double scale = dst->quant.scale(c);
            const double q = scale > 0 ? static_cast<double>(values[i]) / scale : 0.0;
            store_double(dst, i, std::nearbyint(q) + dst->quant.zero_point(c));
        }
        return Status::ok();
    }
    if (dst->dtype() == graph::DType::kFloat16) {
        auto* halves = static_cast<uint8_t*>(dst->raw());
        in_chunks(n, [&](int64_t begin, int64_t end) {
            floats_to_halves(values + begin, halves + 2 * begin, static_cast<size_t>(end - begin));
        });
        return Status::ok();
    }
    for (int64_t i = 0; i < n; ++i) store_double(dst, i, values[i]);
    return Status::ok();
}

Status cast_tensor(const HostTensor& src, HostTensor* dst) {
    if (src.numel() != dst->numel()) return Status(StatusCode::kInternal, "cast between different sizes");
    const int64_t n = src.numel();
    const bool wide_int = src.dtype() == graph::DType::kInt64 || src.dtype() == graph::DType::kUInt64;
    const bool to_int = graph::is_integer(dst->dtype());
    if (wide_int && to_int) {
        // Integer to integer keeps the low bits (C semantics), exact for 64-bit values.
        for (int64_t i = 0; i < n; ++i) {
            uint64_t bits;
            std::memcpy(&bits, static_cast<const uint8_t*>(src.raw()) + i * 8, 8);
            std::memcpy(static_cast<uint8_t*>(dst->raw()) + i * graph::dtype_size(dst->dtype()), &bits,
                        graph::dtype_size(dst->dtype()));
        }
        return Status::ok();
    }
    for (int64_t i = 0; i < n; ++i) {
        double v = element_as_double(src, i);
        // Float to integer truncates toward zero (C semantics, as ONNX Cast).
        if (to_int && graph::is_float(src.dtype())) v = std::trunc(v);
        store_double(dst, i, v);
    }
    return Status::ok();
}

}  // namespace rknn::cpu
