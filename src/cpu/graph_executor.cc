#include "cpu/graph_executor.h"

#include "cpu/custom_kernels.h"

#include "cpu/convert.h"
#include "cpu/kernel_registry.h"
#include "graph/shape_inference.h"
#include "graph/topology.h"

namespace rknn::cpu {
namespace {

using graph::DType;

// One tensor larger than this is refused rather than allocated (a malformed
// model must not take the process down with an allocation failure).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 31;

bool is_quantized_int(const HostTensor& t) { return t.quant.is_quantized() && graph::is_integer(t.dtype()); }

// The int8 kernel applies when the op's main input and all outputs are quantised int8.
bool wants_int8(const KernelEntry& entry, const graph::Graph& g, const graph::Op& op,
                const std::vector<const HostTensor*>& in) {
    if (entry.run_int8 == nullptr || in.empty() || in[0] == nullptr) return false;
    if (in[0]->dtype() != DType::kInt8 || !in[0]->quant.is_quantized()) return false;
    for (int32_t out : op.outputs) {
        const graph::Tensor& t = g.tensors[out];
        if (t.dtype != DType::kInt8 || !t.quant.is_quantized()) return false;
    }
    return true;
}

// A data-moving op may pass quantised tensors through when every quantised
// input and output shares one set of parameters.
bool can_move_quantized(const graph::Graph& g, const graph::Op& op, const std::vector<const HostTensor*>& in) {
    const graph::QuantParams* common = nullptr;
    DType common_type = DType::kUndefined;
    auto same = [&](const graph::QuantParams& q, DType d) {
        if (common == nullptr) {
            common = &q;
            common_type = d;
            return true;
        }
        return q == *common && d == common_type;
    };
    for (const HostTensor* t : in) {
        if (t != nullptr && is_quantized_int(*t) && !same(t->quant, t->dtype())) return false;
    }
    for (int32_t out : op.outputs) {
        const graph::Tensor& t = g.tensors[out];
        const bool quantized = t.quant.is_quantized() && graph::is_integer(t.dtype);
        if (quantized && !same(t.quant, t.dtype)) return false;
        if (!quantized && graph::is_float(t.dtype) && common != nullptr) return false;
    }
    return true;
}

// QuantizeLinear and DequantizeLinear read and write codes: their scale and
// zero point are the quantised tensor's own, so its codes pass unconverted.
bool converts_codes(const graph::Op& op) {
    return op.type == graph::OpType::kQuantizeLinear || op.type == graph::OpType::kDequantizeLinear;
}

// Whether input `t` must be widened to float32 before the reference kernel runs.
bool needs_float(const KernelEntry& entry, const HostTensor& t, bool quantized_passthrough) {
    if (is_quantized_int(t)) return !quantized_passthrough;
    // Widening float32 gives the same tensor: every kernel takes float32.
    return (entry.native_dtypes & dtype_bit(t.dtype())) == 0 && graph::is_float(t.dtype()) && t.dtype() != DType::kFloat32;
}

// The op's output dtypes and shapes for these input values.
Status infer_outputs(const graph::Op& op, const std::vector<const HostTensor*>& in, std::vector<graph::ValueInfo>* out) {
    std::vector<graph::ValueInfo> infos(in.size());
    std::vector<const graph::ValueInfo*> info_ptrs(in.size(), nullptr);
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] == nullptr) continue;
        infos[i] = {in[i]->dtype(), in[i]->shape(), in[i]->raw()};
        info_ptrs[i] = &infos[i];
    }
    return graph::infer_op(op, info_ptrs, out);
}

// A built-in kernel, or for a custom op one a tool registered (custom_kernels.h).
bool has_kernel(const graph::Op& op) {
    if (op.type == graph::OpType::kCustom) return find_custom_kernel(op.custom_type) != nullptr;
    return find_kernel(op.type) != nullptr;
}

}  // namespace

HostTensor make_tensor_like(const graph::Tensor& tensor, const Shape& shape) {
    HostTensor t(tensor.dtype, shape);
    t.quant = tensor.quant;
    return t;
}

