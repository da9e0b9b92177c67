// Zero-copy I/O of a context (rknn_create_mem, rknn_set_io_mem): buffers on
// the context's device, bound once to an input or output and used by every
// later rknn_run.
//
// A bound input is read at the start of each run exactly as rknn_inputs_set
// would read the same bytes (type, layout, pass_through from the attr given
// at binding; NHWC rows at the attr's w_stride pitch); a bound output is
// written at the end of each run as rknn_outputs_get would write it, in the
// attr's type (float32, float16 or the model's own) and layout (NCHW /
// UNDEFINED, NHWC, or the native NC1HWC2 cube). A native NC1HWC2 input attr
// is native data (pass_through). Once a buffer is bound, rknn_inputs_set or
// rknn_outputs_get for that direction is refused (spec 4.7). Bound inputs
// are read by the CPU, so no cache maintenance is needed for data the CPU
// wrote; data another device wrote is the client's to sync (rknn_mem_sync).
// A binding in the native layout, of memory the NPU reaches, is used in place
// instead (context_memory.cc): no conversion, and the NPU reads and writes
// the client's buffer itself.
#include <cstring>

#include "base/half.h"
#include "base/log.h"
#include "runtime/context.h"
#include "runtime/batch_fanout.h"
#include "runtime/io_convert.h"
#include "runtime/native_tensor.h"
#include "runtime/tensor_attrs.h"

namespace rknn::runtime {

namespace {

bool is_4d(const graph::Tensor& t) { return t.shape.size() == 4; }

// Elements of `t` (in the current shape set's plan: all shapes are static).
uint64_t element_count(const graph::Tensor& t) { return static_cast<uint64_t>(graph::num_elements(t.shape)); }

// Where an attr's name matches: the input index, the output index, or neither.
struct NamedTensor {
    bool found = false;
    bool is_input = false;
    uint32_t index = 0;
};

StatusOr<NamedTensor> find_by_name(const graph::Graph& g, const rknn_tensor_attr& attr) {
    const size_t length = strnlen(attr.name, RKNN_MAX_NAME_LEN);
    if (length == 0 || length == RKNN_MAX_NAME_LEN)
        return make_status(StatusCode::kInvalidArgument,
                           "attr.name is empty or unterminated (it tells inputs from outputs; "
                           "pass the attr rknn_query returned)");
    const std::string name(attr.name, length);
    NamedTensor hit;
    int matches = 0;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        if (g.tensors[static_cast<size_t>(g.inputs[i])].name == name) {
            hit = {true, true, static_cast<uint32_t>(i)};
            ++matches;
        }
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
        if (g.tensors[static_cast<size_t>(g.outputs[i])].name == name) {
            if (matches == 0) hit = {true, false, static_cast<uint32_t>(i)};
            ++matches;
        }
    }
    if (matches > 1)
        return make_status(StatusCode::kInvalidArgument,
                           "'%s' names more than one input or output of the model", name.c_str());
    if (!hit.found)
        return make_status(StatusCode::kInvalidArgument, "the model has no input or output '%s'",
                           name.c_str());
    if (attr.index != hit.index)
        return make_status(StatusCode::kInvalidArgument, "attr.index %u, but '%s' is %s %u",
                           attr.index, name.c_str(), hit.is_input ? "input" : "output", hit.index);
    return hit;
}

}  // namespace

StatusOr<std::shared_ptr<IoMemory>> Context::create_memory(uint64_t bytes, bool cacheable) {
    return IoMemory::create(driver_, bytes, cacheable);
}

Status Context::bind_io_memory(std::shared_ptr<IoMemory> memory, uint8_t* data, uint64_t bytes,
                               const rknn_tensor_attr& attr, bool in_place) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) return batch_->bind(std::move(memory), data, bytes, attr);
    RKNN_RETURN_IF_ERROR(refuse_info_only());
    RKNN_RETURN_IF_ERROR(refuse_before_shapes("rknn_set_io_mem"));
    RKNN_ASSIGN_OR_RETURN(const NamedTensor named, find_by_name(set_->plan->graph, attr));
    IoBinding binding;
    binding.memory = std::move(memory);
    binding.data = data;
    binding.bytes = bytes;
    binding.attr = attr;
    binding.in_place_allowed = in_place;
    return named.is_input ? bind_input(std::move(binding), named.index) : bind_output(std::move(binding), named.index);
}

