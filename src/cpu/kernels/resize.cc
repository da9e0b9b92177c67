// Resize / Upsample (float32): nearest, linear and cubic interpolation, with
// every ONNX coordinate transformation mode. Interpolation is separable: each
// output coordinate gets a short list of (input index, weight) pairs per dim
// (resize_taps.h), and an output element is the weighted sum over their product.
#include <algorithm>
#include <vector>

#include "base/parallel.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "cpu/kernels/resize_taps.h"

namespace rknn::cpu::kernels {
namespace {

// Whether every output position of a dim reads its own input position with
// weight 1, other taps weighing 0 (what linear and cubic give an axis they
// do not scale). Dropping those zero terms changes no finite sum.
bool is_identity(const std::vector<std::vector<ResizeTap>>& dim_taps) {
    for (size_t p = 0; p < dim_taps.size(); ++p) {
        int weighted = 0;
        for (const ResizeTap& t : dim_taps[p]) {
            if (t.weight == 0.0) continue;
            if (t.index != static_cast<int64_t>(p) || t.weight != 1.0) return false;
            ++weighted;
        }
        if (weighted != 1) return false;
    }
    return true;
}

// 4-D resizes of H and W only (the usual upsampling): each plane on its own,
// threaded over planes. The same sums as the general loop, in the same order
// (H taps outer, W taps inner, weights multiplied in double as there, the
// N and C weights being exactly 1), so the results are identical for
// finite inputs (a NaN or infinity next to a pixel does not leak in through
// a zero weight here).
void resize_planes(const ResizeTaps& plan, const HostTensor& x, HostTensor* y) {
    const auto& th = plan.taps[2];
    const auto& tw = plan.taps[3];
    const int64_t planes = y->dim(0) * y->dim(1);
    const int64_t ih = x.dim(2), iw = x.dim(3), oh = y->dim(2), ow = y->dim(3);
    const float* src = x.data<float>();
    float* dst = y->data<float>();
    const auto fill = static_cast<float>(plan.extrapolation);
    parallel_for(planes, planes * oh * ow >= (int64_t{1} << 16) ? 1 : planes, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
            const float* in = src + p * ih * iw;
            float* out = dst + p * oh * ow;
            for (int64_t oy = 0; oy < oh; ++oy) {
                const auto& rows = th[static_cast<size_t>(oy)];
                for (int64_t ox = 0; ox < ow; ++ox) {
                    const auto& cols = tw[static_cast<size_t>(ox)];
                    if (rows.empty() || cols.empty()) {
                        out[oy * ow + ox] = fill;
                        continue;
                    }
                    double total = 0.0;
                    for (const ResizeTap& r : rows) {
                        const float* line = in + r.index * iw;
                        for (const ResizeTap& c : cols) total += (r.weight * c.weight) * line[c.index];
                    }
                    out[oy * ow + ox] = static_cast<float>(total);
                }
            }
        }
    });
}

}  // namespace

Status resize(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    RKNN_RETURN_IF_ERROR(require(x.dtype() == DType::kFloat32, "Resize takes float32"));
    HostTensor* y = args.outputs[0];
    RKNN_ASSIGN_OR_RETURN(const ResizeTaps plan, resize_taps(args));
    const auto& taps = plan.taps;
    const int64_t rank = x.rank();
    if (rank == 4 && is_identity(taps[0]) && is_identity(taps[1])) {
        resize_planes(plan, x, y);
        return Status::ok();
    }
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