StatusOr<std::unique_ptr<GraphExecutor>> GraphExecutor::create(const graph::Graph& graph, Options options) {
    std::unique_ptr<GraphExecutor> exec(new GraphExecutor(graph, options));
    RKNN_ASSIGN_OR_RETURN(exec->order_, graph::topological_order(graph));
    for (int32_t op : exec->order_) {
        const graph::Op& o = graph.ops[op];
        if (!has_kernel(o) && !options.skip_unsupported) {
            return Status(StatusCode::kUnimplemented,
                          std::string("no CPU kernel for ") + graph::op_type_name(o.type) +
                              (o.type == graph::OpType::kCustom ? " " + o.custom_type : std::string()));
        }
    }
    const std::vector<graph::TensorLifetime> life = graph::tensor_lifetimes(graph, exec->order_);
    exec->last_use_.resize(graph.tensors.size());
    for (size_t t = 0; t < life.size(); ++t) exec->last_use_[t] = life[t].last;
    exec->constants_.resize(graph.tensors.size());
    for (size_t t = 0; t < graph.tensors.size(); ++t) {
        const graph::Buffer* buffer = graph.constant_buffer(static_cast<int32_t>(t));
        if (buffer == nullptr) continue;
        HostTensor view = HostTensor::borrow(graph.tensors[t].dtype, graph.tensors[t].shape, buffer->data);
        view.quant = graph.tensors[t].quant;
        exec->constants_[t] = view;
    }
    return exec;
}

Status GraphExecutor::run_op(int32_t op_index, std::vector<HostTensor>& values, RunStats* stats) const {
    const graph::Op& op = graph_.ops[op_index];
    if (op.type == graph::OpType::kCustom) {
        if (const CustomKernel* custom = find_custom_kernel(op.custom_type)) {
            if (stats != nullptr) ++stats->reference_ops;
            return (*custom)(graph_, op_index, values);
        }
    }
    const KernelEntry* kernel = find_kernel(op.type);
    if (kernel == nullptr) {
        return Status(StatusCode::kUnimplemented, "op " + op.name + " (" + graph::op_type_name(op.type) +
                                                      ") has no CPU kernel");
    }
    const KernelEntry& entry = *kernel;
    std::vector<const HostTensor*> in(op.inputs.size(), nullptr);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int32_t t = op.inputs[i];
        if (t < 0) continue;
        in[i] = graph_.is_constant(t) ? &constants_[t] : &values[t];
        if (in[i]->dtype() == DType::kUndefined) {
            return Status(StatusCode::kInternal, "tensor " + graph_.tensors[t].name + " has no value");
        }
    }
    Status status = Status(StatusCode::kUnimplemented, "");
    if (options_.use_int8_kernels && wants_int8(entry, graph_, op, in)) status = run_kernel(op, entry, true, in, values);
    const bool ran_int8 = status.is_ok();
    // An int8 kernel that does not handle these tensors leaves the op to the reference kernel.
    if (status.code() == StatusCode::kUnimplemented) status = run_kernel(op, entry, false, in, values);
    if (stats != nullptr) ++(ran_int8 ? stats->int8_ops : stats->reference_ops);
    if (!status.is_ok()) {
        return status.with_context(std::string(graph::op_type_name(op.type)) + " \"" + op.name + "\"");
    }
    return Status::ok();
}

