// int8 fully connected layers (Gemm, MatMul with 2-D weights): the NPU runs
// them as 1x1 convolutions, so the arithmetic is the convolution's.
#include <vector>

#include "base/parallel.h"

#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"

namespace rknn::cpu::int8 {
namespace {

// Reductions up to this long fit int32: |a - za| <= 255 and |w| <= 128.
constexpr int64_t kInt32Depth = 65536;

// out[m, n] = epilogue(sum_k (a[m, k] - za) * w[n, k]) for `rows` rows of A.
// Columns are shared out over the host threads; products of int16 values
// summed in int32 (exact for these depths), which the compiler vectorises.
void fully_connected(const int8_t* a, int32_t za, const int8_t* w_nk, int64_t rows, int64_t k, int64_t n,
                     const Epilogue& e, const int8_t* residual, int8_t* out) {
    const int64_t work = rows * k * n;
    parallel_for(n, work >= (int64_t{1} << 20) ? 64 : n, [&](int64_t j0, int64_t j1) {
        std::vector<int16_t> arow(static_cast<size_t>(k));
        for (int64_t m = 0; m < rows; ++m) {
            for (int64_t t = 0; t < k; ++t) arow[static_cast<size_t>(t)] = static_cast<int16_t>(a[m * k + t] - za);
            for (int64_t j = j0; j < j1; ++j) {
                const int8_t* wrow = w_nk + j * k;
                int64_t acc = 0;
                if (k <= kInt32Depth) {
                    int32_t sum = 0;
                    for (int64_t t = 0; t < k; ++t) sum += static_cast<int32_t>(arow[static_cast<size_t>(t)]) * wrow[t];
                    acc = sum;
                } else {
                    for (int64_t t = 0; t < k; ++t) acc += static_cast<int64_t>(arow[static_cast<size_t>(t)]) * wrow[t];
                }
                out[m * n + j] = e.finish(static_cast<size_t>(j), acc, residual ? residual[m * n + j] : 0);
            }
        }
    });
}

// Weights as [N, K] rows, transposing a [K, N] matrix when needed.
std::vector<int8_t> rows_of(const HostTensor& w, bool already_nk) {
    const int64_t r = w.dim(0);
    const int64_t c = w.dim(1);
    std::vector<int8_t> out(static_cast<size_t>(r * c));
    const int8_t* src = w.data<int8_t>();
    if (already_nk) {
        std::copy(src, src + r * c, out.begin());
    } else {
        for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j) out[j * r + i] = src[i * c + j];
    }
    return out;
}

}  // namespace

Status gemm(const KernelArgs& args) {
    const HostTensor& a = *args.inputs[0];
    const HostTensor& w = *args.inputs[1];
    const HostTensor* bias = args.inputs.size() > 2 ? args.inputs[2] : nullptr;
    const Fusion fusion = fusion_of(args.op);
    const HostTensor* residual = fusion.residual_input >= 0 ? args.inputs[fusion.residual_input] : nullptr;
    HostTensor* y = args.outputs[0];
    if (args.op.attrs.get_int("transA", 0) != 0 || args.op.attrs.get_float("alpha", 1.0f) != 1.0f ||
        args.op.attrs.get_float("beta", 1.0f) != 1.0f) {
        return Status(StatusCode::kUnimplemented, "int8 Gemm needs transA = 0 and alpha = beta = 1");
    }
    const bool trans_b = args.op.attrs.get_int("transB", 0) != 0;
    const int64_t n = y->dim(1);
    const int64_t k = a.dim(1);
    RKNN_ASSIGN_OR_RETURN(const Epilogue e, make_epilogue(a, w, n, bias, residual, *y, fusion));
    if (residual != nullptr && residual->shape() != y->shape())
        return Status(StatusCode::kInvalidArgument, "the fused residual must match the output shape");
    const std::vector<int8_t> w_nk = rows_of(w, trans_b);
    fully_connected(a.data<int8_t>(), a.quant.zero_point(), w_nk.data(), a.dim(0), k, n, e,
                    residual ? residual->data<int8_t>() : nullptr, y->data<int8_t>());
    return Status::ok();
}

Status matmul(const KernelArgs& args) {
    const HostTensor& a = *args.inputs[0];
    const HostTensor& w = *args.inputs[1];
    const Fusion fusion = fusion_of(args.op);
    const HostTensor* residual = fusion.residual_input >= 0 ? args.inputs[fusion.residual_input] : nullptr;
    HostTensor* y = args.outputs[0];
    if (w.rank() != 2 || a.rank() < 2) return Status(StatusCode::kUnimplemented, "int8 MatMul takes 2-D weights");
    const int64_t k = w.dim(0);
    const int64_t n = w.dim(1);
    RKNN_ASSIGN_OR_RETURN(const Epilogue e, make_epilogue(a, w, n, nullptr, residual, *y, fusion));
    if (residual != nullptr && residual->shape() != y->shape())
        return Status(StatusCode::kInvalidArgument, "the fused residual must match the output shape");
    const std::vector<int8_t> w_nk = rows_of(w, false);
    fully_connected(a.data<int8_t>(), a.quant.zero_point(), w_nk.data(), a.numel() / k, k, n, e,
                    residual ? residual->data<int8_t>() : nullptr, y->data<int8_t>());
    return Status::ok();
}

}  // namespace rknn::cpu::int8
