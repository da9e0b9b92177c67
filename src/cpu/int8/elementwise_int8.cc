// int8 element-wise binary ops with the NPU's arithmetic (DPU element-wise
// stage, hw-facts 3.8 and 4.1), with NumPy broadcasting:
//
//   Add/Sub:  y = sat(round_shift((a - za) * Ma +/- (b - zb) * Mb, S) + zy)
//   Mul:      y = sat(round_shift((a - za) * (b - zb) * M, S) + zy)
//   Max/Min:  y = sat(round_shift(max/min((a - za) * Ma, (b - zb) * Mb), S) + zy)
//
// Ma/2^S ~= sa/sy and Mb/2^S ~= sb/sy share one shift; M/2^S ~= sa*sb/sy.
// A single rounding at the end, as in the output converter.
#include "cpu/int8/epilogue.h"
#include "cpu/int8/int8_kernels.h"
#include "cpu/kernels/kernel_util.h"

namespace rknn::cpu::int8 {
namespace {

enum class Kind { kAdd, kSub, kMul, kMax, kMin };

Status binary(const KernelArgs& args, Kind kind) {
    if (args.inputs.size() != 2) return Status(StatusCode::kUnimplemented, "int8 element-wise ops take two inputs");
    const HostTensor& a = *args.inputs[0];
    const HostTensor& b = *args.inputs[1];
    HostTensor* y = args.outputs[0];
    RKNN_RETURN_IF_ERROR(require_int8(a, "input A"));
    RKNN_RETURN_IF_ERROR(require_int8(b, "input B"));
    RKNN_RETURN_IF_ERROR(require_int8(*y, "the output"));
    if (a.quant.per_channel() || b.quant.per_channel() || y->quant.per_channel())
        return Status(StatusCode::kUnimplemented, "per-tensor quantisation only");
    const double sa = a.quant.scale();
    const double sb = b.quant.scale();
    const double sy = y->quant.scale();
    const Requant r = kind == Kind::kMul ? make_requant(sa * sb / sy) : make_requant({sa / sy, sb / sy});
    const int64_t za = a.quant.zero_point();
    const int64_t zb = b.quant.zero_point();
    const int64_t zy = y->quant.zero_point();
    const std::vector<std::vector<int64_t>> strides = {kernels::broadcast_strides(a.shape(), y->shape()),
                                                       kernels::broadcast_strides(b.shape(), y->shape())};
    const int8_t* pa = a.data<int8_t>();
    const int8_t* pb = b.data<int8_t>();
    int8_t* po = y->data<int8_t>();
    kernels::for_each_broadcast(y->shape(), strides, [&](int64_t i, int64_t oa, int64_t ob, int64_t) {
        const int64_t da = pa[oa] - za;
        const int64_t db = pb[ob] - zb;
        int64_t v = 0;
        switch (kind) {
        case Kind::kAdd: v = da * r.multiplier(0) + db * r.multiplier(1); break;
        case Kind::kSub: v = da * r.multiplier(0) - db * r.multiplier(1); break;
        case Kind::kMul: v = da * db * r.multiplier(0); break;
        case Kind::kMax: v = std::max(da * r.multiplier(0), db * r.multiplier(1)); break;
        case Kind::kMin: v = std::min(da * r.multiplier(0), db * r.multiplier(1)); break;
        }
        po[i] = saturate_int8(round_shift(v, r.shift) + zy);
    });
    return Status::ok();
}

}  // namespace

Status add(const KernelArgs& args) { return binary(args, Kind::kAdd); }
Status sub(const KernelArgs& args) { return binary(args, Kind::kSub); }
Status mul(const KernelArgs& args) { return binary(args, Kind::kMul); }
Status max(const KernelArgs& args) { return binary(args, Kind::kMax); }
Status min(const KernelArgs& args) { return binary(args, Kind::kMin); }

}  // namespace rknn::cpu::int8
