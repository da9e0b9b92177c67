// Data-movement kernels. They copy whole elements and never look at values,
// so they work for every dtype (and pass quantised tensors through).
#include <algorithm>
#include <cstring>
#include <vector>

#include "base/parallel.h"
#include "cpu/kernels/kernel_util.h"
#include "cpu/kernels/kernels.h"
#include "graph/op_params.h"

namespace rknn::cpu::kernels {
namespace {

std::vector<graph::ValueInfo> infos_of(const KernelArgs& args, std::vector<const graph::ValueInfo*>* ptrs) {
    std::vector<graph::ValueInfo> infos(args.inputs.size());
    ptrs->assign(args.inputs.size(), nullptr);
    for (size_t i = 0; i < args.inputs.size(); ++i) {
        const HostTensor* t = args.inputs[i];
        if (t == nullptr) continue;
        infos[i] = {t->dtype(), t->shape(), t->raw()};
        (*ptrs)[i] = &infos[i];
    }
    return infos;
}

size_t element_size(const HostTensor& t) { return graph::dtype_size(t.dtype()); }

// One element of `size` bytes (a fixed-size copy for the usual sizes).
inline void copy_element(uint8_t* d, const uint8_t* s, size_t size) {
    switch (size) {
    case 1: *d = *s; break;
    case 2: std::memcpy(d, s, 2); break;
    case 4: std::memcpy(d, s, 4); break;
    default: std::memcpy(d, s, size); break;
    }
}

// Copies a strided view of `src` into contiguous `dst`: dst[i] = src[start + sum(idx_d * step_d)].
// Dims of one element are dropped and neighbours that the source also walks
// contiguously are merged, so that a transpose that keeps its inner dims, or
// a slice, copies whole runs; rows of the merged view share out over the
// host's threads.
void gather_strided(const HostTensor& src, const Shape& out_shape, int64_t start_offset,
                    const std::vector<int64_t>& src_steps, HostTensor* dst) {
    if (dst->numel() == 0) return;
    const size_t esize = element_size(src);
    const auto* s = static_cast<const uint8_t*>(src.raw()) + start_offset * static_cast<int64_t>(esize);
    auto* d = static_cast<uint8_t*>(dst->raw());
    std::vector<int64_t> dims, steps;  // outermost first
    for (size_t k = 0; k < out_shape.size(); ++k) {
        if (out_shape[k] == 1) continue;
        if (!dims.empty() && steps.back() == src_steps[k] * out_shape[k]) {
            dims.back() *= out_shape[k];
            steps.back() = src_steps[k];
            continue;
        }
        dims.push_back(out_shape[k]);
        steps.push_back(src_steps[k]);
    }
    if (dims.empty()) {  // one element
        if (dst->numel() == 1) copy_element(d, s, esize);
        return;
    }
    const int64_t inner = dims.back(), inner_step = steps.back();
    const int64_t rows = dst->numel() / inner;
    const size_t outer_dims = dims.size() - 1;
    const auto copy_rows = [&](int64_t r0, int64_t r1) {
        // The source offset of row r0, then an odometer over the outer dims.
        std::vector<int64_t> index(outer_dims, 0);
        int64_t offset = 0;
        for (int64_t k = static_cast<int64_t>(outer_dims) - 1, rest = r0; k >= 0; --k) {
            index[static_cast<size_t>(k)] = rest % dims[static_cast<size_t>(k)];
            rest /= dims[static_cast<size_t>(k)];
            offset += index[static_cast<size_t>(k)] * steps[static_cast<size_t>(k)];
        }
        for (int64_t r = r0; r < r1; ++r) {
            uint8_t* out = d + r * inner * static_cast<int64_t>(esize);
            const uint8_t* in = s + offset * static_cast<int64_t>(esize);
            if (inner_step == 1) {
                std::memcpy(out, in, static_cast<size_t>(inner) * esize);
            } else {
                for (int64_t i = 0; i < inner; ++i) copy_element(out + i * static_cast<int64_t>(esize), in + i * inner_step * static_cast<int64_t>(esize), esize);
            }
            for (int64_t k = static_cast<int64_t>(outer_dims) - 1; k >= 0; --k) {
                const auto kk = static_cast<size_t>(k);
                offset += steps[kk];
                if (++index[kk] < dims[kk]) break;
                offset -= steps[kk] * dims[kk];
                index[kk] = 0;
            }
        }
    };
    const int64_t bytes = dst->numel() * static_cast<int64_t>(esize);
    parallel_for(rows, bytes >= (int64_t{1} << 18) ? std::max<int64_t>(1, (int64_t{1} << 14) / (inner * static_cast<int64_t>(esize))) : rows,
                 copy_rows);
}

}  // namespace

Status concat(const KernelArgs& args) {
    HostTensor* out = args.outputs[0];
    RKNN_ASSIGN_OR_RETURN(int64_t axis, graph::normalize_axis(args.op.attrs.get_int("axis", 0), out->rank(), "Concat"));
    const AxisSplit o = split_at_axis(out->shape(), axis);
    const size_t esize = element_size(*out);
    auto* dst = static_cast<uint8_t*>(out->raw());
    int64_t offset = 0;
    for (const HostTensor* in : args.inputs) {
        RKNN_RETURN_IF_ERROR(require(in->dtype() == out->dtype(), "Concat inputs must share one type"));
        const int64_t width = in->dim(axis) * o.inner;
        const auto* src = static_cast<const uint8_t*>(in->raw());
        for (int64_t outer = 0; outer < o.outer; ++outer) {
            std::memcpy(dst + (outer * o.axis * o.inner + offset) * esize, src + outer * width * esize,
                        static_cast<size_t>(width) * esize);
        }
        offset += width;
    }
    return Status::ok();
}

Status split(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    std::vector<const graph::ValueInfo*> ptrs;
    const auto infos = infos_of(args, &ptrs);
    RKNN_ASSIGN_OR_RETURN(graph::SplitParams p, graph::split_params(args.op, ptrs, args.outputs.size()));
    const AxisSplit s = split_at_axis(in.shape(), p.axis);
    const size_t esize = element_size(in);
    const auto* src = static_cast<const uint8_t*>(in.raw());
    int64_t offset = 0;
    for (size_t k = 0; k < args.outputs.size(); ++k) {
        const int64_t width = p.sizes[k] * s.inner;
        auto* dst = static_cast<uint8_t*>(args.outputs[k]->raw());
        for (int64_t outer = 0; outer < s.outer; ++outer) {
            std::memcpy(dst + outer * width * esize, src + (outer * s.axis * s.inner + offset) * esize,
                        static_cast<size_t>(width) * esize);
        }
        offset += width;
    }
    return Status::ok();
}

Status slice(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    std::vector<const graph::ValueInfo*> ptrs;
    const auto infos = infos_of(args, &ptrs);
    RKNN_ASSIGN_OR_RETURN(graph::SliceParams p, graph::slice_params(args.op, ptrs));
    const std::vector<int64_t> strides = strides_of(in.shape());
    int64_t start = 0;
    std::vector<int64_t> steps(strides.size());
    for (size_t d = 0; d < strides.size(); ++d) {
        start += p.starts[d] * strides[d];
        steps[d] = p.steps[d] * strides[d];
    }
    gather_strided(in, p.out, start, steps, args.outputs[0]);
    return Status::ok();
}

Status copy_data(const KernelArgs& args) {
    std::memcpy(args.outputs[0]->raw(), args.inputs[0]->raw(), args.inputs[0]->byte_size());
    return Status::ok();
}

Status transpose(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    RKNN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, graph::transpose_perm(args.op, in.shape().size()));
    const std::vector<int64_t> strides = strides_of(in.shape());
    std::vector<int64_t> steps(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) steps[d] = strides[perm[d]];
    gather_strided(in, args.outputs[0]->shape(), 0, steps, args.outputs[0]);
    return Status::ok();
}

