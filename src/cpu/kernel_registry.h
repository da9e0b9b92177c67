// The CPU kernel table: one entry per op type, with the reference kernel and,
// for ops the NPU runs, the integer kernel that follows the NPU's arithmetic.
// (src/graph/op_schema has the matching shape table; a test checks that the
// two cover the same ops.)
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::cpu {

struct KernelArgs {
    const graph::Op& op;
    std::vector<const HostTensor*> inputs;  // nullptr for an omitted optional input
    std::vector<HostTensor*> outputs;       // allocated with their inferred shapes
};

using KernelFn = Status (*)(const KernelArgs& args);

// Bit masks of dtypes a reference kernel handles as they are. Any other input
// dtype is converted to float32 by the executor first (and back afterwards).
constexpr uint32_t dtype_bit(graph::DType d) { return 1u << static_cast<unsigned>(d); }
constexpr uint32_t kFloat32Only = dtype_bit(graph::DType::kFloat32);
constexpr uint32_t kAllDTypes = 0xffffffffu;
constexpr uint32_t kNumericDTypes =
    dtype_bit(graph::DType::kFloat32) | dtype_bit(graph::DType::kFloat64) | dtype_bit(graph::DType::kInt8) |
    dtype_bit(graph::DType::kUInt8) | dtype_bit(graph::DType::kInt16) | dtype_bit(graph::DType::kUInt16) |
    dtype_bit(graph::DType::kInt32) | dtype_bit(graph::DType::kUInt32) | dtype_bit(graph::DType::kInt64) |
    dtype_bit(graph::DType::kUInt64);

struct KernelEntry {
    graph::OpType type;
    KernelFn run;             // the reference kernel
    uint32_t native_dtypes;   // dtypes `run` takes directly
    KernelFn run_int8;        // NPU-arithmetic kernel on quantised int8 tensors; nullptr if none
    // Moves or selects elements without computing on them: quantised tensors
    // pass through unchanged when inputs and outputs share their quantisation.
    bool moves_data;
    // `run` writes every element of its float32 outputs, so the executor
    // hands it storage that is not zeroed first.
    bool writes_whole_output = false;
};

// nullptr when no kernel exists for the type.
const KernelEntry* find_kernel(graph::OpType type);

}  // namespace rknn::cpu
