// The I/O calls of a Context: rknn_inputs_set, rknn_outputs_get and
// rknn_outputs_release, with their table-driven fast paths (fast_io.h).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "base/sign_bits.h"
#include "npu/prepared_op.h"
#include "runtime/context.h"
#include "runtime/batch_fanout.h"
#include "runtime/fast_io.h"
#include "runtime/io_convert.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {
namespace {

uint64_t declared_bytes(const graph::Tensor& t) {
    return static_cast<uint64_t>(graph::num_elements(t.shape)) * graph::dtype_size(t.dtype);
}

}  // namespace

void Context::prepare_fast_io(PlanState& s) {
    const graph::Graph& g = s.plan->graph;
    s.pixel_codes.assign(g.inputs.size(), {});
    s.pixel_rules.assign(g.inputs.size(), std::nullopt);
    s.input_read_on_cpu.assign(g.inputs.size(), false);
    s.dequant_rules.assign(g.outputs.size(), std::nullopt);
    for (size_t k = 0; k < g.inputs.size(); ++k) {
        for (const CpuStep& step : s.lowered->schedule.cpu_steps) {
            const auto& reads = g.ops[static_cast<size_t>(step.op)].inputs;
            if (std::find(reads.begin(), reads.end(), g.inputs[k]) != reads.end()) s.input_read_on_cpu[k] = true;
        }
    }
    for (size_t k = 0; k < g.inputs.size(); ++k) {
        const int32_t t = g.inputs[k];
        const graph::InputPreprocess* pre = k < g.preprocess.size() ? &g.preprocess[k] : nullptr;
        const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
        // One image, channels in order: what the per-channel tables assume.
        if ((pre != nullptr && pre->reverse_channels) || declared.shape.size() != 4 || declared.shape[0] != 1) continue;
        // The cube conversions write RK3588 cubes: RK356x takes the image one
        // only (its ARGB images, whose bytes set_pixels_fast then biases).
        if (s.plan->memory.form.rk356x && s.plan->memory.homes[static_cast<size_t>(t)].packed_row_pixels == 0) continue;
        auto codes = make_pixel_codes(declared, pre);
        if (!codes.is_ok()) continue;
        s.pixel_codes[k] = std::move(codes).value();
        auto rule = fit_pixel_rule(s.pixel_codes[k], static_cast<int>(declared.shape[1]));
        if (rule.is_ok()) {
            s.pixel_rules[k] = std::move(rule).value();
        } else {
            RKNN_LOG_AT(4, "input %zu: uint8 pixels through tables (%s)", k, rule.status().message().c_str());
        }
    }
    for (size_t k = 0; k < g.outputs.size(); ++k) {
        if (!s.lowered->schedule.output_on_device[k] || s.plan->memory.form.rk356x) continue;
        auto rule = make_dequant(g.tensors[static_cast<size_t>(g.outputs[k])]);
        if (rule.is_ok()) s.dequant_rules[k] = rule.value();
    }
}

// uint8 NHWC/NCHW pixels into an int8 input: table lookups straight into
// the cube the NPU reads (and the NCHW value CPU ops read). False when the
// generic path must run.
bool Context::set_pixels_fast(const rknn_input& in) {
    const std::vector<int8_t>& codes = set_->pixel_codes[in.index];
    const int raw_fmt = static_cast<int>(in.fmt);
    if (codes.empty() || in.pass_through || static_cast<int>(in.type) != RKNN_TENSOR_UINT8 ||
        (raw_fmt != RKNN_TENSOR_NHWC && raw_fmt != RKNN_TENSOR_NCHW))
        return false;
    const int32_t t = set_->plan->graph.inputs[in.index];
    const graph::Tensor& declared = set_->plan->graph.tensors[static_cast<size_t>(t)];
    if (in.size != static_cast<uint64_t>(graph::num_elements(declared.shape))) return false;
    const int c = static_cast<int>(declared.shape[1]), h = static_cast<int>(declared.shape[2]);
    const int w = static_cast<int>(declared.shape[3]);
    const bool nhwc = raw_fmt == RKNN_TENSOR_NHWC;
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
    const auto* pixels = static_cast<const uint8_t*>(in.buf);
    if (home.valid()) {
        if (!begin_cpu_write(home).is_ok()) return false;  // the generic path says why
        uint8_t* dst = buffers_->host(home.buffer) + home.offset;
        if (home.packed_row_pixels > 0) {
            const std::optional<PixelRule>& rule = set_->pixel_rules[in.index];
            pixels_to_packed(pixels, nhwc, c, h, w, static_cast<int>(home.packed_row_pixels), codes.data(),
                             rule.has_value() ? &*rule : nullptr, dst);
            if (packed_image_biased(set_->plan->memory.form)) copy_sign_flipped(dst, dst, static_cast<size_t>(home.bytes));
        } else {
            pixels_to_cube(pixels, nhwc, c, h, w, codes.data(), dst);
        }
    }
    if (set_->input_read_on_cpu[in.index] || !home.valid()) {
        cpu::HostTensor& value = set_->values[static_cast<size_t>(t)];
        if (value.dtype() != declared.dtype || value.shape() != declared.shape)
            value = cpu::make_tensor_like(declared, declared.shape);
        pixels_to_nchw(pixels, nhwc, c, h, w, codes.data(), value.data<int8_t>());
    }
    return true;
}

