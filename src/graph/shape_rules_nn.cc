// Shape rules of convolutions, pools and matrix products.
#include "graph/shape_rules.h"
#include "graph/spatial.h"

namespace rknn::graph::rules {
namespace {

Status need_rank(const ValueInfo* v, size_t min_rank, const char* what) {
    if (v->shape.size() < min_rank) {
        return make_status(StatusCode::kInvalidArgument, "%s needs at least %zu dims, has %zu", what, min_rank,
                           v->shape.size());
    }
    return Status::ok();
}

Shape spatial_of(const Shape& shape) { return Shape(shape.begin() + 2, shape.end()); }

}  // namespace

Status conv(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_RETURN_IF_ERROR(need_rank(in[0], 3, "Conv input"));
    const Shape& x = in[0]->shape;
    const Shape& w = in[1]->shape;
    if (w.size() != x.size()) return Status(StatusCode::kInvalidArgument, "weights and input ranks differ");
    const int64_t group = op.attrs.get_int("group", 1);
    if (group < 1 || x[1] % group != 0 || w[1] * group != x[1] || w[0] % group != 0) {
        return make_status(StatusCode::kInvalidArgument, "channels %lld, weights %s and group %lld do not match",
                           static_cast<long long>(x[1]), shape_to_string(w).c_str(), static_cast<long long>(group));
    }
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    const std::vector<int64_t> declared = op.attrs.get_ints("kernel_shape");
    if (!declared.empty() && declared != kernel) return Status(StatusCode::kInvalidArgument, "kernel_shape != weights");
    if (in.size() > 2 && in[2] != nullptr && (in[2]->shape.size() != 1 || in[2]->shape[0] != w[0])) {
        return Status(StatusCode::kInvalidArgument, "bias must have one value per output channel");
    }
    RKNN_ASSIGN_OR_RETURN(SpatialParams p, forward_spatial(op.attrs, spatial_of(x), kernel, false));
    out[0].shape = {x[0], w[0]};
    out[0].shape.insert(out[0].shape.end(), p.out.begin(), p.out.end());
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

Status conv_transpose(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_RETURN_IF_ERROR(need_rank(in[0], 3, "ConvTranspose input"));
    const Shape& x = in[0]->shape;
    const Shape& w = in[1]->shape;
    const int64_t group = op.attrs.get_int("group", 1);
    if (w.size() != x.size() || group < 1 || w[0] != x[1] || x[1] % group != 0) {
        return Status(StatusCode::kInvalidArgument, "weights, input channels and group do not match");
    }
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    RKNN_ASSIGN_OR_RETURN(SpatialParams p, transpose_spatial(op.attrs, spatial_of(x), kernel));
    out[0].shape = {x[0], w[1] * group};
    out[0].shape.insert(out[0].shape.end(), p.out.begin(), p.out.end());
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

Status pool(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_RETURN_IF_ERROR(need_rank(in[0], 3, "pool input"));
    const std::vector<int64_t> kernel = op.attrs.get_ints("kernel_shape");
    if (kernel.empty()) return Status(StatusCode::kInvalidArgument, "kernel_shape is required");
    RKNN_ASSIGN_OR_RETURN(SpatialParams p, forward_spatial(op.attrs, spatial_of(in[0]->shape), kernel, true));
    Shape shape = {in[0]->shape[0], in[0]->shape[1]};
    shape.insert(shape.end(), p.out.begin(), p.out.end());
    out[0].shape = shape;
    out[0].dtype = in[0]->dtype;
    if (out.size() > 1) {
        out[1].shape = shape;
        out[1].dtype = DType::kInt64;
    }
    return Status::ok();
}

Status global_pool(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    RKNN_RETURN_IF_ERROR(need_rank(in[0], 3, "global pool input"));
    out[0].shape = in[0]->shape;
    for (size_t d = 2; d < out[0].shape.size(); ++d) out[0].shape[d] = 1;
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

Status gemm(const Op& op, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    const Shape& a = in[0]->shape;
    const Shape& b = in[1]->shape;
    if (a.size() != 2 || b.size() != 2) return Status(StatusCode::kInvalidArgument, "Gemm takes 2-D A and B");
    const bool ta = op.attrs.get_int("transA", 0) != 0;
    const bool tb = op.attrs.get_int("transB", 0) != 0;
    const int64_t m = ta ? a[1] : a[0];
    const int64_t k = ta ? a[0] : a[1];
    const int64_t kb = tb ? b[1] : b[0];
    const int64_t n = tb ? b[0] : b[1];
    if (k != kb) return Status(StatusCode::kInvalidArgument, "Gemm inner dimensions differ");
    if (in.size() > 2 && in[2] != nullptr) {
        RKNN_RETURN_IF_ERROR(broadcast_shapes({m, n}, in[2]->shape).status());
    }
    out[0].shape = {m, n};
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

Status matmul(const Op&, const std::vector<const ValueInfo*>& in, std::vector<ValueInfo>& out) {
    Shape a = in[0]->shape;
    Shape b = in[1]->shape;
    if (a.empty() || b.empty()) return Status(StatusCode::kInvalidArgument, "MatMul operands must have rank >= 1");
    const bool a_vector = a.size() == 1;
    const bool b_vector = b.size() == 1;
    if (a_vector) a.insert(a.begin(), 1);
    if (b_vector) b.push_back(1);
    if (a.back() != b[b.size() - 2]) return Status(StatusCode::kInvalidArgument, "MatMul inner dimensions differ");
    RKNN_ASSIGN_OR_RETURN(Shape batch, broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)));
    Shape shape = batch;
    if (!a_vector) shape.push_back(a[a.size() - 2]);
    if (!b_vector) shape.push_back(b.back());
    out[0].shape = shape;
    out[0].dtype = in[0]->dtype;
    return Status::ok();
}

}  // namespace rknn::graph::rules