Status pad(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    HostTensor* out = args.outputs[0];
    std::vector<const graph::ValueInfo*> ptrs;
    const auto infos = infos_of(args, &ptrs);
    RKNN_ASSIGN_OR_RETURN(graph::PadParams p, graph::pad_params(args.op, ptrs));
    const size_t esize = element_size(in);
    // The fill value, in the tensor's dtype: from input 2, or attribute "value" (Pad-2).
    std::vector<uint8_t> fill(esize, 0);
    if (args.inputs.size() > 2 && args.inputs[2] != nullptr && args.inputs[2]->numel() > 0) {
        RKNN_RETURN_IF_ERROR(require(args.inputs[2]->dtype() == in.dtype(), "constant_value must match the data type"));
        std::memcpy(fill.data(), args.inputs[2]->raw(), esize);
    } else if (in.dtype() == DType::kFloat32) {
        const float value = args.op.attrs.get_float("value", 0.0f);
        std::memcpy(fill.data(), &value, esize);
    }
    const std::vector<int64_t> in_strides = strides_of(in.shape());
    const Shape& out_shape = out->shape();
    const size_t rank = out_shape.size();
    const auto* src = static_cast<const uint8_t*>(in.raw());
    auto* dst = static_cast<uint8_t*>(out->raw());
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < out->numel(); ++i) {
        int64_t offset = 0;
        bool outside = false;
        for (size_t d = 0; d < rank; ++d) {
            int64_t pos = index[d] - p.begins[d];
            const int64_t size = in.dim(static_cast<int64_t>(d));
            if (pos < 0 || pos >= size) {
                if (p.mode == "constant") {
                    outside = true;
                    break;
                }
                if (p.mode == "edge") {
                    pos = pos < 0 ? 0 : size - 1;
                } else {  // reflect, mirrored without repeating the edge
                    const int64_t period = 2 * (size - 1);
                    pos = period == 0 ? 0 : ((pos % period) + period) % period;
                    if (pos >= size) pos = period - pos;
                }
            }
            offset += pos * in_strides[d];
        }
        std::memcpy(dst + i * esize, outside ? fill.data() : src + offset * esize, esize);
        for (size_t d = rank; d-- > 0;) {
            if (++index[d] < out_shape[d]) break;
            index[d] = 0;
        }
    }
    return Status::ok();
}