Status GraphExecutor::run_kernel(const graph::Op& op, const KernelEntry& entry, bool int8,
                                 const std::vector<const HostTensor*>& in, std::vector<HostTensor>& values) const {
    const bool passthrough = !int8 && ((entry.moves_data && can_move_quantized(graph_, op, in)) || converts_codes(op));
    // Widen what the kernel cannot take directly.
    std::vector<HostTensor> widened(in.size());
    std::vector<const HostTensor*> args_in = in;
    if (!int8) {
        for (size_t i = 0; i < in.size(); ++i) {
            if (in[i] != nullptr && needs_float(entry, *in[i], passthrough)) {
                widened[i] = to_float32(*in[i]);
                args_in[i] = &widened[i];
            }
        }
    }
    std::vector<graph::ValueInfo> out_infos;
    RKNN_RETURN_IF_ERROR(infer_outputs(op, args_in, &out_infos));
    for (const graph::ValueInfo& out : out_infos) {
        if (graph::num_elements(out.shape) * static_cast<int64_t>(graph::dtype_size(out.dtype)) > kMaxTensorBytes) {
            return Status(StatusCode::kResourceExhausted, "an output of " + graph::shape_to_string(out.shape) +
                                                              " is larger than the CPU reference allows");
        }
    }

    // The int8 kernel writes the declared (quantised) tensors; a reference
    // kernel writes its natural dtype, rounded to the declared one afterwards.
    std::vector<HostTensor> produced(op.outputs.size());
    std::vector<HostTensor*> args_out(op.outputs.size());
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        const graph::Tensor& declared = graph_.tensors[op.outputs[i]];
        if (int8) {
            produced[i] = make_tensor_like(declared, out_infos[i].shape);
        } else if (entry.writes_whole_output && out_infos[i].dtype == DType::kFloat32) {
            produced[i] = HostTensor::uninitialized(out_infos[i].dtype, out_infos[i].shape);
        } else {
            produced[i] = HostTensor(out_infos[i].dtype, out_infos[i].shape);
        }
        args_out[i] = &produced[i];
    }
    KernelArgs args{op, args_in, args_out};
    RKNN_RETURN_IF_ERROR((int8 ? entry.run_int8 : entry.run)(args));
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        const graph::Tensor& declared = graph_.tensors[op.outputs[i]];
        HostTensor& result = produced[i];
        const bool quantized = declared.quant.is_quantized() && graph::is_integer(declared.dtype);
        if (int8 || (result.dtype() == declared.dtype && (passthrough || !quantized))) {
            result.quant = declared.quant;
            values[op.outputs[i]] = std::move(result);
            continue;
        }
        HostTensor as_float = result.dtype() == DType::kFloat32 ? result : to_float32(result);
        HostTensor rounded = HostTensor::uninitialized(declared.dtype, result.shape());  // from_float32 writes all
        rounded.quant = declared.quant;
        RKNN_RETURN_IF_ERROR(from_float32(as_float, &rounded));
        values[op.outputs[i]] = std::move(rounded);
    }
    return Status::ok();
}

StatusOr<GraphExecutor::PreparedCall> GraphExecutor::prepare_call(int32_t op_index, std::vector<HostTensor>& values) const {
    if (op_index < 0 || static_cast<size_t>(op_index) >= graph_.ops.size())
        return RKNN_INVALID_ARGUMENT("op %d out of range", op_index);
    const graph::Op& op = graph_.ops[static_cast<size_t>(op_index)];
    const KernelEntry* entry = find_kernel(op.type);
    if (entry == nullptr) return Status(StatusCode::kUnimplemented, "no CPU kernel");
    std::vector<const HostTensor*> in(op.inputs.size(), nullptr);
    for (size_t i = 0; i < op.inputs.size(); ++i) {
        const int32_t t = op.inputs[i];
        if (t < 0) continue;
        in[i] = graph_.is_constant(t) ? &constants_[static_cast<size_t>(t)] : &values[static_cast<size_t>(t)];
        if (in[i]->dtype() == DType::kUndefined) return Status(StatusCode::kUnimplemented, "an input has no value yet");
    }
    const bool int8 = options_.use_int8_kernels && wants_int8(*entry, graph_, op, in);
    const bool passthrough = !int8 && ((entry->moves_data && can_move_quantized(graph_, op, in)) || converts_codes(op));
    if (!int8) {
        for (const HostTensor* t : in)
            if (t != nullptr && needs_float(*entry, *t, passthrough))
                return Status(StatusCode::kUnimplemented, "the reference kernel widens its inputs");
    }
    std::vector<graph::ValueInfo> out_infos;
    RKNN_RETURN_IF_ERROR(infer_outputs(op, in, &out_infos));
    std::vector<HostTensor*> outs(op.outputs.size());
    PreparedCall call;
    call.roundings = std::make_shared<std::vector<PreparedCall::Rounding>>();
    call.roundings->reserve(op.outputs.size());  // outs points into it
    for (size_t i = 0; i < op.outputs.size(); ++i) {
        const graph::Tensor& declared = graph_.tensors[static_cast<size_t>(op.outputs[i])];
        const bool quantized = declared.quant.is_quantized() && graph::is_integer(declared.dtype);
        if (i >= out_infos.size() || out_infos[i].shape != declared.shape)
            return Status(StatusCode::kUnimplemented, "the kernel's result has another shape than the declared tensor");
        // A float32 result rounded to float16 afterwards, through scratch of the call's own.
        const bool rounded = !int8 && out_infos[i].dtype == DType::kFloat32 && declared.dtype == DType::kFloat16 &&
                             entry->writes_whole_output;
        if (!int8 && !rounded && (out_infos[i].dtype != declared.dtype || (quantized && !passthrough)))
            return Status(StatusCode::kUnimplemented, "the kernel's result needs converting to the declared tensor");
        HostTensor& value = values[static_cast<size_t>(op.outputs[i])];
        if (value.dtype() != declared.dtype || value.shape() != declared.shape) value = make_tensor_like(declared, declared.shape);
        value.quant = declared.quant;
        outs[i] = &value;
        if (rounded) {
            call.roundings->push_back({HostTensor::uninitialized(DType::kFloat32, declared.shape), &value});
            outs[i] = &call.roundings->back().result;
        }
    }
    call.args = std::make_shared<KernelArgs>(KernelArgs{op, in, outs});
    call.fn = int8 ? entry->run_int8 : entry->run;
    call.int8 = int8;
    // An int8 kernel may decline these tensors (run_op then falls back).
    const Status trial = run_prepared(call);
    if (!trial.is_ok()) return Status(StatusCode::kUnimplemented, "the kernel declined: " + trial.message());
    return call;
}

