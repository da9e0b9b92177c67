#include "graph/op_params.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rknn::graph {
namespace {

const ValueInfo* optional_input(const std::vector<const ValueInfo*>& inputs, size_t index) {
    if (index >= inputs.size() || inputs[index] == nullptr) return nullptr;
    // An empty tensor stands for "not given" in several ONNX ops (Resize's roi/scales).
    if (inputs[index]->shape.size() == 1 && inputs[index]->shape[0] == 0) return nullptr;
    return inputs[index];
}

// Reads values from input `index` when present, else from attribute `attr`.
StatusOr<std::vector<int64_t>> ints_from_input_or_attr(const Op& op, const std::vector<const ValueInfo*>& inputs,
                                                       size_t index, const char* attr, bool* given) {
    if (const ValueInfo* v = optional_input(inputs, index)) {
        *given = true;
        return read_int_values(v, attr);
    }
    *given = op.attrs.has(attr);
    return op.attrs.get_ints(attr);
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); }

}  // namespace

StatusOr<SliceParams> slice_params(const Op& op, const std::vector<const ValueInfo*>& inputs) {
    const Shape& in = inputs[0]->shape;
    const int64_t rank = static_cast<int64_t>(in.size());
    bool given = false;
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ints_from_input_or_attr(op, inputs, 1, "starts", &given));
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> ends, ints_from_input_or_attr(op, inputs, 2, "ends", &given));
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ints_from_input_or_attr(op, inputs, 3, "axes", &given));
    std::vector<int64_t> steps;
    if (const ValueInfo* v = optional_input(inputs, 4)) {
        RKNN_ASSIGN_OR_RETURN(steps, read_int_values(v, "steps"));
    }
    if (starts.size() != ends.size()) return Status(StatusCode::kInvalidArgument, "starts and ends differ in length");
    if (axes.empty()) {
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) {
        return Status(StatusCode::kInvalidArgument, "starts, ends, axes and steps differ in length");
    }
    SliceParams p;
    p.starts.assign(rank, 0);
    p.steps.assign(rank, 1);
    p.out = in;
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < starts.size(); ++i) {
        RKNN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axes[i], rank, "Slice"));
        if (seen[axis]) return Status(StatusCode::kInvalidArgument, "an axis repeats");
        seen[axis] = true;
        const int64_t dim = in[axis];
        const int64_t step = steps[i];
        if (step == 0) return Status(StatusCode::kInvalidArgument, "step 0");
        int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
        int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
        if (step > 0) {
            start = clamp64(start, 0, dim);
            end = clamp64(end, 0, dim);
        } else {
            start = clamp64(start, 0, dim - 1);
            end = clamp64(end, -1, dim - 1);
        }
        const int64_t span = end - start;
        const int64_t count = step > 0 ? (span + step - 1) / step : (span + step + 1) / step;
        p.starts[axis] = start;
        p.steps[axis] = step;
        p.out[axis] = std::max<int64_t>(count, 0);
    }
    return p;
}

StatusOr<SplitParams> split_params(const Op& op, const std::vector<const ValueInfo*>& inputs, size_t n_outputs) {
    const Shape& in = inputs[0]->shape;
    SplitParams p;
    RKNN_ASSIGN_OR_RETURN(p.axis, normalize_axis(op.attrs.get_int("axis", 0), static_cast<int64_t>(in.size()), "Split"));
    bool given = false;
    RKNN_ASSIGN_OR_RETURN(p.sizes, ints_from_input_or_attr(op, inputs, 1, "split", &given));
    const int64_t dim = in[p.axis];
    if (p.sizes.empty()) {
        const int64_t n = static_cast<int64_t>(n_outputs);
        const int64_t piece = (dim + n - 1) / n;
        for (int64_t i = 0; i < n; ++i) p.sizes.push_back(std::max<int64_t>(0, std::min(piece, dim - i * piece)));
    }
    if (p.sizes.size() != n_outputs) return Status(StatusCode::kInvalidArgument, "split sizes != outputs");
    int64_t total = 0;
    for (int64_t s : p.sizes) {
        if (s < 0) return Status(StatusCode::kInvalidArgument, "negative split size");
        total += s;
    }
    if (total != dim) return Status(StatusCode::kInvalidArgument, "split sizes do not add up to the dimension");
    return p;
}

StatusOr<PadParams> pad_params(const Op& op, const std::vector<const ValueInfo*>& inputs) {
    const Shape& in = inputs[0]->shape;
    const size_t rank = in.size();
    bool given = false;
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ints_from_input_or_attr(op, inputs, 1, "pads", &given));
    std::vector<int64_t> axes;
    if (const ValueInfo* v = optional_input(inputs, 3)) {
        RKNN_ASSIGN_OR_RETURN(axes, read_int_values(v, "axes"));
    } else {
        for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (pads.size() != 2 * axes.size()) return Status(StatusCode::kInvalidArgument, "pads has the wrong length");
    PadParams p;
    p.begins.assign(rank, 0);
    p.ends.assign(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
        RKNN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axes[i], static_cast<int64_t>(rank), "Pad"));
        p.begins[axis] = pads[i];
        p.ends[axis] = pads[i + axes.size()];
    }
    p.mode = op.attrs.get_string("mode", "constant");
    if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge") {
        return Status(StatusCode::kInvalidArgument, "unknown pad mode " + p.mode);
    }
    p.out = in;
    for (size_t d = 0; d < rank; ++d) {
        p.out[d] = in[d] + p.begins[d] + p.ends[d];
        if (p.out[d] < 0) return Status(StatusCode::kInvalidArgument, "padding crops below zero");
        if (p.mode != "constant" && in[d] == 0 && p.out[d] > 0)
            return Status(StatusCode::kInvalidArgument, "reflect/edge padding of an empty dimension");
        if (p.mode == "reflect" && (p.begins[d] >= in[d] || p.ends[d] >= in[d]) && (p.begins[d] > 0 || p.ends[d] > 0))
            return Status(StatusCode::kInvalidArgument, "reflect padding must be smaller than the dimension");
    }
    return p;
}