Status gather(const KernelArgs& args) {
    const HostTensor& data = *args.inputs[0];
    const HostTensor& indices = *args.inputs[1];
    RKNN_ASSIGN_OR_RETURN(int64_t axis, graph::normalize_axis(args.op.attrs.get_int("axis", 0), data.rank(), "Gather"));
    const AxisSplit s = split_at_axis(data.shape(), axis);
    const size_t esize = element_size(data);
    const size_t chunk = static_cast<size_t>(s.inner) * esize;
    const auto* src = static_cast<const uint8_t*>(data.raw());
    auto* dst = static_cast<uint8_t*>(args.outputs[0]->raw());
    const int64_t n_idx = indices.numel();
    for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t j = 0; j < n_idx; ++j) {
            int64_t idx = indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[j] : indices.data<int64_t>()[j];
            if (idx < 0) idx += s.axis;
            if (idx < 0 || idx >= s.axis) {
                return make_status(StatusCode::kInvalidArgument, "Gather index %lld is out of range [0, %lld)",
                                   static_cast<long long>(idx), static_cast<long long>(s.axis));
            }
            std::memcpy(dst + (o * n_idx + j) * chunk, src + (o * s.axis + idx) * chunk, chunk);
        }
    }
    return Status::ok();
}

// DepthToSpace: output row y = h * b + by of channel o interleaves the b
// input rows h of the channels (o, by, bx), bx = 0..b-1 (CRD numbers them
// o * b * b + by * b + bx, DCR (by * b + bx) * oc + o). Rows of the output
// spread over the host threads; each is written once, an input row at a time.
template <typename T>
void depth_to_space_rows(const T* in, T* out, int64_t c, int64_t h, int64_t w, int64_t b, bool crd, int64_t first,
                         int64_t last) {
    const int64_t oc = c / (b * b);
    for (int64_t r = first; r < last; ++r) {  // r = (n * oc + o) * h + hi
        const int64_t hi = r % h, o = (r / h) % oc, ni = r / (h * oc);
        for (int64_t by = 0; by < b; ++by) {
            T* dst = out + ((ni * oc + o) * h * b + hi * b + by) * w * b;
            for (int64_t bx = 0; bx < b; ++bx) {
                const int64_t channel = crd ? (o * b + by) * b + bx : (by * b + bx) * oc + o;
                const T* src = in + ((ni * c + channel) * h + hi) * w;
                for (int64_t x = 0; x < w; ++x) dst[x * b + bx] = src[x];
            }
        }
    }
}

