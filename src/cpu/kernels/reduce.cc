// Reductions over axes (ReduceMean/Sum/Max/Min) and ArgMax/ArgMin.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"

namespace rknn::cpu::kernels {
namespace {

using graph::OpType;

// For each input dim, the stride of the output element it lands in (0 when reduced).
StatusOr<std::vector<int64_t>> reduction_strides(const KernelArgs& args, int64_t* count) {
    const Shape& in = args.inputs[0]->shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> axes = args.op.attrs.get_ints("axes");
    if (args.inputs.size() > 1 && args.inputs[1] != nullptr) {
        const HostTensor& a = *args.inputs[1];
        axes.clear();
        for (int64_t i = 0; i < a.numel(); ++i) axes.push_back(a.data<int64_t>()[i]);
    }
    const bool noop = axes.empty() && args.op.attrs.get_int("noop_with_empty_axes", 0) != 0;
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noop);
    for (int64_t a : axes) {
        RKNN_ASSIGN_OR_RETURN(int64_t axis, graph::normalize_axis(a, rank, "Reduce"));
        reduced[axis] = true;
    }
    // Output strides in the keepdims layout (reduced dims have size 1).
    std::vector<int64_t> strides(static_cast<size_t>(rank), 0);
    int64_t stride = 1;
    *count = 1;
    for (int64_t d = rank; d-- > 0;) {
        if (reduced[d]) {
            *count *= in[d];
        } else {
            strides[d] = stride;
            stride *= in[d];
        }
    }
    return strides;
}

}  // namespace

Status reduce(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    HostTensor* y = args.outputs[0];
    int64_t count = 1;
    RKNN_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, reduction_strides(args, &count));
    const OpType type = args.op.type;
    return visit_numeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
        std::vector<Acc> acc(static_cast<size_t>(y->numel()));
        Acc init = 0;
        if (type == OpType::kReduceMax) init = std::numeric_limits<Acc>::lowest();
        if (type == OpType::kReduceMin) init = std::numeric_limits<Acc>::max();
        std::fill(acc.begin(), acc.end(), init);
        const T* src = x.data<T>();
        for_each_broadcast(x.shape(), {strides}, [&](int64_t i, int64_t o, int64_t, int64_t) {
            const Acc v = static_cast<Acc>(src[i]);
            switch (type) {
            case OpType::kReduceMax: acc[o] = v > acc[o] ? v : acc[o]; break;
            case OpType::kReduceMin: acc[o] = v < acc[o] ? v : acc[o]; break;
            default: acc[o] = static_cast<Acc>(acc[o] + v); break;
            }
        });
        T* dst = y->data<T>();
        for (int64_t i = 0; i < y->numel(); ++i) {
            Acc v = acc[i];
            if (type == OpType::kReduceMean && count > 0) v = static_cast<Acc>(v / static_cast<Acc>(count));
            dst[i] = static_cast<T>(v);
        }
        return Status::ok();
    });
}

Status arg_reduce(const KernelArgs& args) {
    const HostTensor& x = *args.inputs[0];
    RKNN_ASSIGN_OR_RETURN(int64_t axis, graph::normalize_axis(args.op.attrs.get_int("axis", 0), x.rank(), "ArgMax"));
    const bool last = args.op.attrs.get_int("select_last_index", 0) != 0;
    const bool is_max = args.op.type == OpType::kArgMax;
    const AxisSplit s = split_at_axis(x.shape(), axis);
    RKNN_RETURN_IF_ERROR(require(s.axis > 0, "cannot take the arg of an empty axis"));
    int64_t* dst = args.outputs[0]->data<int64_t>();
    return visit_numeric(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T* src = x.data<T>();
        for (int64_t o = 0; o < s.outer; ++o)
            for (int64_t i = 0; i < s.inner; ++i) {
                int64_t best = 0;
                T best_value = src[o * s.axis * s.inner + i];
                for (int64_t a = 1; a < s.axis; ++a) {
                    const T v = src[(o * s.axis + a) * s.inner + i];
                    const bool better = is_max ? (v > best_value || (last && v == best_value))
                                               : (v < best_value || (last && v == best_value));
                    if (better) {
                        best = a;
                        best_value = v;
                    }
                }
                dst[o * s.inner + i] = best;
            }
        return Status::ok();
    });
}

}  // namespace rknn::cpu::kernels
