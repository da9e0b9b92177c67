// Conversions between a device cube and float32 NCHW in one pass, for the
// tensors a custom op's callbacks read and write (custom_ops.h): an int8
// cube with one scale is dequantised, a float16 one widened, and back, with
// the arithmetic of unpack_native_into + cpu::to_float32_into and of
// cpu::from_float32 + pack_native, so the values are those of the two-step
// path. Channels are shared out over the host's threads.
#pragma once

#include <cstdint>

#include "graph/tensor.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {

// Whether `t` has a dense cube (RK3588 form, no packed image) of int8 with
// one scale or of float16, which the functions below convert.
bool cube_converts_to_float32(const graph::Tensor& t, const NativeForm& form, uint32_t packed_row_pixels);

// The cube of `t` at `src` (`src_bytes` long) into t's element count of
// floats at `dst`, NCHW.
Status cube_to_float32(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& t, const NativeForm& form,
                       float* dst);
// Float32 NCHW at `src` into the cube of `t` at `dst`, padding lanes zeroed.
Status float32_to_cube(const float* src, const graph::Tensor& t, const NativeForm& form, uint8_t* dst,
                       uint64_t dst_bytes);

// The same cubes without the float32 step, for callbacks that take a
// tensor in the model's own dtype: whether `t` has a dense cube of int8 (any
// quantisation) or float16, and its elements moved to and from NCHW in that
// dtype.
bool cube_moves_as_nchw(const graph::Tensor& t, const NativeForm& form, uint32_t packed_row_pixels);
Status cube_to_nchw(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& t, const NativeForm& form,
                    uint8_t* dst);
Status nchw_to_cube(const uint8_t* src, const graph::Tensor& t, const NativeForm& form, uint8_t* dst,
                    uint64_t dst_bytes);

}  // namespace rknn::runtime