StatusOr<ResizeParams> resize_params(const Op& op, const std::vector<const ValueInfo*>& inputs) {
    const Shape& in = inputs[0]->shape;
    const size_t rank = in.size();
    ResizeParams p;
    // Resize (opset 11+): X, roi, scales, sizes. Resize-10 / Upsample-9: X, scales. Upsample-7: attribute.
    const bool legacy = op.type == OpType::kUpsample || inputs.size() == 2;
    const ValueInfo* scales_in = optional_input(inputs, legacy ? 1 : 2);
    const ValueInfo* sizes_in = legacy ? nullptr : optional_input(inputs, 3);
    if (sizes_in != nullptr) {
        RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, read_int_values(sizes_in, "sizes"));
        if (sizes.size() != rank) return Status(StatusCode::kInvalidArgument, "sizes has the wrong length");
        p.out = sizes;
        for (size_t d = 0; d < rank; ++d) {
            if (sizes[d] < 0) return Status(StatusCode::kInvalidArgument, "negative size");
            p.scales.push_back(in[d] == 0 ? 1.0 : static_cast<double>(sizes[d]) / static_cast<double>(in[d]));
        }
        return p;
    }
    std::vector<double> scales;
    if (scales_in != nullptr) {
        RKNN_ASSIGN_OR_RETURN(scales, read_float_values(scales_in, "scales"));
    } else {
        for (float s : op.attrs.get_floats("scales")) scales.push_back(s);
    }
    if (scales.size() != rank) return Status(StatusCode::kInvalidArgument, "Resize needs scales or sizes for every dim");
    for (size_t d = 0; d < rank; ++d) {
        if (!(scales[d] > 0) || !std::isfinite(scales[d]) || scales[d] > 1e6)
            return Status(StatusCode::kInvalidArgument, "scales must be positive and finite");
        // ONNX: output = floor(input * scale); scales are float32 in the model.
        p.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * static_cast<float>(scales[d]))));
    }
    p.scales = scales;
    return p;
}

StatusOr<Shape> reshape_target(const Op& op, const std::vector<const ValueInfo*>& inputs) {
    const Shape& in = inputs[0]->shape;
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> target, read_int_values(inputs[1], "shape"));
    const bool allow_zero = op.attrs.get_int("allowzero", 0) != 0;
    int64_t known = 1;
    int infer_at = -1;
    Shape out(target.size());
    for (size_t d = 0; d < target.size(); ++d) {
        int64_t v = target[d];
        if (v == 0 && !allow_zero) {
            if (d >= in.size()) return Status(StatusCode::kInvalidArgument, "0 copies a dimension that does not exist");
            v = in[d];
        }
        if (v == -1) {
            if (infer_at >= 0) return Status(StatusCode::kInvalidArgument, "more than one -1 in the shape");
            infer_at = static_cast<int>(d);
            continue;
        }
        if (v < 0) return Status(StatusCode::kInvalidArgument, "negative dimension in the shape");
        out[d] = v;
        if (v != 0 && known > kMaxTensorElements / v) return Status(StatusCode::kInvalidArgument, "shape too large");
        known *= v;
    }
    int64_t total = 0;
    if (!checked_num_elements(in, &total)) return Status(StatusCode::kInvalidArgument, "input shape");
    if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
            return Status(StatusCode::kInvalidArgument, "cannot infer -1: sizes do not divide");
        out[infer_at] = total / known;
    } else if (known != total) {
        return make_status(StatusCode::kInvalidArgument, "reshape of %lld elements into %s",
                           static_cast<long long>(total), shape_to_string(out).c_str());
    }
    return out;
}

StatusOr<std::vector<int64_t>> transpose_perm(const Op& op, size_t rank) {
    std::vector<int64_t> perm = op.attrs.get_ints("perm");
    if (perm.empty()) {
        for (size_t d = 0; d < rank; ++d) perm.push_back(static_cast<int64_t>(rank - 1 - d));
    }
    if (perm.size() != rank) return Status(StatusCode::kInvalidArgument, "perm has the wrong length");
    std::vector<bool> seen(rank, false);
    for (int64_t& p : perm) {
        RKNN_ASSIGN_OR_RETURN(p, normalize_axis(p, static_cast<int64_t>(rank), "Transpose"));
        if (seen[p]) return Status(StatusCode::kInvalidArgument, "perm repeats an axis");
        seen[p] = true;
    }
    return perm;
}

StatusOr<std::vector<int64_t>> squeeze_axes(const Op& op, const std::vector<const ValueInfo*>& inputs,
                                            int64_t rank) {
    bool given = false;
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ints_from_input_or_attr(op, inputs, 1, "axes", &given));
    for (int64_t& a : axes) {
        RKNN_ASSIGN_OR_RETURN(a, normalize_axis(a, rank, op_type_name(op.type)));
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
        return Status(StatusCode::kInvalidArgument, "axes repeat");
    return axes;
}

}  // namespace rknn::graph
