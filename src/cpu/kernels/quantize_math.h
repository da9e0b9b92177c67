// The arithmetic of QuantizeLinear and DequantizeLinear for one value. The
// reference kernels use it, and so does the runtime when it converts device
// cubes between float16 and int8 through tables sampled from it
// (runtime/cube_requant.h): both then give the same codes by construction.
#pragma once

#include <cmath>

namespace rknn::cpu::kernels {

// round-half-even(x / scale) + zero_point, saturated to [lo, hi]. A NaN
// input saturates to lo (fmax drops it).
inline double quantize_value(double x, double scale, double zero_point, double lo, double hi) {
    return std::fmin(std::fmax(std::nearbyint(x / scale) + zero_point, lo), hi);
}

// (code - zero_point) * scale, rounded once to float32.
inline float dequantize_value(double code, double scale, double zero_point) {
    return static_cast<float>((code - zero_point) * scale);
}

}  // namespace rknn::cpu::kernels
