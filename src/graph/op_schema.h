// One table describing every op type: how many inputs and outputs it takes and
// how its output shapes follow from its inputs. The CPU kernels have their own
// table (src/cpu/kernel_registry), and a test checks that both cover every op.
#pragma once

#include <vector>

#include "graph/shape_inference.h"

namespace rknn::graph {

using InferFn = Status (*)(const Op& op, const std::vector<const ValueInfo*>& inputs, std::vector<ValueInfo>& outputs);

struct OpSchema {
    OpType type;
    int min_inputs;
    int max_inputs;   // -1: variadic
    int min_outputs;
    int max_outputs;
    InferFn infer;    // nullptr: output shapes come from the model (custom ops)
};

// nullptr for kUnknown or a value outside the enum.
const OpSchema* op_schema(OpType type);

// Checks the input/output counts of `op` against its schema.
Status check_arity(const Op& op);

}  // namespace rknn::graph
