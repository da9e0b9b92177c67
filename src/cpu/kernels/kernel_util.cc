#include "cpu/kernels/kernel_util.h"

namespace rknn::cpu::kernels {

std::vector<int64_t> strides_of(const graph::Shape& shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return strides;
}

std::vector<int64_t> broadcast_strides(const graph::Shape& in, const graph::Shape& out) {
    std::vector<int64_t> result(out.size(), 0);
    const std::vector<int64_t> own = strides_of(in);
    const size_t offset = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) result[offset + d] = in[d] == 1 ? 0 : own[d];
    return result;
}

bool broadcasts_into(const graph::Shape& in, const graph::Shape& out) {
    if (in.size() > out.size()) return false;
    const size_t offset = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) {
        if (in[d] != 1 && in[d] != out[offset + d]) return false;
    }
    return true;
}

AxisSplit split_at_axis(const graph::Shape& shape, int64_t axis) {
    AxisSplit s;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
        if (d < axis) s.outer *= shape[d];
        else if (d == axis) s.axis = shape[d];
        else s.inner *= shape[d];
    }
    return s;
}

}  // namespace rknn::cpu::kernels