StatusOr<Context::BoundIo> Context::bound_io(const rknn_tensor_attr& attr) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) return Status(StatusCode::kFailedPrecondition, "bound_io asks one of a multi-batch model's contexts");
    RKNN_ASSIGN_OR_RETURN(const NamedTensor named, find_by_name(set_->plan->graph, attr));
    const auto& bindings = named.is_input ? input_bindings_ : output_bindings_;
    if (named.index >= bindings.size() || !bindings[named.index])
        return Status(StatusCode::kFailedPrecondition, "not bound with rknn_set_io_mem");
    const graph::Tensor& t = set_->plan->graph.tensors[static_cast<size_t>(
        named.is_input ? set_->plan->graph.inputs[named.index] : set_->plan->graph.outputs[named.index])];
    return BoundIo{named.is_input, named.index, bindings[named.index]->span, t.shape};
}

Status Context::unbind_io(const rknn_tensor_attr& attr) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) return Status(StatusCode::kFailedPrecondition, "unbind_io asks one of a multi-batch model's contexts");
    RKNN_ASSIGN_OR_RETURN(const NamedTensor named, find_by_name(set_->plan->graph, attr));
    auto& bindings = named.is_input ? input_bindings_ : output_bindings_;
    if (named.index >= bindings.size() || !bindings[named.index]) return Status::ok();
    const graph::Graph& g = set_->plan->graph;
    const int32_t t = named.is_input ? g.inputs[named.index] : g.outputs[named.index];
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
    if (home.valid() && home.buffer >= kFirstIoBuffer) RKNN_RETURN_IF_ERROR(restore_io_buffer(home.buffer));
    if (home.valid()) {
        client_input_buffers_[static_cast<size_t>(home.buffer)] = false;
        client_output_buffers_[static_cast<size_t>(home.buffer)] = false;
    }
    bindings[named.index].reset();
    return Status::ok();
}

Status Context::bind_input(IoBinding b, uint32_t index) {
    const graph::Tensor& declared = set_->plan->graph.tensors[static_cast<size_t>(set_->plan->graph.inputs[index])];
    rknn_tensor_attr& a = b.attr;
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(set_->plan->graph.inputs[index])];
    // A native attr is used as it is (abi-facts 8): an NC1HWC2 cube is the native data.
    if (a.fmt == RKNN_TENSOR_NC1HWC2) a.pass_through = 1;
    uint64_t needed = 0;
    if (a.pass_through) {
        needed = pass_through_bytes(index);
        b.data_bytes = needed;
        if (home.packed_row_pixels > 0 && a.w_stride != 0 && a.w_stride != home.packed_row_pixels)
            return make_status(StatusCode::kInvalidArgument,
                               "input %u: pass_through rows are %u pixels apart in the native form, not %u", index,
                               home.packed_row_pixels, a.w_stride);
    } else {
        const uint32_t esize = rknn_type_size(a.type);
        const bool accepted = a.type == RKNN_TENSOR_FLOAT32 || a.type == RKNN_TENSOR_FLOAT16 || a.type == RKNN_TENSOR_INT8 ||
                              a.type == RKNN_TENSOR_UINT8 || a.type == RKNN_TENSOR_INT16;
        if (!accepted || esize == 0)
            return make_status(StatusCode::kInvalidArgument, "input %u: type %s cannot be converted to the model's input",
                               index, get_type_string(a.type));
        if (is_4d(declared) && a.fmt != RKNN_TENSOR_NHWC && a.fmt != RKNN_TENSOR_NCHW)
            return make_status(StatusCode::kInvalidArgument, "input %u: a 4-D input is given as NHWC or NCHW, not %s",
                               index, get_format_string(a.fmt));
        if (!is_4d(declared) && a.fmt != RKNN_TENSOR_UNDEFINED && a.fmt != RKNN_TENSOR_NCHW)
            return make_status(StatusCode::kInvalidArgument, "input %u: a %zu-D input is given in the model's order, not %s",
                               index, declared.shape.size(), get_format_string(a.fmt));
        const uint64_t dense = element_count(declared) * esize;
        needed = dense;
        b.data_bytes = dense;
        const bool strided_rows = is_4d(declared) && a.fmt == RKNN_TENSOR_NHWC &&
                                  a.w_stride > static_cast<uint32_t>(declared.shape[3]);
        if (strided_rows) {
            // NHWC rows at a pitch of w_stride pixels, compacted before the conversion.
            needed = dense / static_cast<uint64_t>(declared.shape[3]) * a.w_stride;
            b.staging.resize(dense);
        }
    }
    b.span = needed;
    if (b.bytes < needed)
        return make_status(StatusCode::kInvalidArgument, "input %u: the buffer holds %llu bytes, %llu needed (%s%s)",
                           index, static_cast<unsigned long long>(b.bytes), static_cast<unsigned long long>(needed),
                           a.pass_through ? "pass_through" : get_type_string(a.type),
                           a.pass_through ? "" : (a.fmt == RKNN_TENSOR_NHWC ? " NHWC" : " NCHW"));
    // Native bytes: the NPU can read them where they are.
    RKNN_ASSIGN_OR_RETURN(b.in_place, try_bind_in_place(b, set_->plan->graph.inputs[index],
                                                        a.pass_through != 0 && b.in_place_allowed));
    if (home.valid()) client_input_buffers_[static_cast<size_t>(home.buffer)] = b.in_place;
    if (index < staged_inputs_.size()) staged_inputs_[index].clear();  // the binding gives the input from now on
    input_bindings_.resize(set_->plan->graph.inputs.size());
    input_bindings_[index] = std::move(b);
    return Status::ok();
}

