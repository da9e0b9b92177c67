// The CPU conversions of the general API: a client's rknn_input into the
// value of a graph input (NCHW, the model's dtype and quantisation), and a
// graph output's value into what rknn_outputs_get hands back.
//
// Inputs: data in the input tensor's own type (INT8 for a quantised model,
// FLOAT16 for an fp16 one) is taken as already normalised and quantised, and
// only its layout changes; any other accepted type (FLOAT32, FLOAT16, INT8,
// UINT8, INT16) holds raw values: the model's mean/std are applied, then the
// result is quantised or rounded to the model's type. 4-D inputs come as NHWC
// or NCHW (UNDEFINED reads as the model's NCHW); other ranks in model order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"
#include "rknn_api.h"

namespace rknn::runtime {

// `pre` may be nullptr (no pre-processing in the model).
StatusOr<cpu::HostTensor> convert_input(const rknn_input& input, const graph::Tensor& declared,
                                        const graph::InputPreprocess* pre);

// Bytes rknn_outputs_get writes for `declared` (NCHW / model order).
size_t output_bytes(const graph::Tensor& declared, bool want_float);
// `value` (NCHW, model dtype) -> `dst`: float32 dequantised, or the raw dtype.
Status convert_output(const cpu::HostTensor& value, bool want_float, void* dst, size_t dst_bytes);

// A 4-D tensor between NHWC and NCHW, for elements of `elem` bytes; `nchw`
// is its NCHW shape.
void nhwc_to_nchw(const uint8_t* src, uint8_t* dst, const graph::Shape& nchw, size_t elem);
void nchw_to_nhwc(const uint8_t* src, uint8_t* dst, const graph::Shape& nchw, size_t elem);

}  // namespace rknn::runtime
