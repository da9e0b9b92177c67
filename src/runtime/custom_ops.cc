#include "runtime/custom_ops.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "base/aligned_bytes.h"
#include "base/log.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "cpu/kernel_registry.h"
#include "graph/op_type.h"
#include "graph/topology.h"
#include "runtime/cube_float.h"
#include "runtime/custom_op_gpu.h"
#include "runtime/io_memory.h"
#include "runtime/tensor_attrs.h"

namespace rknn::runtime {

namespace {

constexpr uint64_t kTensorAlignment = 64;

// What rknn_custom_op_get_op_attr hands out for one attribute: its bytes
// live as long as the node.
struct AttrValue {
    rknn_tensor_type dtype = RKNN_TENSOR_FLOAT32;
    uint32_t n_elems = 0;
    std::vector<uint8_t> bytes;
};

template <typename T>
AttrValue attr_of(rknn_tensor_type dtype, const T* values, size_t count) {
    AttrValue v;
    v.dtype = dtype;
    v.n_elems = static_cast<uint32_t>(count);
    v.bytes.resize(count * sizeof(T) + 1);  // + 1: text stays NUL-terminated, empty arrays get an address
    if (count > 0) std::memcpy(v.bytes.data(), values, count * sizeof(T));
    return v;
}

AttrValue attr_of(const graph::Attribute& a) {
    switch (a.kind) {
    case graph::Attribute::Kind::kInt: return attr_of(RKNN_TENSOR_INT64, &a.i, 1);
    case graph::Attribute::Kind::kFloat: return attr_of(RKNN_TENSOR_FLOAT32, &a.f, 1);
    case graph::Attribute::Kind::kString: return attr_of(RKNN_TENSOR_UINT8, a.s.data(), a.s.size());
    case graph::Attribute::Kind::kInts: return attr_of(RKNN_TENSOR_INT64, a.ints.data(), a.ints.size());
    case graph::Attribute::Kind::kFloats: return attr_of(RKNN_TENSOR_FLOAT32, a.floats.data(), a.floats.size());
    }
    return {};
}

// The dtype a callback sees for a tensor of `dtype`: float32, except for
// plain integers and bools, which pass as the model declares them.
graph::DType callback_dtype(const graph::Tensor& t) {
    if (t.quant.is_quantized()) return graph::DType::kFloat32;
    switch (t.dtype) {
    case graph::DType::kInt64:
    case graph::DType::kInt32:
    case graph::DType::kBool: return t.dtype;
    default: return graph::DType::kFloat32;
    }
}

}  // namespace

struct CustomOps::Node {
    int32_t op = -1;
    std::string type, name;
    std::map<std::string, AttrValue> attrs;  // with "name"
    uint64_t token = 0;  // its key in the attribute index (internal_ctx holds a copy a callback may change)
    bool registered = false;
    bool from_plugin = false;  // registered by PluginLibraries; an explicit registration replaces it
    rknn_custom_op callbacks{};
    rknn_custom_op_context context{};
    bool destroy_due = false;  // init succeeded (or there is none)
    // init asked for the runtime's kernel: the graph it runs in, with this
    // node as the built-in op (made for the graph it was made from).
    bool builtin = false;
    std::unique_ptr<graph::Graph> builtin_graph;
    std::unique_ptr<cpu::GraphExecutor> builtin_executor;
    const graph::Graph* builtin_source = nullptr;
    // A GPU op: its kernel and tensor mirror. When the GPU cannot run it
    // (no OpenCL at registration, or a callback failing at a run), the
    // runtime's CPU kernel of the type runs instead, on the callbacks'
    // tensors: `cpu_fallback` holds that one op on tensors of their form.
    std::unique_ptr<GpuNode> gpu;
    std::unique_ptr<graph::Graph> cpu_fallback_graph;
    std::unique_ptr<cpu::GraphExecutor> cpu_fallback;
    // The callbacks' tensors, in `staging` (or `host_staging` without a
    // driver) at `offsets`.
    std::shared_ptr<IoMemory> staging;
    std::unique_ptr<AlignedBytes> host_staging;
    uint8_t* base = nullptr;  // of whichever holds them
    // The shapes of its tensors in the model's declared shapes: custom ops
    // keep their declared output shapes in every shape set, so a set that
    // changes their inputs cannot run them.
    std::vector<graph::Shape> declared_shapes;
    std::vector<uint64_t> offsets;  // inputs, then outputs
    // Tensors the op's init asked for in the model's own dtype (pass_through
    // set in their attr), not float32: inputs, then outputs; empty if none.
    std::vector<uint8_t> own_dtype;
    std::vector<rknn_custom_op_tensor> inputs, outputs;

