// Resize / Upsample (float32): nearest, linear and cubic interpolation, with
// every ONNX coordinate transformation mode. Interpolation is separable: each
// output coordinate gets a short list of (input index, weight) pairs per dim
// (resize_taps.h), and an output element is the weighted sum over their product.
#include <algorithm>
#include <vector>

#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "cpu/kernels/resize_taps.h"

namespace rknn::cpu::kernels {

Status resize(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    RKNN_RETURN_IF_ERROR(require(x.dtype() == DType::kFloat32, "Resize takes float32"));
    HostTensor* y = args.outputs[0];
    RKNN_ASSIGN_OR_RETURN(const ResizeTaps plan, resize_taps(args));
    const auto& taps = plan.taps;
    const int64_t rank = x.rank();
    const std::vector<int64_t> in_strides = strides_of(x.shape());
    const float* src = x.data<float>();
    float* dst = y->data<float>();
    std::vector<int64_t> index(static_cast<size_t>(rank), 0);
    std::vector<size_t> choice(static_cast<size_t>(rank), 0);
    for (int64_t i = 0; i < y->numel(); ++i) {
        // Weighted sum over the product of the per-dim tap lists.
        bool outside = false;
        for (int64_t d = 0; d < rank; ++d) outside = outside || taps[d][index[d]].empty();
        double total = 0.0;
        if (!outside) {
            std::fill(choice.begin(), choice.end(), 0);
            for (;;) {
                double w = 1.0;
                int64_t offset = 0;
                for (int64_t d = 0; d < rank; ++d) {
                    const ResizeTap& t = taps[d][index[d]][choice[d]];
                    w *= t.weight;
                    offset += t.index * in_strides[d];
                }
                total += w * src[offset];
                int64_t d = rank - 1;
                for (; d >= 0; --d) {
                    if (++choice[d] < taps[d][index[d]].size()) break;
                    choice[d] = 0;
                }
                if (d < 0) break;
            }
        }
        dst[i] = outside ? static_cast<float>(plan.extrapolation) : static_cast<float>(total);
        for (int64_t d = rank - 1; d >= 0; --d) {
            if (++index[d] < y->dim(d)) break;
            index[d] = 0;
        }
    }
    return Status::ok();
}

}  // namespace rknn::cpu::kernels