// A quantised output cube dequantised straight into the client's buffer.
bool Context::get_float_fast(size_t index, rknn_output* out) const {
    const std::optional<Dequant>& rule = set_->dequant_rules[index];
    if (!rule.has_value() || !out->want_float) return false;
    const int32_t t = set_->plan->graph.outputs[index];
    const graph::Tensor& declared = set_->plan->graph.tensors[static_cast<size_t>(t)];
    int c = 0, h = 0, w = 0;
    // A matrix of several rows orders its values unlike its cube: the generic path.
    if (!native_cube_shape(declared, &c, &h, &w) || npu::matrix_rows(declared.shape) > 0) return false;
    cube_to_float_nchw(cube_after_run(t), c, h, w, *rule, static_cast<float*>(out->buf));
    return true;
}

Status Context::inputs_set(uint32_t count, const rknn_input* inputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) return batch_->inputs_set(count, inputs);
    // The general and zero-copy APIs are not mixed (spec 4.7).
    if (bound(input_bindings_))
        return Status(StatusCode::kFailedPrecondition, "an input is bound with rknn_set_io_mem: rknn_inputs_set is not used then");
    RKNN_RETURN_IF_ERROR(refuse_info_only());
    RKNN_RETURN_IF_ERROR(refuse_before_shapes("rknn_inputs_set"));
    const graph::Graph& g = set_->plan->graph;
    for (uint32_t k = 0; k < count; ++k) {
        const rknn_input& in = inputs[k];
        if (in.index >= g.inputs.size())
            return make_status(StatusCode::kInvalidArgument, "inputs[%u].index %u: the model has %zu input(s)", k,
                               in.index, g.inputs.size());
        if (in.buf == nullptr) return make_status(StatusCode::kInvalidArgument, "inputs[%u].buf is NULL", k);
        const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(g.inputs[in.index])];
        if (home.valid() && !buffers_->present(home.buffer))
            return Status(StatusCode::kFailedPrecondition,
                          "inputs are staged in the internal memory: call rknn_set_internal_mem first");
    }
    for (uint32_t k = 0; k < count; ++k) {
        RKNN_RETURN_IF_ERROR(set_input(inputs[k]));
        // Memory other contexts may use between now and the run: keep a copy.
        const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(g.inputs[inputs[k].index])];
        if (io_staged_internally() && home.valid()) {
            staged_inputs_.resize(g.inputs.size());
            const uint8_t* staged = buffers_->host(home.buffer) + home.offset;
            staged_inputs_[inputs[k].index].assign(staged, staged + home.bytes);
        }
    }
    // Staged in internal memory another context may share: flushed now, not
    // left dirty for that context's run to meet.
    return io_staged_internally() ? sync_before_submit() : Status::ok();
}

uint64_t Context::pass_through_bytes(uint32_t index) const {
    // The native form: the device cube (or image), or the model's NCHW values.
    const int32_t t = set_->plan->graph.inputs[index];
    const graph::Tensor& declared = set_->plan->graph.tensors[static_cast<size_t>(t)];
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
    if (!home.valid()) return declared_bytes(declared);
    return home.packed_row_pixels > 0 ? home.bytes : native_cube_dims(declared, set_->plan->memory.form).bytes;
}

