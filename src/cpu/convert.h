// Element type conversions between host tensors: float16/bfloat16 widening,
// (de)quantisation with a tensor's QuantParams, and casts.
//
// Quantisation rounds half to even and saturates to the integer type's range:
// q = clamp(round(x / scale) + zero_point).
#pragma once

#include "base/status.h"
#include "cpu/host_tensor.h"

namespace rknn::cpu {

// A float32 copy of `src`: widened floats, dequantised quantised integers
// ((q - zp) * scale, per-channel when the params say so), or cast integers/bools.
HostTensor to_float32(const HostTensor& src);
// The same into `dst`, which holds src.numel() floats.
void to_float32_into(const HostTensor& src, float* dst);

// Writes float32 `src` into `dst` (same element count) in dst's dtype, using
// dst.quant when it is quantised. Non-quantised integers are rounded and saturated.
Status from_float32(const HostTensor& src, HostTensor* dst);

// Per-tensor int8 codes of `n` floats: clamp(nearbyint(x / scale) + zp) in
// [-128, 127], exactly as from_float32 gives them (vectorised, and threaded
// for large n). scale > 0. A NaN gets `nan_code`: 0 as in from_float32
// (QuantizeLinear's clamp gives -128).
void quantize_int8(const float* values, int64_t n, double scale, double zp, int8_t* codes, int8_t nan_code = 0);

// Element-wise cast with ONNX Cast semantics between any two dtypes (no quantisation).
Status cast_tensor(const HostTensor& src, HostTensor* dst);

// Reads element i of any numeric tensor as double (no dequantisation).
double element_as_double(const HostTensor& t, int64_t i);

}  // namespace rknn::cpu