Status GraphExecutor::run_prepared(const PreparedCall& call) const {
    if (call.fn == nullptr || call.args == nullptr) return RKNN_INTERNAL_ERROR("an unprepared call");
    Status status = call.fn(*call.args);
    if (status.is_ok() && call.roundings != nullptr) {
        for (PreparedCall::Rounding& r : *call.roundings) {
            status = from_float32(r.result, r.declared);
            if (!status.is_ok()) break;
        }
    }
    if (!status.is_ok()) return status.with_context(std::string(graph::op_type_name(call.args->op.type)) + " \"" +
                                                    call.args->op.name + "\"");
    return Status::ok();
}

Status GraphExecutor::run(const std::vector<HostTensor>& inputs, std::vector<HostTensor>* outputs,
                          const Observer& observer, RunStats* stats) const {
    if (inputs.size() != graph_.inputs.size()) {
        return make_status(StatusCode::kInvalidArgument, "%zu inputs given, the graph has %zu", inputs.size(),
                           graph_.inputs.size());
    }
    std::vector<HostTensor> values(graph_.tensors.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        const graph::Tensor& declared = graph_.tensors[graph_.inputs[i]];
        if (inputs[i].dtype() != declared.dtype) {
            return make_status(StatusCode::kInvalidArgument, "input %zu (%s) is %s, the graph wants %s", i,
                               declared.name.c_str(), graph::dtype_name(inputs[i].dtype()),
                               graph::dtype_name(declared.dtype));
        }
        values[graph_.inputs[i]] = inputs[i];
        values[graph_.inputs[i]].quant = declared.quant;
    }
    for (size_t pos = 0; pos < order_.size(); ++pos) {
        const int32_t op_index = order_[pos];
        const graph::Op& op = graph_.ops[op_index];
        if (options_.skip_unsupported && !runnable(op, values)) {
            if (stats != nullptr) ++stats->skipped_ops;
            continue;
        }
        RKNN_RETURN_IF_ERROR(run_op(op_index, values, stats));
        if (observer) {
            std::vector<const HostTensor*> outs;
            for (int32_t t : op.outputs) outs.push_back(&values[t]);
            RKNN_RETURN_IF_ERROR(observer(op_index, outs));
        }
        // Free what no later op reads.
        for (int32_t t : op.inputs) {
            if (t >= 0 && !graph_.is_constant(t) && last_use_[t] == static_cast<int32_t>(pos)) values[t] = HostTensor();
        }
    }
    outputs->clear();
    for (int32_t t : graph_.outputs) {
        outputs->push_back(graph_.is_constant(t) ? constants_[t] : values[t]);
        if (outputs->back().dtype() == DType::kUndefined && !options_.skip_unsupported)
            return Status(StatusCode::kInternal, "output " + graph_.tensors[t].name + " was not computed");
    }
    return Status::ok();
}

bool GraphExecutor::runnable(const graph::Op& op, const std::vector<HostTensor>& values) const {
    if (!has_kernel(op)) return false;
    for (int32_t t : op.inputs) {
        if (t >= 0 && !graph_.is_constant(t) && values[t].dtype() == DType::kUndefined) return false;
    }
    return true;
}

}  // namespace rknn::cpu