Status Context::set_input(const rknn_input& in) {
    const graph::Graph& g = set_->plan->graph;
    if (set_pixels_fast(in)) return Status::ok();
    const int32_t t = g.inputs[in.index];
    const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
    const DeviceHome& home = set_->plan->memory.homes[static_cast<size_t>(t)];
    cpu::HostTensor value;
    if (in.pass_through) {
        const uint64_t native = pass_through_bytes(in.index);
        if (in.size < native)
            return make_status(StatusCode::kInputInvalid, "input %u: pass_through needs %llu bytes, got %u", in.index,
                               static_cast<unsigned long long>(native), in.size);
        if (home.valid()) {
            RKNN_ASSIGN_OR_RETURN(value, unpack_native(static_cast<const uint8_t*>(in.buf), in.size, declared,
                                                       set_->plan->memory.form, home.packed_row_pixels));
        } else {
            value = cpu::make_tensor_like(declared, declared.shape);
            std::memcpy(value.raw(), in.buf, value.byte_size());
        }
    } else {
        const graph::InputPreprocess* pre = in.index < g.preprocess.size() ? &g.preprocess[in.index] : nullptr;
        RKNN_ASSIGN_OR_RETURN(value, convert_input(in, declared, pre));
    }
    if (home.valid()) {
        RKNN_RETURN_IF_ERROR(begin_cpu_write(home));
        RKNN_RETURN_IF_ERROR(pack_native(value, buffers_->host(home.buffer) + home.offset, home.bytes, set_->plan->memory.form,
                                         home.packed_row_pixels));
    }
    set_->values[static_cast<size_t>(t)] = std::move(value);
    return Status::ok();
}

StatusOr<cpu::HostTensor> Context::output_value(size_t index) const {
    return current_value(set_->plan->graph.outputs[index]);
}

template <typename Fill>
Status Context::fill_outputs(const std::vector<const graph::Tensor*>& declared, uint32_t count, rknn_output* outputs,
                             Fill&& fill) {
    if (count > declared.size())
        return make_status(StatusCode::kInvalidArgument, "n_outputs %u: the model has %zu output(s)", count,
                           declared.size());
    // Every preallocated buffer is checked before anything is written.
    for (uint32_t k = 0; k < count; ++k) {
        const rknn_output& out = outputs[k];
        const size_t bytes = output_bytes(*declared[k], out.want_float != 0);
        if (out.is_prealloc && (out.buf == nullptr || out.size < bytes))
            return make_status(StatusCode::kOutputInvalid, "outputs[%u]: preallocated buffer of %u bytes, %zu needed",
                               k, out.buf == nullptr ? 0u : out.size, bytes);
    }
    // Outputs are filled by position, as clients rely on.
    for (uint32_t k = 0; k < count; ++k) {
        rknn_output& out = outputs[k];
        const size_t bytes = output_bytes(*declared[k], out.want_float != 0);
        out.index = k;
        if (!out.is_prealloc) {
            out.buf = std::malloc(bytes == 0 ? 1 : bytes);
            if (out.buf == nullptr) return Status(StatusCode::kResourceExhausted, "output buffer");
            {
                std::lock_guard<std::mutex> lock(owned_mutex_);
                owned_outputs_.insert(out.buf);
            }
            out.size = static_cast<uint32_t>(bytes);
        }
        RKNN_RETURN_IF_ERROR(fill(k, out, bytes));
    }
    return Status::ok();
}

Status Context::outputs_get(uint32_t count, rknn_output* outputs) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_) {
        if (batch_->runs() == 0)
            return Status(StatusCode::kFailedPrecondition, "no rknn_run of this multi-batch model has finished yet");
        if (batch_->outputs_bound())
            return Status(StatusCode::kFailedPrecondition,
                          "an output is bound with rknn_set_io_mem: the outputs are in its buffers, rknn_outputs_get is not used then");
        const std::vector<graph::Tensor>& batched = batch_->batched_outputs();
        std::vector<const graph::Tensor*> declared;
        for (const graph::Tensor& t : batched) declared.push_back(&t);
        return fill_outputs(declared, count, outputs, [&](uint32_t k, rknn_output& out, size_t bytes) {
            return batch_->gather_last(k, out.want_float != 0, out.buf, bytes);
        });
    }
    if (count > set_->plan->graph.outputs.size())
        return make_status(StatusCode::kInvalidArgument, "n_outputs %u: the model has %zu output(s)", count,
                           set_->plan->graph.outputs.size());
    if (runs_ == 0) return Status(StatusCode::kFailedPrecondition, "rknn_run has not been called yet");
    if (!ran_since_switch_)
        return Status(StatusCode::kFailedPrecondition,
                      "rknn_run has not been called since rknn_set_input_shapes chose another shape set");
    if (bound(output_bindings_))
        return Status(StatusCode::kFailedPrecondition,
                      "an output is bound with rknn_set_io_mem: the outputs are in its buffers, rknn_outputs_get is not used then");
    const graph::Graph& g = set_->plan->graph;
    std::vector<const graph::Tensor*> declared;
    for (int32_t t : g.outputs) declared.push_back(&g.tensors[static_cast<size_t>(t)]);
    return fill_outputs(declared, count, outputs, [&](uint32_t k, rknn_output& out, size_t bytes) -> Status {
        if (get_float_fast(k, &out)) return Status::ok();
        RKNN_ASSIGN_OR_RETURN(cpu::HostTensor value, output_value(k));
        return convert_output(value, out.want_float != 0, out.buf, bytes);
    });
}

