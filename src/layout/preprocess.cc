#include "layout/preprocess.h"

#include "cpu/convert.h"

namespace rknn::layout {

StatusOr<cpu::HostTensor> apply_preprocess(const cpu::HostTensor& user, const graph::InputPreprocess& pre,
                                           const graph::Shape& graph_shape) {
    if (graph_shape.size() != 4 || user.rank() != 4) {
        return Status(StatusCode::kInvalidArgument, "pre-processing applies to 4-D image inputs");
    }
    const int64_t n = graph_shape[0], c = graph_shape[1], h = graph_shape[2], w = graph_shape[3];
    const bool nhwc = pre.user_layout != graph::Layout::kNCHW;
    const graph::Shape expected = nhwc ? graph::Shape{n, h, w, c} : graph::Shape{n, c, h, w};
    if (user.shape() != expected) {
        return Status(StatusCode::kInvalidArgument, "input shape " + graph::shape_to_string(user.shape()) +
                                                        " does not match the expected " + graph::shape_to_string(expected));
    }
    const auto per_channel = [&](const std::vector<float>& v, int64_t ch, float fallback) {
        if (v.empty()) return fallback;
        return v.size() == 1 ? v[0] : v[static_cast<size_t>(ch) % v.size()];
    };
    cpu::HostTensor out(graph::DType::kFloat32, graph_shape);
    float* dst = out.data<float>();
    for (int64_t b = 0; b < n; ++b)
        for (int64_t ch = 0; ch < c; ++ch) {
            const int64_t src_ch = pre.reverse_channels ? c - 1 - ch : ch;
            const float mean = per_channel(pre.mean, ch, 0.0f);
            const float inv_std = 1.0f / per_channel(pre.std, ch, 1.0f);
            for (int64_t y = 0; y < h; ++y)
                for (int64_t x = 0; x < w; ++x) {
                    const int64_t src = nhwc ? ((b * h + y) * w + x) * c + src_ch : ((b * c + src_ch) * h + y) * w + x;
                    const float v = static_cast<float>(cpu::element_as_double(user, src));
                    dst[((b * c + ch) * h + y) * w + x] = (v - mean) * inv_std;
                }
        }
    return out;
}

}  // namespace rknn::layout
