// Per-op shape rules used by the op schema table (internal to src/graph).
#pragma once

#include "graph/op_schema.h"

namespace rknn::graph::rules {

// shape_rules_elementwise.cc
Status same_as_input0(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status broadcast_binary(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status broadcast_compare(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status broadcast_variadic(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status where(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status cast(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status dropout(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status quantize_linear(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status dequantize_linear(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status reduce(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status arg_reduce(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status layer_normalization(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status batch_normalization(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);

// shape_rules_nn.cc
Status conv(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status conv_transpose(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status pool(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status global_pool(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status gemm(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status matmul(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);

// shape_rules_tensor.cc
Status concat(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status split(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status slice(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status reshape(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status flatten(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status squeeze(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status unsqueeze(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status transpose(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status pad(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status resize(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status gather(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status depth_to_space(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status space_to_depth(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status tile(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status expand(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status shape_of(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status constant_of_shape(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);
Status constant(const Op&, const std::vector<const ValueInfo*>&, std::vector<ValueInfo>&);

}  // namespace rknn::graph::rules
