// Runs a whole graph on the CPU reference kernels.
//
// Used by the converter (calibration, accuracy analysis, constant folding), by
// tests as the oracle, and as the runtime's CPU fallback. Precision follows the
// tensors' declared dtypes: ops run on their native dtypes; float16 and
// quantised inputs of float-only kernels are widened to float32 and the
// results rounded back to the declared type. Ops with an NPU-arithmetic int8
// kernel use it when their tensors are quantised int8.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"

namespace rknn::cpu {

struct KernelEntry;
struct KernelArgs;

class GraphExecutor {
public:
    // Called after each op with its outputs; returning an error stops the run.
    using Observer = std::function<Status(int32_t op_index, const std::vector<const HostTensor*>& outputs)>;

    struct Options {
        bool use_int8_kernels = true;   // false: every op computes in float (for comparisons)
        bool skip_unsupported = false;  // skip ops without a CPU kernel (and what depends on them)
    };

    static StatusOr<std::unique_ptr<GraphExecutor>> create(const graph::Graph& graph, Options options);
    static StatusOr<std::unique_ptr<GraphExecutor>> create(const graph::Graph& graph) {
        return create(graph, Options());
    }

    // Which kernels an op ran on.
    struct RunStats {
        int int8_ops = 0;       // NPU-arithmetic int8 kernels
        int reference_ops = 0;  // reference kernels
        int skipped_ops = 0;    // skip_unsupported
    };

    // `inputs`: one per graph input, in the input's declared dtype (quantised
    // inputs carry the tensor's QuantParams). Outputs come back likewise.
    Status run(const std::vector<HostTensor>& inputs, std::vector<HostTensor>* outputs,
               const Observer& observer = nullptr, RunStats* stats = nullptr) const;

    // Runs one op: reads its inputs from `values` (indexed by tensor id;
    // constants come from the graph) and stores its outputs there. The
    // runtime uses it for the ops placed on the CPU.
    Status run_op(int32_t op_index, std::vector<HostTensor>& values, RunStats* stats = nullptr) const;

    // One op's kernel call prepared once, for an op that runs again and again
    // on tensors that keep their shapes (the runtime's CPU steps): the
    // argument lists are built and the outputs allocated in `values` (whose
    // tensor objects must stay where they are), so running it allocates
    // nothing here; a kernel may still use scratch of its own. Only for ops
    // whose kernel writes the declared tensors as they are: an int8 kernel,
    // or a reference kernel on its native dtypes (quantised values passed
    // through by a data-moving op) with the declared output shapes. A float32
    // result declared float16 (a hybrid model's CPU op) is written to a
    // float32 scratch of the call's own and rounded into the declared tensor
    // after each run, when the kernel writes its whole output. Prepare runs
    // the call once; kUnimplemented, with the reason, when the op needs other
    // conversions (then run_op is the way).
    struct PreparedCall {
        std::shared_ptr<KernelArgs> args;
        Status (*fn)(const KernelArgs&) = nullptr;
        bool int8 = false;
        // Float32 results and the float16 tensors they are rounded into.
        struct Rounding {
            HostTensor result;
            HostTensor* declared = nullptr;
        };
        std::shared_ptr<std::vector<Rounding>> roundings;
    };
    StatusOr<PreparedCall> prepare_call(int32_t op_index, std::vector<HostTensor>& values) const;
    Status run_prepared(const PreparedCall& call) const;

    const graph::Graph& graph() const { return graph_; }
    const std::vector<int32_t>& order() const { return order_; }

private:
    GraphExecutor(const graph::Graph& graph, Options options) : graph_(graph), options_(options) {}
    bool runnable(const graph::Op& op, const std::vector<HostTensor>& values) const;
    Status run_kernel(const graph::Op& op, const KernelEntry& entry, bool int8,
                      const std::vector<const HostTensor*>& in, std::vector<HostTensor>& values) const;

    const graph::Graph& graph_;
    Options options_;
    std::vector<int32_t> order_;
    std::vector<int32_t> last_use_;           // per tensor: position of its last reader
    std::vector<HostTensor> constants_;       // views of the constant buffers
};

// Makes a tensor with the dtype, shape and quantisation a graph tensor declares.
HostTensor make_tensor_like(const graph::Tensor& tensor, const Shape& shape);

}  // namespace rknn::cpu