    bool in_own_dtype(size_t k) const { return k < own_dtype.size() && own_dtype[k] != 0; }
    // The dtype its callbacks see for tensor `k` (inputs, then outputs) of `declared`.
    graph::DType seen_dtype(size_t k, const graph::Tensor& declared) const {
        return in_own_dtype(k) ? declared.dtype : callback_dtype(declared);
    }
};

namespace {

// Every live node, by the token in its context's internal_ctx, so that
// rknn_custom_op_get_op_attr can tell a context it handed out from any
// other pointer.
struct NodeIndex {
    std::mutex mutex;
    std::unordered_map<uint64_t, const void*> nodes;
    uint64_t next = 1;
};
NodeIndex& node_index() {
    static NodeIndex* index = new NodeIndex();  // never destroyed: contexts may outlive static teardown
    return *index;
}

}  // namespace

CustomOps::CustomOps(const graph::Graph& g, std::shared_ptr<driver::OpenedDriver> driver)
    : driver_(std::move(driver)), readers_(graph::consumers(g)), graph_output_(g.tensors.size(), false) {
    for (int32_t t : g.outputs) graph_output_[static_cast<size_t>(t)] = true;
    node_of_op_.assign(g.ops.size(), -1);
    for (size_t i = 0; i < g.ops.size(); ++i) {
        const graph::Op& op = g.ops[i];
        if (op.type != graph::OpType::kCustom) continue;
        auto node = std::make_unique<Node>();
        node->op = static_cast<int32_t>(i);
        node->type = op.custom_type;
        node->name = op.name;
        for (const graph::Attribute& a : op.attrs.items()) node->attrs[a.name] = attr_of(a);
        node->attrs["name"] = attr_of(RKNN_TENSOR_UINT8, op.name.data(), op.name.size());
        {
            NodeIndex& index = node_index();
            std::lock_guard<std::mutex> lock(index.mutex);
            const uint64_t token = index.next++;
            node->token = token;
            node->context.internal_ctx = static_cast<rknn_custom_op_interal_context>(token);
            index.nodes[token] = node.get();
        }
        for (const std::vector<int32_t>* list : {&op.inputs, &op.outputs})
            for (int32_t t : *list) node->declared_shapes.push_back(t >= 0 ? g.tensors[static_cast<size_t>(t)].shape : graph::Shape());
        node_of_op_[i] = static_cast<int32_t>(nodes_.size());
        nodes_.push_back(std::move(node));
    }
}

CustomOps::~CustomOps() {
    for (auto& node : nodes_) {
        destroy_node(*node);
        NodeIndex& index = node_index();
        std::lock_guard<std::mutex> lock(index.mutex);
        index.nodes.erase(node->token);
    }
}

bool CustomOps::is_custom(int32_t op) const {
    return op >= 0 && static_cast<size_t>(op) < node_of_op_.size() && node_of_op_[static_cast<size_t>(op)] >= 0;
}

// What a callback may have changed in its op_ctx and the runtime relies on:
// the token (the attribute index's key) and the target.
void CustomOps::restore_context(Node& node) {
    node.context.internal_ctx = static_cast<rknn_custom_op_interal_context>(node.token);
    node.context.target = node.callbacks.target;
    if (node.gpu != nullptr) node.gpu->fill(&node.context.gpu_ctx);
}

bool CustomOps::runs_callbacks(int32_t op) const {
    if (!is_custom(op)) return false;
    const Node& node = *nodes_[static_cast<size_t>(node_of_op_[static_cast<size_t>(op)])];
    return node.registered && !node.builtin;
}

bool CustomOps::read_only_by(int32_t t, int32_t op) const {
    if (t < 0 || static_cast<size_t>(t) >= readers_.size() || graph_output_[static_cast<size_t>(t)]) return false;
    for (int32_t reader : readers_[static_cast<size_t>(t)])
        if (reader != op) return false;
    return true;
}

bool CustomOps::read_only_on_npu(int32_t t, const std::vector<npu::Placement>& placements) const {
    if (t < 0 || static_cast<size_t>(t) >= readers_.size() || graph_output_[static_cast<size_t>(t)]) return false;
    for (int32_t reader : readers_[static_cast<size_t>(t)])
        if (static_cast<size_t>(reader) >= placements.size() || placements[static_cast<size_t>(reader)].target != npu::Target::kNpu)
            return false;
    return true;
}

bool CustomOps::has_unregistered_type(const std::string& type) const {
    for (const auto& node : nodes_)
        if (node->type == type && !node->registered) return true;
    return false;
}

void CustomOps::destroy_node(Node& node) {
    if (!node.destroy_due) return;
    node.destroy_due = false;
    if (node.callbacks.destroy == nullptr) return;
    restore_context(node);
    const int rc = node.callbacks.destroy(&node.context);
    if (rc != 0) RKNN_LOGW("custom op \"%s\" (%s): destroy returned %d", node.name.c_str(), node.type.c_str(), rc);
}

namespace {

Status invalid(const std::string& message) { return Status(StatusCode::kInvalidArgument, message); }

// The op type whose CPU kernel the runtime has for a custom op of `type`
// (kUnknown: none).
graph::OpType builtin_type(const std::string& type) {
    const graph::OpType builtin = graph::op_type_from_name(type);
    if (builtin == graph::OpType::kUnknown || builtin == graph::OpType::kCustom || cpu::find_kernel(builtin) == nullptr)
        return graph::OpType::kUnknown;
    return builtin;
}

// The target as the int the client stored. The enum's values span 0..3, so
// reading another value through the enum type is undefined; a client may
// store any int there.
int target_of(const rknn_custom_op& op) {
    static_assert(sizeof(rknn_target_type) == sizeof(int), "rknn_target_type is an int in the ABI");
    int value = 0;
    std::memcpy(&value, &op.target, sizeof(value));
    return value;
}

Status check_op(const rknn_custom_op& op, uint32_t index, const std::vector<std::string>& model_types) {
    const std::string at = "op[" + std::to_string(index) + "]";
    if (std::memchr(op.op_type, '\0', sizeof(op.op_type)) == nullptr)
        return invalid(at + ".op_type is not NUL-terminated");
    const std::string type = op.op_type;
    if (type.empty()) return invalid(at + ".op_type is empty");
    const std::string named = at + " (\"" + type + "\")";
    if (op.version < 1) return invalid(named + ": version " + std::to_string(op.version) + " (1 or more)");
    if (op.compute == nullptr) return invalid(named + ": compute is NULL (it is required)");
    if (op.compute_native != nullptr)
        return invalid(named + ": compute_native is reserved and must be NULL");
    if (target_of(op) != RKNN_TARGET_TYPE_CPU && target_of(op) != RKNN_TARGET_TYPE_GPU)
        return invalid(named + ": target " + std::to_string(target_of(op)) +
                                     " is neither RKNN_TARGET_TYPE_CPU (1) nor RKNN_TARGET_TYPE_GPU (2)");
    bool known = false;
    std::string list;
    for (const std::string& t : model_types) {
        known = known || t == type;
        list += (list.empty() ? "" : ", ") + t;
    }
    if (!known)
        return invalid(named + ": the model has no custom op of this type (it has: " +
                                     (list.empty() ? std::string("none") : list) + ")");
    if (target_of(op) == RKNN_TARGET_TYPE_GPU) {
        if (std::memchr(op.cl_kernel_name, '\0', sizeof(op.cl_kernel_name)) == nullptr || op.cl_kernel_name[0] == '\0')
            return invalid(named + ": cl_kernel_name is empty or not NUL-terminated (a GPU op names its kernel)");
        if (std::memchr(op.cl_build_options, '\0', sizeof(op.cl_build_options)) == nullptr)
            return invalid(named + ": cl_build_options is not NUL-terminated");
        if (op.cl_kernel_source == nullptr)
            return invalid(named + ": cl_kernel_source is NULL (a GPU op gives its OpenCL source or a file's path)");
    }
    return Status::ok();
}

}  // namespace

void CustomOps::forget_node(Node& node) {
    destroy_node(node);
    node.registered = false;
    node.builtin = false;
    node.gpu.reset();
    node.cpu_fallback.reset();
    node.cpu_fallback_graph.reset();
    node.own_dtype.clear();
}

void CustomOps::give_back_to_plugins(const std::set<std::string>& types, const graph::Graph& g) noexcept {
    for (const std::string& type : types) {
        const auto plugin = plugin_ops_.find(type);
        if (plugin == plugin_ops_.end()) continue;
        std::string why;
        try {
            // Nodes the failed call had not reached yet still hold the plugin's op.
            for (auto& node : nodes_)
                if (node->registered && node->type == type) forget_node(*node);
            const Status status = register_ops(&plugin->second, 1, g, /*from_plugin=*/true);
            if (status.is_ok()) {
                RKNN_LOGW("custom op type \"%s\": the client's registration was undone; the plugin's op is back",
                          type.c_str());
                continue;
            }
            why = status.message();
        } catch (const std::exception& e) {
            why = e.what();
        } catch (...) {
            why = "an exception";
        }
        RKNN_LOGW("custom op type \"%s\": the client's registration was undone and the plugin's op does not register "
                  "again (%s); the type is unregistered",
                  type.c_str(), why.c_str());
    }
}

void CustomOps::unregister_ops(const rknn_custom_op* ops, uint32_t count, const graph::Graph& g) {
    std::set<std::string> replaced;
    for (uint32_t i = 0; i < count; ++i)
        for (auto& node : nodes_)
            if (node->registered && !node->from_plugin && node->type == ops[i].op_type) {
                forget_node(*node);
                replaced.insert(node->type);
            }
    give_back_to_plugins(replaced, g);
}

Status CustomOps::register_ops(const rknn_custom_op* ops, uint32_t count, const graph::Graph& g, bool from_plugin) {
    std::vector<std::string> model_types;
    for (const auto& node : nodes_) {
        bool seen = false;
        for (const std::string& t : model_types) seen = seen || t == node->type;
        if (!seen) model_types.push_back(node->type);
    }
    for (uint32_t i = 0; i < count; ++i) {
        RKNN_RETURN_IF_ERROR(check_op(ops[i], i, model_types));
        const std::string type = ops[i].op_type;
        for (uint32_t j = 0; j < i; ++j)
            if (type == ops[j].op_type)
                return invalid("op[" + std::to_string(i) + "] (\"" + type + "\"): op[" + std::to_string(j) +
                               "] has the same type (each type is registered once)");
        for (const auto& node : nodes_)
            if (node->registered && node->type == type && (from_plugin || !node->from_plugin))
                return Status(StatusCode::kFailedPrecondition,
                              "op[" + std::to_string(i) + "] (\"" + type + "\"): this type is registered already");
    }
    // GPU ops: the device (opened at the first), then each type's program.
    // Without OpenCL a type the CPU kernels know runs on them instead, as
    // the vendor's runtime does; a program that does not build is the op's
    // error.
    std::vector<std::shared_ptr<GpuProgram>> programs(count);
    std::vector<bool> gpu_on_cpu(count, false);
    std::vector<std::string> no_gpu(count);  // why a GPU op runs on the CPU kernel
    for (uint32_t i = 0; i < count; ++i) {
        if (target_of(ops[i]) != RKNN_TARGET_TYPE_GPU) continue;
        const std::string named = "op[" + std::to_string(i) + "] (\"" + ops[i].op_type + "\")";
        if (gpu_device_ == nullptr) {
            auto device = open_gpu_device();
            if (!device.is_ok()) {
                if (builtin_type(ops[i].op_type) == graph::OpType::kUnknown)
                    return Status(device.status().code(), named + ": the GPU op cannot register: " +
                                                              device.status().message());
                no_gpu[i] = device.status().message();
                gpu_on_cpu[i] = true;
                continue;
            }
            gpu_device_ = std::move(device).value();
        }
        auto program = build_gpu_program(gpu_device_, ops[i]);
        if (!program.is_ok())
            return Status(program.status().code(),
                          named + ": its OpenCL kernel \"" + ops[i].cl_kernel_name + "\": " + program.status().message());
        programs[i] = std::move(program).value();
    }
    // Undoes this call's registrations unless it completes (an error, or an
    // exception from a callback or an allocation), and gives the plugins'
    // ops it replaced back to them.
    std::vector<Node*> done;
    std::set<std::string> replaced;  // the types whose plugin op this call replaced
    struct Rollback {
        CustomOps* self;
        std::vector<Node*>* done;
        const std::set<std::string>* replaced;
        const graph::Graph* g;
        bool armed = true;
        ~Rollback() {
            if (!armed) return;
            for (Node* undo : *done) self->forget_node(*undo);
            self->give_back_to_plugins(*replaced, *g);
        }
    } rollback{this, &done, &replaced, &g};
    for (uint32_t i = 0; i < count; ++i) {
        for (auto& node : nodes_) {
            if (node->type != ops[i].op_type) continue;
            if (node->registered) {  // a plugin's op, which the client's replaces
                RKNN_LOGW("custom op \"%s\": the client's registration of %s replaces the plugin's", node->name.c_str(),
                          node->type.c_str());
                destroy_node(*node);
                node->registered = false;
                if (!from_plugin) replaced.insert(node->type);
            }
            node->callbacks = ops[i];
            node->context = rknn_custom_op_context{ops[i].target, static_cast<rknn_custom_op_interal_context>(node->token),
                                                   {}, nullptr};
            node->registered = true;
            node->from_plugin = from_plugin;
            node->gpu.reset();
            node->cpu_fallback.reset();
            node->cpu_fallback_graph.reset();
            node->builtin = false;
            node->builtin_executor.reset();
            node->builtin_graph.reset();
            node->builtin_source = nullptr;
            node->own_dtype.clear();  // what an earlier registration's init asked for
            done.push_back(node.get());
            if (gpu_on_cpu[i]) {  // no init or destroy: the op's callbacks expect an OpenCL context
                RKNN_RETURN_IF_ERROR(describe_tensors(*node, g));
                RKNN_RETURN_IF_ERROR(make_cpu_fallback(*node, g));
                continue;
            }
            if (programs[i] != nullptr) {
                RKNN_ASSIGN_OR_RETURN(node->gpu, GpuNode::create(programs[i]));
            }
            RKNN_RETURN_IF_ERROR(init_node(*node, g));
        }
    }
    rollback.armed = false;
    if (from_plugin)
        for (uint32_t i = 0; i < count; ++i) plugin_ops_[ops[i].op_type] = ops[i];
    for (uint32_t i = 0; i < count; ++i)
        if (gpu_on_cpu[i])
            RKNN_LOGW("op[%u] (\"%s\"): OpenCL is not available (%s); the runtime's CPU kernel of %s runs instead", i,
                      ops[i].op_type, no_gpu[i].c_str(), ops[i].op_type);
    for (uint32_t i = 0; i < count; ++i)
        RKNN_LOG_AT(3, "custom op type \"%s\" registered (%s)", ops[i].op_type,
                    gpu_on_cpu[i] ? "GPU op, on the CPU kernel"
                    : programs[i] != nullptr ? ("GPU, " + gpu_device_description(*gpu_device_)).c_str()
                                             : "CPU");
    return Status::ok();
}

Status CustomOps::init_node(Node& node, const graph::Graph& g) {
    node.builtin = false;
    node.own_dtype.clear();  // what an earlier registration's init asked for
    RKNN_RETURN_IF_ERROR(describe_tensors(node, g));
    if (node.callbacks.init == nullptr) {
        node.destroy_due = true;
        return Status::ok();
    }
    restore_context(node);
    const int rc = node.callbacks.init(&node.context, node.inputs.data(), static_cast<uint32_t>(node.inputs.size()),
                                       node.outputs.data(), static_cast<uint32_t>(node.outputs.size()));
    const std::string named = "custom op \"" + node.name + "\" (" + node.type + ")";
    if (rc == 0) {
        node.destroy_due = true;
        return take_own_dtypes(node, g, named);
    }
    if (rc != RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE)
        return Status(StatusCode::kInternal, named + ": init returned " + std::to_string(rc));
    node.destroy_due = true;
    const graph::OpType builtin = builtin_type(node.type);
    if (builtin == graph::OpType::kUnknown) {
        destroy_node(node);
        return Status(StatusCode::kUnimplemented, named +
                                                      ": init asked for the runtime's own kernel "
                                                      "(RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE), and the runtime has "
                                                      "none for this type");
    }
    node.builtin = true;
    node.builtin_source = nullptr;  // made at the first run
    RKNN_LOG_AT(3, "%s: init asked for the runtime's own %s kernel", named.c_str(), graph::op_type_name(builtin));
    return Status::ok();
}

// Beyond the vendor: an init that sets pass_through in a tensor's attr takes
// that tensor in the model's own dtype (int8 with its zp and scale, or
// float16), NCHW, with no conversion to float32.
Status CustomOps::take_own_dtypes(Node& node, const graph::Graph& g, const std::string& named) {
    const graph::Op& op = g.ops[static_cast<size_t>(node.op)];
    node.own_dtype.assign(op.inputs.size() + op.outputs.size(), 0);
    std::string taken;
    bool any = false;
    size_t k = 0;
    for (const auto* list : {&node.inputs, &node.outputs})
        for (const rknn_custom_op_tensor& tensor : *list) {
            const int32_t t = k < op.inputs.size() ? op.inputs[k] : op.outputs[k - op.inputs.size()];
            if (tensor.attr.pass_through != 0 && t >= 0) {
                const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
                if (callback_dtype(declared) != declared.dtype) {
                    node.own_dtype[k] = 1;
                    any = true;
                    taken += (taken.empty() ? "" : ", ") + declared.name + " " + graph::dtype_name(declared.dtype);
                }
            }
            ++k;
        }
    if (!any) {
        node.own_dtype.clear();
        return Status::ok();
    }
    if (node.gpu != nullptr) {
        // The CPU stand-in a failing GPU op falls back on reads float32.
        destroy_node(node);
        node.own_dtype.clear();
        return Status(StatusCode::kUnimplemented, named + ": a GPU op takes its tensors as float32; its init asked "
                                                          "for the model's dtypes (pass_through)");
    }
    RKNN_LOG_AT(3, "%s: takes %s as the model holds them (pass_through in init)", named.c_str(), taken.c_str());
    const Status described = describe_tensors(node, g);
    if (!described.is_ok()) destroy_node(node);
    return described;
}

CustomOps::Seen CustomOps::seen_as(int32_t op, int32_t t, const graph::Graph& g) const {
    if (!is_custom(op)) return Seen::kMixed;
    const Node& node = *nodes_[static_cast<size_t>(node_of_op_[static_cast<size_t>(op)])];
    const graph::Op& o = g.ops[static_cast<size_t>(op)];
    const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
    bool as_float = false, as_own = false;
    size_t k = 0;
    for (const auto* list : {&o.inputs, &o.outputs})
        for (int32_t u : *list) {
            if (u == t) (node.seen_dtype(k, declared) == graph::DType::kFloat32 ? as_float : as_own) = true;
            ++k;
        }
    return as_float && as_own ? Seen::kMixed : as_own ? Seen::kOwnDtype : Seen::kFloat32;
}

Status CustomOps::describe_tensors(Node& node, const graph::Graph& g) {
    const graph::Op& op = g.ops[static_cast<size_t>(node.op)];
    node.inputs.assign(op.inputs.size(), rknn_custom_op_tensor{});
    node.outputs.assign(op.outputs.size(), rknn_custom_op_tensor{});
    node.offsets.clear();
    uint64_t bytes = 0;
    const auto named = [&node] { return "custom op \"" + node.name + "\" (" + node.type + ")"; };
    // The callbacks see sizes as uint32 and offsets as int32.
    const auto describe = [&](int32_t t, uint32_t index, rknn_custom_op_tensor* out) -> Status {
        node.offsets.push_back(bytes);
        out->attr.index = index;
        if (t < 0) return Status::ok();  // an omitted optional input
        graph::Tensor seen = g.tensors[static_cast<size_t>(t)];
        if (std::any_of(seen.shape.begin(), seen.shape.end(), [](int64_t d) { return d < 0; }))
            return Status(StatusCode::kModelInvalid, named() + ": tensor " + seen.name + " has no static shape (" +
                                                         graph::shape_to_string(seen.shape) + ")");
        const bool own = node.in_own_dtype(node.offsets.size() - 1);
        if (!own) {
            seen.dtype = callback_dtype(seen);
            seen.quant = graph::QuantParams();
        }
        const uint64_t size = static_cast<uint64_t>(graph::num_elements(seen.shape)) * graph::dtype_size(seen.dtype);
        if (size > UINT32_MAX || bytes + size > static_cast<uint64_t>(INT32_MAX))
            return Status(StatusCode::kUnimplemented, named() + ": its tensors take more than 2 GiB as the callbacks see them");
        fill_tensor_attr(seen, false, AttrKind::kUser, false, 0, NativeForm(), &out->attr);
        if (seen.shape.size() == 4) out->attr.fmt = RKNN_TENSOR_NCHW;
        out->attr.pass_through = own ? 1 : 0;
        bytes += (size + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
        return Status::ok();
    };
    for (size_t i = 0; i < op.inputs.size(); ++i)
        RKNN_RETURN_IF_ERROR(describe(op.inputs[i], static_cast<uint32_t>(i), &node.inputs[i]));
    for (size_t i = 0; i < op.outputs.size(); ++i)
        RKNN_RETURN_IF_ERROR(describe(op.outputs[i], static_cast<uint32_t>(i), &node.outputs[i]));
    bytes = std::max<uint64_t>(bytes, kTensorAlignment);
    if (driver_ == nullptr) {
        if (node.host_staging == nullptr || node.host_staging->size() < bytes)
            node.host_staging = std::make_unique<AlignedBytes>(static_cast<size_t>(bytes));
    } else if (node.staging == nullptr || node.staging->size() < bytes) {
        node.staging.reset();
        RKNN_ASSIGN_OR_RETURN(node.staging, IoMemory::create(driver_, bytes, true));
    }
    node.base = node.staging ? node.staging->host() : node.host_staging->data();
    size_t k = 0;
    for (auto* list : {&node.inputs, &node.outputs}) {
        for (rknn_custom_op_tensor& tensor : *list) {
            tensor.mem.virt_addr = node.base;
            tensor.mem.phys_addr = node.staging ? node.staging->device_address() : 0;
            tensor.mem.fd = node.staging ? node.staging->fd() : -1;
            tensor.mem.offset = static_cast<int32_t>(node.offsets[k++]);
            tensor.mem.size = tensor.attr.size;
            tensor.mem.flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
        }
    }
    if (node.gpu != nullptr)
        RKNN_RETURN_IF_ERROR(node.gpu->bind(bytes, node.staging != nullptr && node.staging->fd() >= 0, node.inputs,
                                            node.outputs));
    return Status::ok();
}

Status CustomOps::make_cpu_fallback(Node& node, const graph::Graph& g) {
    const graph::OpType builtin = builtin_type(node.type);
    if (builtin == graph::OpType::kUnknown)
        return Status(StatusCode::kUnimplemented, "custom op \"" + node.name + "\" (" + node.type +
                                                      "): the runtime has no CPU kernel of this type to fall back on");
    // The op alone, on tensors in the callbacks' form (float32, or the
    // model's integers), so that it reads and writes the staging.
    auto fallback = std::make_unique<graph::Graph>();
    graph::Op op = g.ops[static_cast<size_t>(node.op)];
    op.type = builtin;
    op.custom_type.clear();
    for (std::vector<int32_t>* list : {&op.inputs, &op.outputs})
        for (int32_t& t : *list) {
            if (t < 0) continue;
            graph::Tensor seen = g.tensors[static_cast<size_t>(t)];
            seen.dtype = callback_dtype(seen);
            seen.quant = graph::QuantParams();
            seen.buffer = -1;  // a constant input's value is in the staging too
            t = fallback->add_tensor(seen);
        }
    fallback->inputs = op.inputs;
    fallback->outputs = op.outputs;
    fallback->add_op(op);
    RKNN_ASSIGN_OR_RETURN(node.cpu_fallback, cpu::GraphExecutor::create(*fallback));
    node.cpu_fallback_graph = std::move(fallback);
    return Status::ok();
}

Status CustomOps::run_cpu_fallback(Node& node) {
    const graph::Graph& fg = *node.cpu_fallback_graph;
    const graph::Op& op = fg.ops[0];
    std::vector<cpu::HostTensor> values(fg.tensors.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int32_t t = op.inputs[i];
        if (t < 0) continue;
        const graph::Tensor& seen = fg.tensors[static_cast<size_t>(t)];
        values[static_cast<size_t>(t)] = cpu::HostTensor::borrow(seen.dtype, seen.shape, node.base + node.offsets[i]);
    }
    RKNN_RETURN_IF_ERROR(node.cpu_fallback->run_op(0, values));
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        const int32_t t = op.outputs[i];
        if (t < 0) continue;
        const cpu::HostTensor& value = values[static_cast<size_t>(t)];
        const graph::Tensor& seen = fg.tensors[static_cast<size_t>(t)];
        if (value.dtype() != seen.dtype || value.shape() != seen.shape)
            return Status(StatusCode::kInternal, "custom op \"" + node.name + "\": the CPU kernel's output " +
                                                     std::to_string(i) + " is not of the declared size");
        std::memcpy(node.base + node.offsets[op.inputs.size() + i], value.raw(), value.byte_size());
    }
    return Status::ok();
}

Status CustomOps::check_all_registered() const {
    std::string missing;
    for (const auto& node : nodes_) {
        if (node->registered || missing.find("'" + node->type + "'") != std::string::npos) continue;
        missing += (missing.empty() ? "'" : ", '") + node->type + "'";
    }
    if (missing.empty()) return Status::ok();
    return Status(StatusCode::kFailedPrecondition,
                  "the model has custom op types that are not registered: " + missing +
                      "; register them with rknn_register_custom_ops before rknn_run");
}

Status CustomOps::run_builtin(Node& node, const graph::Graph& g, std::vector<cpu::HostTensor>& values) {
    if (node.builtin_source != &g) {
        node.builtin_executor.reset();
        node.builtin_graph = std::make_unique<graph::Graph>(g);  // constant bytes are shared, not copied
        graph::Op& op = node.builtin_graph->ops[static_cast<size_t>(node.op)];
        op.type = graph::op_type_from_name(node.type);
        op.custom_type.clear();
        cpu::GraphExecutor::Options options;
        options.skip_unsupported = true;
        RKNN_ASSIGN_OR_RETURN(node.builtin_executor, cpu::GraphExecutor::create(*node.builtin_graph, options));
        node.builtin_source = &g;
    }
    return node.builtin_executor->run_op(node.op, values);
}

Status CustomOps::run(int32_t op_index, const graph::Graph& g, std::vector<cpu::HostTensor>& values,
                      const NativeForm& form, const std::vector<Cube>& in_cubes, const std::vector<Cube>& out_cubes,
                      Timing* timing) {
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point start) {
        return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
    };
    Clock::time_point phase = Clock::now();
    if (!is_custom(op_index)) return Status(StatusCode::kInternal, "op " + std::to_string(op_index) + " is not a custom op");
    Node& node = *nodes_[static_cast<size_t>(node_of_op_[static_cast<size_t>(op_index)])];
    // Built only for an error: the run itself formats nothing.
    const auto named = [&node] { return "custom op \"" + node.name + "\" (" + node.type + ")"; };
    if (!node.registered)
        return Status(StatusCode::kFailedPrecondition, named() + " is not registered (rknn_register_custom_ops)");
    const graph::Op& op = g.ops[static_cast<size_t>(op_index)];
    size_t k = 0;
    for (const std::vector<int32_t>* list : {&op.inputs, &op.outputs})
        for (int32_t t : *list) {
            const bool same = k < node.declared_shapes.size() &&
                              (t < 0 || g.tensors[static_cast<size_t>(t)].shape == node.declared_shapes[k]);
            ++k;
            if (!same)
                return Status(StatusCode::kUnimplemented,
                              named() + ": these input shapes change its tensors' shapes, and custom ops run only at "
                                      "the shapes the model declares");
        }
    if (node.builtin) {
        for (const std::vector<Cube>* cubes : {&in_cubes, &out_cubes})
            for (const Cube& cube : *cubes)
                if (cube.data != nullptr)
                    return Status(StatusCode::kInternal, named() + ": the built-in kernel reads and writes host values only");
        return run_builtin(node, g, values);
    }
    // Described again every run: a callback may have written over the
    // descriptors (the shapes, checked above, are the declared ones).
    RKNN_RETURN_IF_ERROR(describe_tensors(node, g));
    uint8_t* base = node.base;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int32_t t = op.inputs[i];
        if (t < 0) continue;
        const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
        if (i < in_cubes.size() && in_cubes[i].data != nullptr) {
            if (node.in_own_dtype(i)) {
                RKNN_RETURN_IF_ERROR(cube_to_nchw(in_cubes[i].data, in_cubes[i].bytes, declared, form, base + node.offsets[i]));
                continue;
            }
            RKNN_RETURN_IF_ERROR(cube_to_float32(in_cubes[i].data, in_cubes[i].bytes, declared, form,
                                                 reinterpret_cast<float*>(base + node.offsets[i])));
            continue;
        }
        cpu::HostTensor constant;
        const cpu::HostTensor* value = &values[static_cast<size_t>(t)];
        if (const graph::Buffer* buffer = g.constant_buffer(t)) {
            constant = cpu::HostTensor::borrow(declared.dtype, declared.shape, buffer->data);
            constant.quant = declared.quant;
            value = &constant;
        }
        const rknn_custom_op_tensor& seen = node.inputs[i];
        if (value->numel() != static_cast<int64_t>(seen.attr.n_elems))
            return Status(StatusCode::kInternal, named() + ": input " + std::to_string(i) + " has no value of its shape");
        uint8_t* dst = base + node.offsets[i];
        if (node.seen_dtype(i, declared) == graph::DType::kFloat32) {
            cpu::to_float32_into(*value, reinterpret_cast<float*>(dst));
        } else if (value->dtype() == declared.dtype) {
            std::memcpy(dst, value->raw(), value->byte_size());
        } else {
            // Another dtype than declared: quantised (or narrowed) into the
            // declared one, which is what the callback sees.
            cpu::HostTensor typed = cpu::HostTensor::borrow(declared.dtype, declared.shape, dst);
            typed.quant = declared.quant;
            if (declared.quant.is_quantized() && value->dtype() == graph::DType::kFloat32) {
                RKNN_RETURN_IF_ERROR(cpu::from_float32(*value, &typed));
            } else {
                RKNN_RETURN_IF_ERROR(cpu::cast_tensor(*value, &typed));
            }
        }
    }
    const auto call = [&](auto fn, const char* what) -> Status {
        if (fn == nullptr) return Status::ok();
        restore_context(node);
        const int rc = fn(&node.context, node.inputs.data(), static_cast<uint32_t>(node.inputs.size()),
                          node.outputs.data(), static_cast<uint32_t>(node.outputs.size()));
        if (rc != 0) return Status(StatusCode::kInternal, named() + ": " + what + " returned " + std::to_string(rc));
        return Status::ok();
    };
    if (timing != nullptr) {
        timing->convert_in_ns = since(phase);
        phase = Clock::now();
    }
    if (node.cpu_fallback == nullptr) {
        // A GPU op that imports the staging's dma-buf reads what the CPU
        // wrote only after a flush, and the CPU reads its results after an
        // invalidate (runtime-spec 7.5); with a mirror the copies do it.
        const bool imports = node.gpu != nullptr && node.gpu->imports() && node.staging != nullptr;
        Status status = Status::ok();
        if (node.gpu != nullptr) status = imports ? node.staging->sync(driver::SyncDirection::kToDevice) : node.gpu->upload(base);
        if (status.is_ok()) status = call(node.callbacks.prepare, "prepare");
        if (status.is_ok()) status = call(node.callbacks.compute, "compute");
        if (status.is_ok() && node.gpu != nullptr)
            status = imports ? node.staging->sync(driver::SyncDirection::kFromDevice) : node.gpu->download(base);
        if (!status.is_ok()) {
            if (node.gpu == nullptr || builtin_type(node.type) == graph::OpType::kUnknown) return status;
            const Status fallback = make_cpu_fallback(node, g);
            if (!fallback.is_ok())
                return Status(status.code(), status.message() + "; the CPU kernel cannot stand in: " + fallback.message());
            RKNN_LOGW("%s: runs on the GPU failed (%s); the runtime's CPU kernel runs it from now on", named().c_str(),
                      status.message().c_str());
        }
    }
    if (node.cpu_fallback != nullptr) RKNN_RETURN_IF_ERROR(run_cpu_fallback(node));
    if (timing != nullptr) {
        timing->on_gpu = node.gpu != nullptr && node.cpu_fallback == nullptr;
        timing->callbacks_ns = since(phase);
        phase = Clock::now();
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        const int32_t t = op.outputs[i];
        if (t < 0) continue;
        const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
        const uint8_t* src = base + node.offsets[op.inputs.size() + i];
        if (i < out_cubes.size() && out_cubes[i].data != nullptr) {
            if (node.in_own_dtype(op.inputs.size() + i)) {
                RKNN_RETURN_IF_ERROR(nchw_to_cube(src, declared, form, out_cubes[i].data, out_cubes[i].bytes));
                continue;
            }
            RKNN_RETURN_IF_ERROR(float32_to_cube(reinterpret_cast<const float*>(src), declared, form, out_cubes[i].data,
                                                 out_cubes[i].bytes));
            continue;
        }
        cpu::HostTensor& value = values[static_cast<size_t>(t)];
        if (value.dtype() != declared.dtype || value.shape() != declared.shape) {
            value = cpu::HostTensor(declared.dtype, declared.shape);
            value.quant = declared.quant;
        }
        const graph::DType seen = node.seen_dtype(op.inputs.size() + i, declared);
        const cpu::HostTensor result = cpu::HostTensor::borrow(seen, declared.shape, src);
        if (seen == graph::DType::kFloat32) {
            RKNN_RETURN_IF_ERROR(cpu::from_float32(result, &value));
        } else {
            std::memcpy(value.raw(), src, value.byte_size());
        }
    }
    if (timing != nullptr) timing->convert_out_ns = since(phase);
    return Status::ok();
}

Status custom_op_attr(const rknn_custom_op_context* op_ctx, const char* name, rknn_custom_op_attr* out) {
    NodeIndex& index = node_index();
    std::lock_guard<std::mutex> lock(index.mutex);
    const auto it = index.nodes.find(static_cast<uint64_t>(op_ctx->internal_ctx));
    if (it == index.nodes.end())
        return invalid("op_ctx is not a context the runtime handed to a custom op callback");
    const auto* node = static_cast<const CustomOps::Node*>(it->second);
    std::strncpy(out->name, name, RKNN_MAX_NAME_LEN - 1);
    const auto attr = node->attrs.find(name);
    if (attr == node->attrs.end()) {
        RKNN_LOG_AT(4, "custom op \"%s\" has no attribute \"%s\"", node->name.c_str(), name);
        return Status::ok();
    }
    out->dtype = attr->second.dtype;
    out->n_elems = attr->second.n_elems;
    out->data = const_cast<uint8_t*>(attr->second.bytes.data());
    return Status::ok();
}

}  // namespace rknn::runtime
