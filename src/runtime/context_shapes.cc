// Dynamic shapes (spec 6): a model converted with several input-shape sets
// has one plan per set, all compiled at rknn_init into the same device
// buffers (each as large as the largest set needs). rknn_set_input_shapes
// points the context at another set's plan; nothing is generated or
// allocated then. The sets are matched by position across the inputs, with
// 4-D shapes given as NHWC, as the vendor's API has them. Shapes inside the
// model's input ranges get plans on first use (context_ranged_plans.cc).
#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "runtime/context.h"

namespace rknn::runtime {
namespace {

// Where dim d of a shape as the API orders it (NHWC for 4-D shapes) is in
// the model's shape of that rank.
size_t model_dim(size_t rank, size_t d) {
    static constexpr size_t kNhwc[] = {0, 2, 3, 1};
    return rank == 4 ? kNhwc[d] : d;
}

// Dim d of a model shape as the API orders it.
int64_t api_dim(const graph::Shape& shape, size_t d) { return shape[model_dim(shape.size(), d)]; }

std::string api_range_text(const graph::ShapeRange& range) {
    graph::ShapeRange api = range;
    for (size_t d = 0; d < range.min.size(); ++d) {
        const size_t m = model_dim(range.min.size(), d);
        api.min[d] = range.min[m];
        api.max[d] = range.max[m];
        api.step[d] = range.step[m];
    }
    return graph::shape_range_to_string(api);
}

std::string api_shape_text(const graph::Shape& shape) {
    std::string text = "[";
    for (size_t d = 0; d < shape.size(); ++d) text += (d ? "," : "") + std::to_string(api_dim(shape, d));
    return text + "]";
}

}  // namespace

Status Context::refuse_before_shapes(const char* call) const {
    if (!dynamic_ || shape_chosen_) return Status::ok();
    return make_status(StatusCode::kFailedPrecondition,
                       "%s: the model has dynamic shapes; choose one of its %zu shape sets with rknn_set_input_shapes "
                       "first",
                       call, sets_.size());
}

Status Context::check_shape_attrs(uint32_t count, const rknn_tensor_attr* attrs) const {
    const graph::Graph& g = main_set_->plan->graph;
    if (count != g.inputs.size())
        return make_status(StatusCode::kInvalidArgument, "n_inputs is %u; the model has %zu input(s)", count,
                           g.inputs.size());
    for (uint32_t i = 0; i < count; ++i) {
        const rknn_tensor_attr& a = attrs[i];
        const size_t rank = g.tensors[static_cast<size_t>(g.inputs[i])].shape.size();
        if (a.index != i)
            return make_status(StatusCode::kInvalidArgument, "attr[%u].index is %u: give every input once, in index order",
                               i, a.index);
        if (a.n_dims != rank || rank > RKNN_MAX_DIMS)
            return make_status(StatusCode::kInputInvalid, "input %u: n_dims %u, but the input has %zu dims", i, a.n_dims,
                               rank);
        const rknn_tensor_format expected = rank == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
        if (a.fmt != expected)
            return make_status(StatusCode::kInputInvalid, "input %u: fmt %s; a %zu-D input's shape is given as %s", i,
                               get_format_string(a.fmt), rank, get_format_string(expected));
    }
    return Status::ok();
}

bool Context::runs_shapes(const PlanState& state, const rknn_tensor_attr* attrs) const {
    // Allocation-free: RKNNLite sets the shapes before every run.
    const graph::Graph& g = state.plan->graph;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        const graph::Shape& shape = g.tensors[static_cast<size_t>(g.inputs[i])].shape;
        for (size_t d = 0; d < shape.size(); ++d)
            if (api_dim(shape, d) != static_cast<int64_t>(attrs[i].dims[d])) return false;
    }
    return true;
}

