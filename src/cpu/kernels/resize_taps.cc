// Resize tap lists: ONNX's coordinate transformation modes, nearest rounding
// modes and linear / cubic (Keys) interpolation weights.
#include "cpu/kernels/resize_taps.h"

#include <cmath>

#include "cpu/convert.h"
#include "graph/op_params.h"

namespace rknn::cpu::kernels {
namespace {

using graph::OpType;

using Tap = ResizeTap;

struct ResizeSettings {
    std::string mode;            // nearest, linear, cubic
    std::string coordinates;     // coordinate_transformation_mode
    std::string nearest_mode;
    double cubic_a = -0.75;
    bool exclude_outside = false;
    double extrapolation = 0.0;
};

ResizeSettings settings_of(const graph::Op& op) {
    ResizeSettings s;
    s.mode = op.attrs.get_string("mode", "nearest");
    if (s.mode == "bilinear" || s.mode == "trilinear") s.mode = "linear";  // Upsample-7 spellings
    // Upsample and Resize-10 use asymmetric coordinates and floor for nearest.
    const bool legacy = op.type == OpType::kUpsample || op.attrs.get_int("legacy_resize", 0) != 0;
    s.coordinates = op.attrs.get_string("coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel");
    s.nearest_mode = op.attrs.get_string("nearest_mode", legacy ? "floor" : "round_prefer_floor");
    s.cubic_a = op.attrs.get_float("cubic_coeff_a", -0.75f);
    s.exclude_outside = op.attrs.get_int("exclude_outside", 0) != 0;
    s.extrapolation = op.attrs.get_float("extrapolation_value", 0.0f);
    return s;
}

// Source coordinate of output position x along one dim; false when it falls
// outside the crop (tf_crop_and_resize only).
// ONNX measures the resized length as input * scale, before flooring to the
// output size; align_corners and tf_crop_and_resize use that real length.
bool source_coordinate(const ResizeSettings& s, int64_t x, int64_t in, int64_t out, double scale, double roi_start,
                       double roi_end, double* result) {
    const double xf = static_cast<double>(x);
    const double length = static_cast<double>(in) * scale;
    const std::string& m = s.coordinates;
    if (m == "half_pixel") *result = (xf + 0.5) / scale - 0.5;
    else if (m == "pytorch_half_pixel") *result = out > 1 ? (xf + 0.5) / scale - 0.5 : 0.0;
    else if (m == "align_corners") *result = length <= 1.0 ? 0.0 : xf * static_cast<double>(in - 1) / (length - 1.0);
    else if (m == "asymmetric") *result = xf / scale;
    else if (m == "tf_half_pixel_for_nn") *result = (xf + 0.5) / scale;
    else {  // tf_crop_and_resize
        const double span = static_cast<double>(in - 1);
        *result = length > 1.0 ? roi_start * span + xf * (roi_end - roi_start) * span / (length - 1.0)
                               : 0.5 * (roi_start + roi_end) * span;
        if (*result < 0.0 || *result > span) return false;
    }
    return true;
}

int64_t clamp_index(int64_t i, int64_t size) { return i < 0 ? 0 : (i >= size ? size - 1 : i); }

int64_t nearest_index(const std::string& mode, double x) {
    const double f = std::floor(x);
    const bool half = x - f == 0.5;
    if (mode == "floor") return static_cast<int64_t>(f);
    if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
    if (mode == "round_prefer_ceil") return static_cast<int64_t>(half ? f + 1 : std::round(x));
    return static_cast<int64_t>(half ? f : std::round(x));  // round_prefer_floor
}

std::vector<Tap> taps_for(const ResizeSettings& s, double x, int64_t in) {
    if (s.mode == "nearest") return {{clamp_index(nearest_index(s.nearest_mode, x), in), 1.0}};
    const double x0 = std::floor(x);
    const double t = x - x0;
    const auto base = static_cast<int64_t>(x0);
    if (s.mode == "linear") return {{clamp_index(base, in), 1.0 - t}, {clamp_index(base + 1, in), t}};
    // Cubic convolution (Keys) with coefficient a.
    const double a = s.cubic_a;
    const double d[4] = {t + 1.0, t, 1.0 - t, 2.0 - t};
    std::vector<Tap> taps;
    double total = 0.0;
    for (int k = 0; k < 4; ++k) {
        const double v = d[k];
        const double w = v <= 1.0 ? ((a + 2.0) * v - (a + 3.0)) * v * v + 1.0 : ((a * v - 5.0 * a) * v + 8.0 * a) * v - 4.0 * a;
        const int64_t index = base - 1 + k;
        if (s.exclude_outside && (index < 0 || index >= in)) continue;
        taps.push_back({clamp_index(index, in), w});
        total += w;
    }
    if (s.exclude_outside && total != 0.0) {
        for (Tap& tap : taps) tap.weight /= total;
    }
    return taps;
}

}  // namespace

StatusOr<ResizeTaps> resize_taps(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    const HostTensor& y = *args.outputs[0];
    std::vector<graph::ValueInfo> infos(args.inputs.size());
    std::vector<const graph::ValueInfo*> ptrs(args.inputs.size(), nullptr);
    for (size_t i = 0; i < args.inputs.size(); ++i) {
        if (args.inputs[i] == nullptr) continue;
        infos[i] = {args.inputs[i]->dtype(), args.inputs[i]->shape(), args.inputs[i]->raw()};
        ptrs[i] = &infos[i];
    }
    RKNN_ASSIGN_OR_RETURN(const graph::ResizeParams p, graph::resize_params(args.op, ptrs));
    const ResizeSettings s = settings_of(args.op);
    if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic")
        return Status(StatusCode::kInvalidArgument, "unknown Resize mode " + s.mode);
    const int64_t rank = x.rank();
    std::vector<double> roi(2 * static_cast<size_t>(rank), 0.0);
    for (int64_t d = 0; d < rank; ++d) roi[rank + d] = 1.0;
    if (args.op.type == OpType::kResize && args.inputs.size() > 1 && args.inputs[1] != nullptr &&
        args.inputs[1]->numel() == 2 * rank) {
        for (int64_t i = 0; i < 2 * rank; ++i) roi[i] = element_as_double(*args.inputs[1], i);
    }
    ResizeTaps result;
    result.mode = s.mode;
    result.extrapolation = s.extrapolation;
    result.taps.resize(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
        result.taps[d].resize(static_cast<size_t>(y.dim(d)));
        for (int64_t o = 0; o < y.dim(d); ++o) {
            double src = 0.0;
            if (source_coordinate(s, o, x.dim(d), y.dim(d), p.scales[d], roi[d], roi[rank + d], &src))
                result.taps[d][o] = taps_for(s, src, x.dim(d));
        }
    }
    return result;
}

}  // namespace rknn::cpu::kernels
