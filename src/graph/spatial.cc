#include "graph/spatial.h"

#include <algorithm>
#include <string>

namespace rknn::graph {
namespace {

// Reads an attribute list of `n` values, or `fallback` repeated when absent.
StatusOr<std::vector<int64_t>> per_dim(const Attributes& attrs, const char* name, size_t n, int64_t fallback) {
    std::vector<int64_t> values = attrs.get_ints(name);
    if (values.empty()) return std::vector<int64_t>(n, fallback);
    if (values.size() != n) {
        return make_status(StatusCode::kInvalidArgument, "%s has %zu values for %zu spatial dims", name,
                           values.size(), n);
    }
    return values;
}

Status check_positive(const std::vector<int64_t>& values, const char* name) {
    for (int64_t v : values) {
        if (v < 1 || v > (int64_t{1} << 20)) return make_status(StatusCode::kInvalidArgument, "%s must be >= 1", name);
    }
    return Status::ok();
}

Status read_common(const Attributes& attrs, size_t n, const std::vector<int64_t>& kernel, SpatialParams* p) {
    if (kernel.size() != n) {
        return make_status(StatusCode::kInvalidArgument, "kernel has %zu dims for %zu spatial dims", kernel.size(), n);
    }
    p->kernel = kernel;
    RKNN_ASSIGN_OR_RETURN(p->strides, per_dim(attrs, "strides", n, 1));
    RKNN_ASSIGN_OR_RETURN(p->dilations, per_dim(attrs, "dilations", n, 1));
    RKNN_RETURN_IF_ERROR(check_positive(p->kernel, "kernel_shape"));
    RKNN_RETURN_IF_ERROR(check_positive(p->strides, "strides"));
    RKNN_RETURN_IF_ERROR(check_positive(p->dilations, "dilations"));
    std::vector<int64_t> pads = attrs.get_ints("pads");
    if (pads.empty()) pads.assign(2 * n, 0);
    if (pads.size() != 2 * n) return make_status(StatusCode::kInvalidArgument, "pads has %zu values", pads.size());
    for (int64_t v : pads) {
        if (v < 0 || v > (int64_t{1} << 20)) return Status(StatusCode::kInvalidArgument, "pads must be >= 0");
    }
    p->pads_begin.assign(pads.begin(), pads.begin() + n);
    p->pads_end.assign(pads.begin() + n, pads.end());
    return Status::ok();
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

StatusOr<SpatialParams> forward_spatial(const Attributes& attrs, const Shape& in, const std::vector<int64_t>& kernel,
                                        bool is_pool) {
    const size_t n = in.size();
    SpatialParams p;
    RKNN_RETURN_IF_ERROR(read_common(attrs, n, kernel, &p));
    const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
    const bool ceil_mode = is_pool && attrs.get_int("ceil_mode", 0) != 0;
    p.out.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t effective = (p.kernel[i] - 1) * p.dilations[i] + 1;
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            p.out[i] = ceil_div(in[i], p.strides[i]);
            const int64_t total = std::max<int64_t>((p.out[i] - 1) * p.strides[i] + effective - in[i], 0);
            const int64_t small = total / 2;
            p.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
            p.pads_end[i] = total - p.pads_begin[i];
        } else if (auto_pad == "VALID") {
            p.pads_begin[i] = p.pads_end[i] = 0;
            if (in[i] < effective) return Status(StatusCode::kInvalidArgument, "the window is larger than the input");
            p.out[i] = (in[i] - effective) / p.strides[i] + 1;
        } else if (auto_pad == "NOTSET") {
            const int64_t span = in[i] + p.pads_begin[i] + p.pads_end[i] - effective;
            if (span < 0) return Status(StatusCode::kInvalidArgument, "the window is larger than the padded input");
            p.out[i] = (ceil_mode ? ceil_div(span, p.strides[i]) : span / p.strides[i]) + 1;
            // A window must start inside the input or its leading padding.
            if (ceil_mode && (p.out[i] - 1) * p.strides[i] >= in[i] + p.pads_begin[i]) --p.out[i];
        } else {
            return Status(StatusCode::kInvalidArgument, "unknown auto_pad \"" + auto_pad + "\"");
        }
    }
    return p;
}

StatusOr<SpatialParams> transpose_spatial(const Attributes& attrs, const Shape& in,
                                          const std::vector<int64_t>& kernel) {
    const size_t n = in.size();
    SpatialParams p;
    RKNN_RETURN_IF_ERROR(read_common(attrs, n, kernel, &p));
    std::vector<int64_t> output_padding;
    RKNN_ASSIGN_OR_RETURN(output_padding, per_dim(attrs, "output_padding", n, 0));
    const std::vector<int64_t> output_shape = attrs.get_ints("output_shape");
    const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
    p.out.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t effective = (p.kernel[i] - 1) * p.dilations[i] + 1;
        const int64_t full = p.strides[i] * (in[i] - 1) + output_padding[i] + effective;
        int64_t target = -1;
        if (!output_shape.empty()) {
            // output_shape may include N and C; its last n values are the spatial sizes.
            if (output_shape.size() < n) return Status(StatusCode::kInvalidArgument, "output_shape is too short");
            target = output_shape[output_shape.size() - n + i];
        } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
            target = in[i] * p.strides[i];
        }
        if (target >= 0) {
            const int64_t total = full - target;
            const bool upper = auto_pad == "SAME_UPPER";
            // A target beyond the full size extends the output with zeros at the end.
            p.pads_begin[i] = total < 0 ? 0 : (upper ? total / 2 : total - total / 2);
            p.pads_end[i] = total - p.pads_begin[i];
            p.out[i] = target;
        } else {
            p.out[i] = full - p.pads_begin[i] - p.pads_end[i];
        }
        if (p.out[i] <= 0) return Status(StatusCode::kInvalidArgument, "non-positive output size");
    }
    return p;
}

}  // namespace rknn::graph