Status Context::shapes_not_accepted(uint32_t count, const rknn_tensor_attr* attrs) const {
    std::string given, valid;
    for (uint32_t i = 0; i < count; ++i) {
        given += i ? " [" : "[";
        for (uint32_t d = 0; d < attrs[i].n_dims; ++d) given += (d ? "," : "") + std::to_string(attrs[i].dims[d]);
        given += "]";
    }
    for (size_t k = 0; k < sets_.size(); ++k) {
        const graph::Graph& set_graph = sets_[k].plan->graph;
        valid += "\n  set " + std::to_string(k) + ":";
        for (int32_t t : set_graph.inputs) valid += " " + api_shape_text(set_graph.tensors[static_cast<size_t>(t)].shape);
    }
    const std::vector<graph::ShapeRange>& ranges = main_set_->plan->graph.input_ranges;
    if (!ranges.empty()) {
        valid += "\n  or inside the ranges:";
        for (const graph::ShapeRange& r : ranges) valid += " " + api_range_text(r);
    }
    return make_status(StatusCode::kInputInvalid, "input shapes %s are not one of the model's shape sets (NHWC for 4-D):%s",
                       given.c_str(), valid.c_str());
}

Status Context::set_input_shapes(uint32_t count, const rknn_tensor_attr* attrs) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (batch_)
        return Status(StatusCode::kFailedPrecondition, "a multi-batch model has fixed input shapes (B items of one shape)");
    RKNN_RETURN_IF_ERROR(refuse_info_only());
    if (!dynamic_)
        return Status(StatusCode::kFailedPrecondition,
                      "the model has static input shapes (it was converted with one --input-shapes set)");
    RKNN_RETURN_IF_ERROR(check_shape_attrs(count, attrs));
    if (shape_chosen_ && runs_shapes(*set_, attrs)) return Status::ok();  // RKNNLite sets the shapes on every run
    for (PlanState& s : sets_)
        if (runs_shapes(s, attrs)) {
            RKNN_RETURN_IF_ERROR(switch_to(&s));
            trim_ranged_plans();
            return Status::ok();
        }
    const graph::Graph& g = main_set_->plan->graph;
    if (g.input_ranges.empty()) return shapes_not_accepted(count, attrs);
    std::vector<graph::Shape> shapes;
    for (uint32_t i = 0; i < count; ++i) {
        graph::Shape shape(attrs[i].n_dims);
        for (size_t d = 0; d < shape.size(); ++d) shape[model_dim(shape.size(), d)] = attrs[i].dims[d];
        if (!g.input_ranges[i].contains(shape)) return shapes_not_accepted(count, attrs);
        shapes.push_back(std::move(shape));
    }
    bool compiled = false;
    StatusOr<PlanState*> state = ranged_plan(shapes, &compiled);
    const Status switched = state.is_ok() ? switch_to(state.value()) : state.status();
    if (!switched.is_ok()) {
        // Preparing a new plan ran its CPU kernels once, into host values
        // the current plan shares: its last outputs are gone.
        if (compiled) ran_since_switch_ = false;
        trim_ranged_plans();
        return switched;
    }
    trim_ranged_plans();
    return Status::ok();
}