template <typename T>
void depth_to_space_of(const HostTensor& in, HostTensor* out, int64_t b, bool crd) {
    const int64_t n = in.dim(0), c = in.dim(1), h = in.dim(2), w = in.dim(3);
    const int64_t rows = n * (c / (b * b)) * h;
    const auto* src = static_cast<const T*>(in.raw());
    auto* dst = static_cast<T*>(out->raw());
    parallel_for(rows, in.numel() >= (int64_t{1} << 16) ? 1 : rows, [&](int64_t first, int64_t last) {
        depth_to_space_rows(src, dst, c, h, w, b, crd, first, last);
    });
}

Status depth_to_space(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    const int64_t b = args.op.attrs.get_int("blocksize", 1);
    const bool crd = args.op.attrs.get_string("mode", "DCR") == "CRD";
    if (in.rank() != 4 || b < 1 || in.dim(1) % (b * b) != 0)
        return RKNN_INVALID_ARGUMENT("DepthToSpace of a %lld-D tensor with blocksize %lld", static_cast<long long>(in.rank()),
                                     static_cast<long long>(b));
    switch (element_size(in)) {
    case 1: depth_to_space_of<uint8_t>(in, args.outputs[0], b, crd); break;
    case 2: depth_to_space_of<uint16_t>(in, args.outputs[0], b, crd); break;
    case 4: depth_to_space_of<uint32_t>(in, args.outputs[0], b, crd); break;
    case 8: depth_to_space_of<uint64_t>(in, args.outputs[0], b, crd); break;
    default: return RKNN_INVALID_ARGUMENT("DepthToSpace of %zu-byte elements", element_size(in));
    }
    return Status::ok();
}

Status space_to_depth(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    const int64_t b = args.op.attrs.get_int("blocksize", 1);
    const int64_t n = in.dim(0), c = in.dim(1), h = in.dim(2), w = in.dim(3);
    // Output viewed as [n, b(y), b(x), c, h/b, w/b].
    gather_strided(in, {n, b, b, c, h / b, w / b}, 0, {c * h * w, w, 1, h * w, b * w, b}, args.outputs[0]);
    return Status::ok();
}

Status tile(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    HostTensor* out = args.outputs[0];
    // Output index d maps to input index d mod in_dim: walk a 2x-rank view
    // [repeat_0, in_0, repeat_1, in_1, ...] with stride 0 on the repeat dims.
    const std::vector<int64_t> strides = strides_of(in.shape());
    Shape view;
    std::vector<int64_t> steps;
    for (int64_t d = 0; d < in.rank(); ++d) {
        view.push_back(in.dim(d) == 0 ? 0 : out->dim(d) / in.dim(d));
        view.push_back(in.dim(d));
        steps.push_back(0);
        steps.push_back(strides[d]);
    }
    gather_strided(in, view, 0, steps, out);
    return Status::ok();
}

Status expand(const KernelArgs& args) {
    const HostTensor& in = *args.inputs[0];
    HostTensor* out = args.outputs[0];
    gather_strided(in, out->shape(), 0, broadcast_strides(in.shape(), out->shape()), out);
    return Status::ok();
}

}  // namespace rknn::cpu::kernels
