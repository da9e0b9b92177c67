#include "random_conv_spec.h"

#include <algorithm>

#include "cpu/int8/lut_stage.h"

namespace rknn::testing {

namespace {

using graph::OpType;

enum class Padding { kValid, kSame, kExplicit };

// TF-style SAME padding for one axis; false when it would reach the kernel size.
bool same_padding(int in, int k, int s, int* lo, int* hi) {
    const int out = (in + s - 1) / s;
    const int total = std::max((out - 1) * s + k - in, 0);
    *lo = total / 2;
    *hi = total - *lo;
    return *hi < k;
}

}  // namespace

QuantConvSpec random_conv_spec(std::mt19937& rng, bool depthwise, bool fully_connected) {
    auto pick = [&rng](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
    const OpType acts[] = {OpType::kIdentity, OpType::kIdentity, OpType::kRelu, OpType::kClip,
                           OpType::kLeakyRelu, OpType::kSigmoid, OpType::kTanh, OpType::kSilu};
    for (;;) {
        QuantConvSpec s;
        s.depthwise = depthwise;
        s.input_zp = pick(-128, 127);
        s.activation = acts[rng() % 8];
        if (fully_connected) {
            s.c_in = pick(1, 300);
            s.c_out = pick(1, 100);
            return s;
        }
        s.c_in = pick(1, 72);
        s.c_out = depthwise ? s.c_in : pick(1, 72);
        s.h = pick(1, 18);
        s.w = pick(1, 18);
        s.kh = pick(1, 7);
        s.kw = rng() % 3 == 0 ? pick(1, 7) : s.kh;
        s.stride_h = pick(1, 4);
        s.stride_w = rng() % 3 == 0 ? pick(1, 4) : s.stride_h;
        s.residual = !depthwise && rng() % 5 == 0;
        switch (static_cast<Padding>(rng() % 3)) {
            case Padding::kValid:
                break;
            case Padding::kSame:
                if (!same_padding(s.h, s.kh, s.stride_h, &s.pad_top, &s.pad_bottom) ||
                    !same_padding(s.w, s.kw, s.stride_w, &s.pad_left, &s.pad_right))
                    continue;
                break;
            case Padding::kExplicit:
                s.pad_top = pick(0, s.kh - 1);
                s.pad_bottom = pick(0, s.kh - 1);
                s.pad_left = pick(0, s.kw - 1);
                s.pad_right = pick(0, s.kw - 1);
                break;
        }
        if (s.h + s.pad_top + s.pad_bottom < s.kh || s.w + s.pad_left + s.pad_right < s.kw) continue;
        if (s.residual && s.activation != OpType::kIdentity && s.activation != OpType::kRelu &&
            !rknn::cpu::int8::needs_lut(s.activation))
            s.activation = OpType::kRelu;  // clip and leaky sit before the EW stage: not fusable after an add
        return s;
    }
}

npu::ConvGeometry conv_geometry(const QuantConvSpec& s) {
    npu::ConvGeometry g;
    g.in_c = s.c_in;
    g.in_h = s.h;
    g.in_w = s.w;
    g.out_c = s.out_c();
    g.kh = s.kh;
    g.kw = s.kw;
    g.stride_h = s.stride_h;
    g.stride_w = s.stride_w;
    g.pad_top = s.pad_top;
    g.pad_left = s.pad_left;
    g.pad_bottom = s.pad_bottom;
    g.pad_right = s.pad_right;
    g.depthwise = s.depthwise;
    return g;
}

}  // namespace rknn::testing