Status Context::bind_output(IoBinding b, uint32_t index) {
    const int32_t t = set_->plan->graph.outputs[index];
    const graph::Tensor& declared = set_->plan->graph.tensors[static_cast<size_t>(t)];
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
    const rknn_tensor_attr& a = b.attr;
    const rknn_tensor_type model_type = to_rknn_type(declared.dtype);
    uint64_t needed = 0;
    if (a.fmt == RKNN_TENSOR_NC1HWC2) {
        rknn_tensor_attr native{};
        fill_tensor_attr(declared, false, AttrKind::kNative, home.valid(), 0, set_->plan->memory.form, &native);
        if (native.fmt != RKNN_TENSOR_NC1HWC2 || a.type != model_type)
            return make_status(StatusCode::kInvalidArgument,
                               "output %u: NC1HWC2 is offered only for the native attr's own type and layout (%s %s)",
                               index, get_type_string(native.type), get_format_string(native.fmt));
        needed = native.size_with_stride;
    } else {
        // Float32 and float16 from any model (spec 3.4), or the model's own type.
        if (a.type != RKNN_TENSOR_FLOAT32 && a.type != RKNN_TENSOR_FLOAT16 && a.type != model_type)
            return make_status(StatusCode::kInvalidArgument,
                               "output %u: type %s is not offered (float32, float16 or the model's %s)", index,
                               get_type_string(a.type), get_type_string(model_type));
        if (a.fmt == RKNN_TENSOR_NHWC && !is_4d(declared))
            return make_status(StatusCode::kInvalidArgument, "output %u: NHWC needs a 4-D output", index);
        const bool narrowed = a.type == RKNN_TENSOR_FLOAT16 && model_type != RKNN_TENSOR_FLOAT16;
        const bool as_float = a.type == RKNN_TENSOR_FLOAT32 || narrowed;
        needed = narrowed ? element_count(declared) * sizeof(uint16_t) : output_bytes(declared, as_float);
        // NHWC and float16-from-float go through the general API's form first.
        if (a.fmt == RKNN_TENSOR_NHWC || narrowed) b.staging.resize(output_bytes(declared, as_float));
    }
    b.data_bytes = needed;
    b.span = needed;
    if (b.bytes < needed)
        return make_status(StatusCode::kInvalidArgument, "output %u: the buffer holds %llu bytes, %llu needed (%s %s)",
                           index, static_cast<unsigned long long>(b.bytes), static_cast<unsigned long long>(needed),
                           get_type_string(a.type), get_format_string(a.fmt));
    // The native cube, written by the NPU: it can write it there itself.
    const bool native = a.fmt == RKNN_TENSOR_NC1HWC2 && set_->lowered->schedule.output_on_device[index] &&
                        home.bytes == needed && b.in_place_allowed;
    RKNN_ASSIGN_OR_RETURN(b.in_place, try_bind_in_place(b, t, native));
    if (home.valid())
        client_output_buffers_[static_cast<size_t>(home.buffer)] =
            b.in_place && (flags_ & RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE) != 0;
    if (index < kept_outputs_.size()) kept_outputs_[index].clear();  // the binding gives the output from now on
    output_bindings_.resize(set_->plan->graph.outputs.size());
    output_bindings_[index] = std::move(b);
    return Status::ok();
}