Status Context::output_to(uint32_t k, bool want_float, void* dst, size_t dst_bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (runs_ == 0) return Status(StatusCode::kFailedPrecondition, "rknn_run has not been called yet");
    if (k >= set_->plan->graph.outputs.size()) return make_status(StatusCode::kInvalidArgument, "no output %u", k);
    rknn_output out{};
    out.want_float = want_float ? 1 : 0;
    out.buf = dst;
    out.size = static_cast<uint32_t>(dst_bytes);
    if (get_float_fast(k, &out)) return Status::ok();
    RKNN_ASSIGN_OR_RETURN(cpu::HostTensor value, output_value(k));
    return convert_output(value, want_float, dst, dst_bytes);
}

Status Context::outputs_get_from(const OutputSnapshot& kept, uint32_t count, rknn_output* outputs) {
    std::vector<const graph::Tensor*> declared;
    for (const graph::Tensor& t : kept.declared) declared.push_back(&t);
    const OutputSnapshot& first = kept.items.empty() ? kept : kept.items[0];  // a multi-batch run: its first item
    for (uint32_t k = 0; k < count && k < first.values.size(); ++k)
        if (first.values[k].dtype() == graph::DType::kUndefined)
            return Status(StatusCode::kFailedPrecondition,
                          "an output is bound with rknn_set_io_mem: the outputs are in its buffers, rknn_outputs_get is "
                          "not used then");
    return fill_outputs(declared, count, outputs, [&](uint32_t k, rknn_output& out, size_t bytes) {
        if (!kept.items.empty()) return BatchFanout::gather_output(kept, k, out.want_float != 0, out.buf, bytes);
        return convert_output(kept.values[k], out.want_float != 0, out.buf, bytes);
    });
}

Status Context::keep_snapshot(OutputSnapshot* keep) const {
    const graph::Graph& g = set_->plan->graph;
    keep->declared.clear();
    keep->values.assign(g.outputs.size(), cpu::HostTensor());
    for (size_t k = 0; k < g.outputs.size(); ++k) {
        keep->declared.push_back(g.tensors[static_cast<size_t>(g.outputs[k])]);
        if (k < output_bindings_.size() && output_bindings_[k]) continue;
        StatusOr<cpu::HostTensor> value = output_value(k);
        if (!value.is_ok()) return value.status().with_context("output " + std::to_string(k));
        // A copy of its own: the CPU's values are overwritten by the next run.
        cpu::HostTensor copy(value.value().dtype(), value.value().shape());
        std::memcpy(copy.raw(), value.value().raw(), copy.byte_size());
        copy.quant = value.value().quant;
        keep->values[k] = std::move(copy);
    }
    return Status::ok();
}

Status Context::outputs_release(uint32_t count, rknn_output* outputs) {
    std::lock_guard<std::mutex> lock(owned_mutex_);
    Status status;
    for (uint32_t k = 0; k < count; ++k) {
        rknn_output& out = outputs[k];
        if (out.is_prealloc || out.buf == nullptr) continue;
        auto owned = owned_outputs_.find(out.buf);
        if (owned == owned_outputs_.end()) {
            status = make_status(StatusCode::kInvalidArgument,
                                 "outputs[%u].buf was not allocated by rknn_outputs_get (or is released already)", k);
            continue;
        }
        std::free(out.buf);
        owned_outputs_.erase(owned);
        out.buf = nullptr;
    }
    return status;
}

}  // namespace rknn::runtime
