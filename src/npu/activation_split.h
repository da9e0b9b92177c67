// fp16 convolutions and products whose fused activation the NPU's float
// pipeline cannot run (the lookup-table ones: Sigmoid, Tanh, SiLU, GELU, ...;
// docs/codegen.md "Not yet") would take all their multiply-accumulates to the
// CPU with it. The runtime splits them before placement: the op without the
// activation writes an fp16 tensor on the NPU, and the activation runs alone
// after it on the CPU. The split adds one rounding to fp16 between the two.
#pragma once

#include "graph/graph.h"
#include "hw/soc_profile.h"

namespace rknn::npu {

// Splits every such op of `g` whose bare form the NPU takes; returns how many.
// New tensors and ops are appended, so existing indices stay valid.
int split_activations_the_npu_lacks(graph::Graph* g, const hw::SocProfile& soc);

}  // namespace rknn::npu