Status Context::read_bound_inputs() {
    for (size_t i = 0; i < input_bindings_.size(); ++i) {
        std::optional<IoBinding>& b = input_bindings_[i];
        if (!b) continue;
        const int32_t t = set_->plan->graph.inputs[i];
        if (b->in_place) {
            // The client wrote it with the CPU, unless it keeps the caches itself.
            const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
            if ((flags_ & RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE) == 0) RKNN_RETURN_IF_ERROR(buffers_->flush(home.buffer));
            if (set_->input_read_on_cpu[i]) {
                RKNN_RETURN_IF_ERROR(unpack_native_into(b->data, home.bytes, set_->plan->graph.tensors[static_cast<size_t>(t)], set_->plan->memory.form,
                                                        home.packed_row_pixels, &set_->values[static_cast<size_t>(t)]));
            }
            continue;
        }
        const rknn_tensor_attr& a = b->attr;
        rknn_input in{};
        in.index = static_cast<uint32_t>(i);
        in.pass_through = a.pass_through;
        in.type = a.type;
        in.fmt = a.fmt;
        in.buf = b->data;
        in.size = static_cast<uint32_t>(std::min<uint64_t>(b->data_bytes, UINT32_MAX));
        if (!b->staging.empty()) {
            const graph::Tensor& declared = set_->plan->graph.tensors[static_cast<size_t>(t)];
            // [N, C, H, W] declared; the client's rows hold W x C elements at a w_stride x C pitch.
            const size_t row = b->staging.size() / static_cast<size_t>(declared.shape[0] * declared.shape[2]);
            const size_t pitch = row / static_cast<size_t>(declared.shape[3]) * a.w_stride;
            const size_t rows = b->staging.size() / row;
            for (size_t r = 0; r < rows; ++r) std::memcpy(b->staging.data() + r * row, b->data + r * pitch, row);
            in.buf = b->staging.data();
            in.size = static_cast<uint32_t>(b->staging.size());
        }
        RKNN_RETURN_IF_ERROR(set_input(in).with_context("bound input " + std::to_string(i)));
    }
    return Status::ok();
}

Status Context::write_bound_outputs() {
    for (size_t k = 0; k < output_bindings_.size(); ++k) {
        std::optional<IoBinding>& b = output_bindings_[k];
        if (!b || b->in_place) continue;  // in place: the NPU wrote it (invalidated then, or synced by the client)
        const int32_t t = set_->plan->graph.outputs[k];
        const graph::Tensor& declared = set_->plan->graph.tensors[static_cast<size_t>(t)];
        RKNN_ASSIGN_OR_RETURN(cpu::HostTensor value, current_value(t));
        const rknn_tensor_attr& a = b->attr;
        if (a.fmt == RKNN_TENSOR_NC1HWC2) {
            RKNN_RETURN_IF_ERROR(pack_native(value, b->data, b->bytes, set_->plan->memory.form, 0));
        } else {
            // The general API's form (NCHW / model order, float32 or raw), then
            // float16 and NHWC where asked for.
            const bool narrowed = a.type == RKNN_TENSOR_FLOAT16 && declared.dtype != graph::DType::kFloat16;
            const bool as_float = a.type == RKNN_TENSOR_FLOAT32 || narrowed;
            uint8_t* general = b->staging.empty() ? b->data : b->staging.data();
            RKNN_RETURN_IF_ERROR(convert_output(value, as_float, general, output_bytes(declared, as_float)));
            size_t esize = as_float ? sizeof(float) : rknn_type_size(to_rknn_type(declared.dtype));
            if (narrowed) {
                const size_t n = element_count(declared);
                const auto* f = reinterpret_cast<const float*>(general);
                auto* h = reinterpret_cast<uint16_t*>(a.fmt == RKNN_TENSOR_NHWC ? general : b->data);
                for (size_t i = 0; i < n; ++i) h[i] = float_to_half(f[i]);  // in place: each half lands before its float is read again
                esize = sizeof(uint16_t);
            }
            if (a.fmt == RKNN_TENSOR_NHWC) nchw_to_nhwc(general, b->data, declared.shape, esize);
        }
        // Other devices may read the buffer next (unless the client keeps the caches itself).
        if ((flags_ & RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE) == 0)
            RKNN_RETURN_IF_ERROR(b->memory->sync(driver::SyncDirection::kToDevice));
    }
    return Status::ok();
}

}  // namespace rknn::runtime
