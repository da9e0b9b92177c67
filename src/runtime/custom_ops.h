// The custom ops of one context (rknn_custom_op.h): user kernels for the op
// types the model keeps as custom ops (rknn_convert --custom-op).
//
// Each custom op node of the model gets its own rknn_custom_op_context, so
// `init`, `destroy` and `priv_data` are per node (runtime-spec 7.3). A type is
// registered once, in one rknn_register_custom_ops call or across several;
// `init` runs then, `prepare` and `compute` on every run, `destroy` when the
// context goes. Callbacks see float32 NCHW tensors (int64, int32 and bool
// ones as the model declares them) in a dma-buf the runtime owns: the
// node's inputs are converted into it before `compute` and its outputs
// converted back into the model's dtypes after it.
//
// An `init` that returns RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE asks for the
// runtime's own kernel of that op type; that works where the type is an
// operator the CPU kernels implement (ArgMax, Sigmoid, ...).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "driver/kernel_driver_factory.h"
#include "graph/graph.h"
#include "npu/placement.h"
#include "rknn_custom_op.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {

class GpuDevice;

class CustomOps {
public:
    // `driver` null: the callbacks' tensors live in host memory (mem.fd -1),
    // for tools that run the graph on the host (the converter).
    CustomOps(const graph::Graph& g, std::shared_ptr<driver::OpenedDriver> driver);
    ~CustomOps();  // runs `destroy` of every node whose `init` succeeded
    CustomOps(const CustomOps&) = delete;
    CustomOps& operator=(const CustomOps&) = delete;

    bool is_custom(int32_t op) const;
    // Whether the model has custom ops of `type` that nobody registered yet.
    bool has_unregistered_type(const std::string& type) const;
    // rknn_register_custom_ops: every entry of `ops` is checked before any is
    // registered; `init` then runs per node of the type, with the tensors of
    // graph `g` (the plan the context runs now). Nothing stays registered
    // from a call that fails.
    // `from_plugin`: PluginLibraries registers; a client's registration of the
    // same type later replaces such an op (its destroy runs first). When the
    // client's call fails, the plugin's op is registered again.
    Status register_ops(const rknn_custom_op* ops, uint32_t count, const graph::Graph& g, bool from_plugin = false);
    // Undoes a client's register_ops(ops, count) that succeeded (its destroy
    // runs): the batch copies' registration is one, and a later copy failed.
    // A plugin's op that the client's replaced is registered again.
    void unregister_ops(const rknn_custom_op* ops, uint32_t count, const graph::Graph& g);
    // kFailedPrecondition naming the model's custom op types nobody registered.
    Status check_all_registered() const;
    // Where one run of a custom op spent its time (ns): its inputs into the
    // callbacks' form, the callbacks (or the CPU kernel standing in for
    // them), and its outputs back.
    struct Timing {
        int64_t convert_in_ns = 0, callbacks_ns = 0, convert_out_ns = 0;
        bool on_gpu = false;  // the GPU ran this run's compute (not the CPU stand-in)
    };
    // A device cube an input is read from, or an output written to, directly
    // (cube_float.h) instead of through `values`; null data: none.
    struct Cube {
        uint8_t* data = nullptr;
        uint64_t bytes = 0;
    };
    // One run of custom op `op` of graph `g`: its inputs from `values` (or
    // the graph's constants, or `in_cubes`) into the callbacks' form,
    // `prepare`, `compute`, and its outputs back into `values` in their
    // declared dtypes (or into `out_cubes`, in `form`). The cube lists are
    // empty or one per input / output.
    Status run(int32_t op, const graph::Graph& g, std::vector<cpu::HostTensor>& values,
               const NativeForm& form = NativeForm(), const std::vector<Cube>& in_cubes = {},
               const std::vector<Cube>& out_cubes = {}, Timing* timing = nullptr);
    // Whether op `op` runs registered callbacks (not the built-in kernel an
    // init asked for), so that its tensors may come and go as cubes.
    bool runs_callbacks(int32_t op) const;
    // How op `op`'s callbacks see tensor `t`: as float32, in the model's own
    // dtype (which an init may ask for with pass_through), or both (a tensor
    // the op takes twice, once each way).
    enum class Seen { kFloat32, kOwnDtype, kMixed };
    Seen seen_as(int32_t op, int32_t t, const graph::Graph& g) const;
    // Whether tensor `t` is read by op `op` alone (and is no graph output).
    bool read_only_by(int32_t t, int32_t op) const;
    // Whether tensor `t` is read by NPU ops alone under `placements` (and is
    // no graph output).
    bool read_only_on_npu(int32_t t, const std::vector<npu::Placement>& placements) const;

    struct Node;  // one custom op node: its callbacks, context and tensors

private:
    Status init_node(Node& node, const graph::Graph& g);
    Status describe_tensors(Node& node, const graph::Graph& g);
    Status take_own_dtypes(Node& node, const graph::Graph& g, const std::string& named);
    Status run_builtin(Node& node, const graph::Graph& g, std::vector<cpu::HostTensor>& values);
    // A GPU op's CPU stand-in: the runtime's kernel of its type, on the
    // callbacks' tensors in the staging.
    Status make_cpu_fallback(Node& node, const graph::Graph& g);
    Status run_cpu_fallback(Node& node);
    void destroy_node(Node& node);
    // destroy_node, and the node is no longer registered.
    void forget_node(Node& node);
    // Registers again the plugins' ops of `types` whose nodes a client's
    // registration replaced and then gave up (a warning when one fails).
    void give_back_to_plugins(const std::set<std::string>& types, const graph::Graph& g) noexcept;
    static void restore_context(Node& node);

    std::shared_ptr<driver::OpenedDriver> driver_;
    std::shared_ptr<GpuDevice> gpu_device_;  // opened at the first GPU op's registration
    std::vector<std::unique_ptr<Node>> nodes_;
    std::map<std::string, rknn_custom_op> plugin_ops_;  // per type: what its plugin registered
    std::vector<int32_t> node_of_op_;  // per op: index into nodes_, -1 for other ops
    std::vector<std::vector<int32_t>> readers_;  // per tensor: the ops reading it
    std::vector<bool> graph_output_;             // per tensor
};

// rknn_custom_op_get_op_attr: the attribute `name` of the node `op_ctx`
// belongs to ("name": the node's name as UINT8 text). `out` is left zeroed
// (n_elems 0, data NULL) when there is no such attribute; an op_ctx the
// runtime did not hand out is an error.
Status custom_op_attr(const rknn_custom_op_context* op_ctx, const char* name, rknn_custom_op_attr* out);

}  // namespace rknn::runtime
