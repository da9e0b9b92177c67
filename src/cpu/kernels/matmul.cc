// Float Gemm and (batched, broadcasting) MatMul.
#include <vector>

#include "cpu/fused_ops.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "base/gemm_f32.h"

namespace rknn::cpu::kernels {
namespace {

// A row-major copy of a 2-D matrix, transposed when asked.
std::vector<float> maybe_transposed(const float* src, int64_t rows, int64_t cols, bool transpose) {
    std::vector<float> out(static_cast<size_t>(rows * cols));
    if (!transpose) {
        std::copy(src, src + rows * cols, out.begin());
        return out;
    }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = src[r * cols + c];
    return out;
}

}  // namespace

Status gemm(const KernelArgs& args) {
    const HostTensor& a = *args.inputs[0];
    const HostTensor& b = *args.inputs[1];
    const HostTensor* c = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    RKNN_RETURN_IF_ERROR(require(a.dtype() == DType::kFloat32 && b.dtype() == DType::kFloat32 &&
                                     (c == nullptr || c->dtype() == DType::kFloat32),
                                 "the float Gemm takes float32 tensors"));
    HostTensor* y = args.outputs[0];
    const bool ta = args.op.attrs.get_int("transA", 0) != 0;
    const bool tb = args.op.attrs.get_int("transB", 0) != 0;
    const float alpha = args.op.attrs.get_float("alpha", 1.0f);
    const float beta = args.op.attrs.get_float("beta", 1.0f);
    const int64_t m = y->dim(0);
    const int64_t n = y->dim(1);
    const int64_t k = ta ? a.dim(0) : a.dim(1);
    const std::vector<float> a2 = maybe_transposed(a.data<float>(), a.dim(0), a.dim(1), ta);
    const std::vector<float> b2 = maybe_transposed(b.data<float>(), b.dim(0), b.dim(1), tb);
    float* out = y->data<float>();
    gemm_f32(m, n, k, a2.data(), k, b2.data(), n, out, n, false);
    if (alpha != 1.0f) {
        for (int64_t i = 0; i < m * n; ++i) out[i] *= alpha;
    }
    if (c != nullptr) {
        const std::vector<std::vector<int64_t>> strides = {broadcast_strides(c->shape(), y->shape())};
        const float* pc = c->data<float>();
        for_each_broadcast(y->shape(), strides, [&](int64_t i, int64_t oc, int64_t, int64_t) { out[i] += beta * pc[oc]; });
    }
    const Fusion fusion = fusion_of(args.op);
    return apply_fusion_float(fusion, fusion.residual_input >= 0 ? args.inputs[fusion.residual_input] : nullptr, y);
}

Status matmul(const KernelArgs& args) {
    const HostTensor& a = *args.inputs[0];
    const HostTensor& b = *args.inputs[1];
    RKNN_RETURN_IF_ERROR(require(a.dtype() == DType::kFloat32 && b.dtype() == DType::kFloat32,
                                 "the float MatMul takes float32 tensors"));
    HostTensor* y = args.outputs[0];
    // Promote vectors to matrices, as NumPy does.
    Shape sa = a.shape();
    Shape sb = b.shape();
    if (sa.size() == 1) sa.insert(sa.begin(), 1);
    if (sb.size() == 1) sb.push_back(1);
    const int64_t m = sa[sa.size() - 2];
    const int64_t k = sa.back();
    const int64_t n = sb.back();
    const Shape batch_a(sa.begin(), sa.end() - 2);
    const Shape batch_b(sb.begin(), sb.end() - 2);
    RKNN_ASSIGN_OR_RETURN(const Shape batch, graph::broadcast_shapes(batch_a, batch_b));
    const std::vector<std::vector<int64_t>> strides = {broadcast_strides(batch_a, batch),
                                                       broadcast_strides(batch_b, batch)};
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* po = y->data<float>();
    auto run_one = [&](int64_t i, int64_t oa, int64_t ob, int64_t) {
        gemm_f32(m, n, k, pa + oa * m * k, k, pb + ob * k * n, n, po + i * m * n, n, false);
    };
    if (batch.empty()) {
        run_one(0, 0, 0, 0);
    } else {
        for_each_broadcast(batch, strides, run_one);
    }
    const Fusion fusion = fusion_of(args.op);
    return apply_fusion_float(fusion, fusion.residual_input >= 0 ? args.inputs[fusion.residual_input] : nullptr, y);
}

}  // namespace rknn::cpu::kernels