Status Context::switch_to(PlanState* state) {
    // A binding describes the previous shapes: every one ends, and buffers the
    // NPU used in place become the context's again (the vendor's flow binds
    // again after each switch).
    bool in_place = false;
    for (size_t i = 0; i < io_slots_.size(); ++i)
        in_place = in_place || buffers_->slot(kFirstIoBuffer + static_cast<int32_t>(i)) != io_slots_[i];
    if (in_place) {
        std::vector<std::shared_ptr<const DeviceBuffers::Slot>> previous;
        for (size_t i = 0; i < io_slots_.size(); ++i) {
            const int32_t id = kFirstIoBuffer + static_cast<int32_t>(i);
            previous.push_back(buffers_->slot(id));
            buffers_->restore(id, io_slots_[i]);
        }
        const Status relinked = relink();
        if (!relinked.is_ok()) {
            for (size_t i = 0; i < previous.size(); ++i)
                buffers_->restore(kFirstIoBuffer + static_cast<int32_t>(i), previous[i]);
            return relinked;
        }
    }
    size_t ended = 0;
    for (auto* bindings : {&input_bindings_, &output_bindings_})
        for (auto& b : *bindings)
            if (b) {
                ++ended;
                b.reset();
            }
    if (ended > 0)
        RKNN_LOG_AT(3, "input shapes changed: %zu I/O memory binding(s) ended; bind again with rknn_set_io_mem", ended);
    // What rknn_inputs_set staged, and the outputs kept, were of the old shapes.
    for (auto& staged : staged_inputs_) staged.clear();
    for (auto& kept : kept_outputs_) kept.clear();
    std::fill(client_input_buffers_.begin(), client_input_buffers_.end(), false);
    std::fill(client_output_buffers_.begin(), client_output_buffers_.end(), false);
    set_ = state;
    shape_chosen_ = true;
    ran_since_switch_ = false;
    return Status::ok();
}

Status Context::check_input_index(uint32_t index) const {
    const size_t inputs = main_set_->plan->graph.inputs.size();
    if (index < inputs) return Status::ok();
    return make_status(StatusCode::kInvalidArgument, "index %u: the model has %zu input(s)", index, inputs);
}

Status Context::query_dynamic_range(rknn_input_range* range) const {
    if (!dynamic_)
        return Status(StatusCode::kFailedPrecondition, "INPUT_DYNAMIC_RANGE: the model has static input shapes");
    RKNN_RETURN_IF_ERROR(check_input_index(range->index));
    const graph::Graph& g = main_set_->plan->graph;
    const uint32_t index = range->index;
    std::memset(range, 0, sizeof(*range));
    range->index = index;
    const graph::Tensor& declared = g.tensors[static_cast<size_t>(g.inputs[index])];
    std::snprintf(range->name, sizeof(range->name), "%s", declared.name.c_str());
    range->n_dims = static_cast<uint32_t>(std::min<size_t>(declared.shape.size(), RKNN_MAX_DIMS));
    range->fmt = declared.shape.size() == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
    range->shape_number = static_cast<uint32_t>(sets_.size());  // at most 512: the loader refuses more
    for (size_t k = 0; k < sets_.size(); ++k) {
        const graph::Graph& set_graph = sets_[k].plan->graph;
        const graph::Shape& shape = set_graph.tensors[static_cast<size_t>(set_graph.inputs[index])].shape;
        for (uint32_t d = 0; d < range->n_dims; ++d) range->dyn_range[k][d] = static_cast<uint32_t>(api_dim(shape, d));
    }
    return Status::ok();
}

Status Context::query_shape_range(rknn_openrknn_shape_range* range) const {
    RKNN_RETURN_IF_ERROR(check_input_index(range->index));
    const graph::Graph& g = main_set_->plan->graph;
    const uint32_t index = range->index;
    std::memset(range, 0, sizeof(*range));
    range->index = index;
    range->shape_number = dynamic_ ? static_cast<uint32_t>(sets_.size()) : 0;
    if (g.input_ranges.empty()) return Status::ok();  // n_dims 0: the shape sets (or the static shapes) only
    const graph::ShapeRange& r = g.input_ranges[index];
    const size_t rank = std::min<size_t>(r.min.size(), RKNN_MAX_DIMS);
    range->n_dims = static_cast<uint32_t>(rank);
    range->fmt = rank == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
    for (size_t d = 0; d < rank; ++d) {
        const size_t m = model_dim(r.min.size(), d);
        range->min[d] = static_cast<uint32_t>(r.min[m]);
        range->max[d] = static_cast<uint32_t>(r.max[m]);
        range->step[d] = static_cast<uint32_t>(r.step[m]);
    }
    return Status::ok();
}

}  // namespace rknn::runtime
