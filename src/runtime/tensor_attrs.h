// rknn_tensor_attr as the vendor runtime fills it, for the queries on a
// context's inputs and outputs.
//
// INPUT_ATTR: 4-D inputs as NHWC ([N, H, W, C], w_stride = W), others in the
// model's shape as UNDEFINED; OUTPUT_ATTR: 4-D outputs as NCHW, others
// UNDEFINED, w_stride 0. Types are the model tensors' own (INT8 with the
// affine zero point and scale for quantised tensors, FLOAT16 with scale 1).
// NATIVE_*: what the runtime stores. Inputs of 1, 3 or 4 channels that only
// convolutions read are NHWC images ([1, H, W, C], w_stride = the row pitch,
// size_with_stride = H x pitch x C elements), as the vendor's are. Other
// inputs and outputs the NPU reads or
// writes are NC1HWC2 cubes ([1, C1, H, W, C2], size_with_stride = the cube's
// bytes) when 4-D, and for [M, K] matrices of several rows (M one-pixel rows:
// [1, C1, M, 1, C2]); a [1, K] row's cube holds its K values first, so it
// stays UNDEFINED (size_with_stride: the cube's bytes, padded to 16-byte atoms).
// Tensors kept on the CPU are NCHW / UNDEFINED.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "graph/graph.h"
#include "rknn_api.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {

// The rknn_tensor_type of a graph dtype (RKNN_TENSOR_TYPE_MAX when none).
rknn_tensor_type to_rknn_type(graph::DType dtype);
// Whether `cmd` is a query answered with an rknn_tensor_attr (INPUT_ATTR,
// OUTPUT_ATTR and their NATIVE / CURRENT forms).
bool is_tensor_attr_query(int cmd);
// Bytes of one element of `type` (0 for unknown or sub-byte types).
uint32_t rknn_type_size(rknn_tensor_type type);

enum class AttrKind { kUser, kNative, kNativeNhwc };

// Fills everything but `index` (which the caller keeps).
// `packed_row_pixels` > 0: the device holds the tensor as a channel-packed
// image with that row pitch (native_tensor.h), reported as NHWC. `form`:
// how the SoC lays out native cubes.
void fill_tensor_attr(const graph::Tensor& t, bool is_input, AttrKind kind, bool on_device, uint32_t packed_row_pixels,
                      const NativeForm& form, rknn_tensor_attr* attr);

}  // namespace rknn::runtime
