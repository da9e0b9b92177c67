// Host kernels for custom op types, for tools that run a model's float or
// int8 graph on the CPU: the converter's calibration, bias correction and
// accuracy analysis run a user's custom op through them (rknn_convert
// --custom-op-plugin). The runtime never consults them: on a context, a
// custom op runs what the client registered (runtime/custom_ops.h).
//
// Registered once per process, before the graphs run; the GraphExecutor
// then treats an op of that custom type like one with a built-in kernel.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::cpu {

// Computes op `op` of `g` from `values` (indexed by tensor; constants come
// from the graph) and stores its outputs there.
using CustomKernel = std::function<Status(const graph::Graph& g, int32_t op, std::vector<HostTensor>& values)>;

void register_custom_kernel(const std::string& type, CustomKernel kernel);
// Null when none is registered for `type`.
const CustomKernel* find_custom_kernel(const std::string& type);

}  // namespace rknn::cpu
