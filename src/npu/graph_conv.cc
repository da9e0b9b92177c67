#include "npu/graph_conv.h"

#include "cpu/fused_ops.h"
#include "cpu/int8/lut_stage.h"
#include "graph/spatial.h"
#include "npu/native_layout.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

namespace {

using graph::DType;
using graph::OpType;

Status unsupported(std::string message) { return Status(StatusCode::kUnimplemented, std::move(message)); }

bool static_shape(const graph::Shape& s) {
    for (int64_t d : s)
        if (d <= 0) return false;
    return true;
}

// A view carrying dtype, shape and quantisation; make_epilogue reads no data from it.
cpu::HostTensor view_of(const graph::Tensor& t, const void* data = nullptr) {
    cpu::HostTensor h = cpu::HostTensor::borrow(t.dtype, t.shape, data);
    h.quant = t.quant;
    return h;
}

// The epilogue, its registers and the packed constants, shared by Conv and
// Gemm/MatMul. `w_rows` holds the weights as [oc][taps] (oc-major).
Status finish(const graph::Tensor& x, const cpu::HostTensor& wh, const int8_t* w_rows, const cpu::HostTensor* bias,
              const graph::Tensor* residual, const graph::Tensor& y, const cpu::Fusion& fusion, const hw::SocProfile& soc,
              PreparedConv* prepared) {
    const ConvGeometry& geo = prepared->geometry;
    const int oc = geo.out_c;
    const cpu::HostTensor xh = view_of(x), yh = view_of(y);
    const cpu::HostTensor rh = residual != nullptr ? view_of(*residual) : cpu::HostTensor();
    auto epilogue = cpu::int8::make_epilogue(xh, wh, oc, bias, residual ? &rh : nullptr, yh, fusion);
    if (!epilogue.is_ok()) return epilogue.status();
    prepared->epilogue = std::move(epilogue).value();
    prepared->input_zp = static_cast<int8_t>(x.quant.zero_point());
    const int taps = (geo.depthwise ? 1 : geo.in_c) * geo.kh * geo.kw;
    Int8ConvLayer& layer = prepared->layer;
    layer.geometry = geo;
    layer.input_zp = prepared->input_zp;
    layer.epilogue = epilogue_regs(prepared->epilogue, w_rows, oc, taps, x.quant.zero_point());
    prepared->arch = soc.arch;
    if (soc.arch == hw::NpuArch::kRk356x) {
        prepared->weights = geo.depthwise ? pack_dw_weights_int8_rk356x(w_rows, oc, geo.kh, geo.kw)
                                          : pack_conv_weights_int8_rk356x(w_rows, oc, geo.in_c, geo.kh, geo.kw);
        // A Gemm's input is a matrix, never an image.
        if (x.shape.size() == 4 && can_read_packed_input(geo, soc.arch))
            prepared->image_weights = pack_image_weights_int8_rk356x(w_rows, oc, geo.in_c, geo.kh, geo.kw);
        prepared->records = bs_records_rk356x(layer.epilogue);
        return Status::ok();  // a per-channel PRelu is not lowered there (lower_conv_int8 says so)
    }
    const int c_aligned = align_up(geo.in_c, 16);
    prepared->weights = geo.depthwise ? pack_dw_weights_int8(w_rows, oc, geo.kh, geo.kw, c_aligned)
                                      : pack_conv_weights_int8(w_rows, oc, geo.in_c, geo.kh, geo.kw, c_aligned);
    prepared->records = bs_records(layer.epilogue, align_up(oc, 16));
    prepared->bn_records = prelu_records(layer.epilogue, align_up(oc, 16));
    return Status::ok();
}

// The same residual and activation rules for every lowered product.
Status check_fusion(const graph::Graph& g, const graph::Op& op, const graph::Tensor& y, const cpu::Fusion& fusion,
                    const graph::Tensor** residual, int* residual_input) {
    *residual = nullptr;
    if (fusion.residual_input < 0) return Status::ok();
    const size_t index = static_cast<size_t>(fusion.residual_input);
    if (index >= op.inputs.size() || op.inputs[index] < 0 || static_cast<size_t>(op.inputs[index]) >= g.tensors.size())
        return RKNN_INVALID_ARGUMENT("%s: bad residual input", op.name.c_str());
    *residual = &g.tensors[static_cast<size_t>(op.inputs[index])];
    if ((*residual)->dtype != DType::kInt8 || (*residual)->shape != y.shape)
        return unsupported("the fused residual is not an int8 tensor of the output's shape");
    // On the DPU, BN (clip, leaky) sits before the EW add; only ReLU and the LUT follow it.
    const OpType act = fusion.activation.type;
    if (act != OpType::kIdentity && act != OpType::kRelu && !cpu::int8::needs_lut(act))
        return unsupported(std::string(graph::op_type_name(act)) + " after a fused add: the DPU applies it before the add");
    *residual_input = fusion.residual_input;
    return Status::ok();
}

}  // namespace

StatusOr<ConvParts> conv_parts(const graph::Graph& g, const graph::Op& op, DType dtype, DType bias_dtype) {
    if (op.type != OpType::kConv) return unsupported(std::string(graph::op_type_name(op.type)) + " is not a convolution");
    const auto valid_tensor = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (op.inputs.size() < 2 || op.outputs.size() != 1 || !valid_tensor(op.inputs[0]) || !valid_tensor(op.inputs[1]) ||
        !valid_tensor(op.outputs[0]))
        return RKNN_INVALID_ARGUMENT("convolution %s has malformed inputs or outputs", op.name.c_str());
    ConvParts p;
    p.x = &g.tensors[static_cast<size_t>(op.inputs[0])];
    p.w = &g.tensors[static_cast<size_t>(op.inputs[1])];
    p.y = &g.tensors[static_cast<size_t>(op.outputs[0])];
    const graph::Tensor& x = *p.x;
    const graph::Tensor& w = *p.w;
    const graph::Tensor& y = *p.y;
    if (x.dtype != dtype || w.dtype != dtype || y.dtype != dtype)
        return unsupported(std::string("this path takes ") + graph::dtype_name(dtype) + " convolutions (this one reads " +
                           graph::dtype_name(x.dtype) + " with " + graph::dtype_name(w.dtype) + " weights and writes " +
                           graph::dtype_name(y.dtype) + ")");
    if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4 || !static_shape(x.shape) ||
        !static_shape(w.shape) || !static_shape(y.shape))
        return unsupported("only static 2-D convolutions are lowered");
    if (x.shape[0] != 1) return unsupported("batch " + std::to_string(x.shape[0]) + " runs on the CPU");
    p.weights = g.constant_buffer(op.inputs[1]);
    if (p.weights == nullptr ||
        p.weights->size != static_cast<size_t>(graph::num_elements(w.shape)) * graph::dtype_size(dtype))
        return unsupported("the weights are not a constant of the declared size");

    const int c = static_cast<int>(x.shape[1]), oc = static_cast<int>(w.shape[0]);
    const int64_t groups = op.attrs.get_int("group", 1);
    const bool depthwise = groups > 1 && groups == c && oc == c && w.shape[1] == 1;
    if (groups != 1 && !depthwise) return unsupported("grouped convolution with " + std::to_string(groups) + " groups");
    if (!depthwise && w.shape[1] != c) return RKNN_INVALID_ARGUMENT("weights take %lld channels, input has %d",
                                                                    static_cast<long long>(w.shape[1]), c);
    p.bias_id = op.inputs.size() > 2 ? op.inputs[2] : -1;
    if (p.bias_id >= 0) {
        if (!valid_tensor(p.bias_id)) return RKNN_INVALID_ARGUMENT("convolution %s: bad bias tensor", op.name.c_str());
        p.bias = g.constant_buffer(p.bias_id);
        if (g.tensors[static_cast<size_t>(p.bias_id)].dtype != bias_dtype || p.bias == nullptr ||
            p.bias->size != static_cast<size_t>(oc) * graph::dtype_size(bias_dtype))
            return unsupported(std::string("the bias is not a constant ") + graph::dtype_name(bias_dtype) +
                               " per output channel");
    }

    auto spatial = graph::forward_spatial(op.attrs, {x.shape[2], x.shape[3]}, {w.shape[2], w.shape[3]}, false);
    if (!spatial.is_ok()) return spatial.status();
    const graph::SpatialParams& sp = spatial.value();
    for (int64_t d : sp.dilations)
        if (d != 1) return unsupported("dilated convolution (dilation " + std::to_string(d) + ") is not lowered yet");
    if (sp.out[0] != y.shape[2] || sp.out[1] != y.shape[3] || y.shape[1] != oc)
        return RKNN_INVALID_ARGUMENT("convolution %s: output shape does not follow from its attributes", op.name.c_str());

    ConvGeometry& geo = p.geometry;
    geo.in_c = c;
    geo.in_h = static_cast<int>(x.shape[2]);
    geo.in_w = static_cast<int>(x.shape[3]);
    geo.out_c = oc;
    geo.kh = static_cast<int>(w.shape[2]);
    geo.kw = static_cast<int>(w.shape[3]);
    geo.stride_h = static_cast<int>(sp.strides[0]);
    geo.stride_w = static_cast<int>(sp.strides[1]);
    geo.pad_top = static_cast<int>(sp.pads_begin[0]);
    geo.pad_left = static_cast<int>(sp.pads_begin[1]);
    geo.pad_bottom = static_cast<int>(sp.pads_end[0]);
    geo.pad_right = static_cast<int>(sp.pads_end[1]);
    geo.depthwise = depthwise;
    geo.fp16 = dtype == DType::kFloat16;
    return p;
}

StatusOr<std::unique_ptr<PreparedConv>> prepare_int8_conv(const graph::Graph& g, const graph::Op& op,
                                                          const hw::SocProfile& soc) {
    RKNN_ASSIGN_OR_RETURN(const ConvParts parts, conv_parts(g, op, DType::kInt8, DType::kInt32));
    auto prepared = std::make_unique<PreparedConv>();
    prepared->geometry = parts.geometry;
    const cpu::Fusion fusion = cpu::fusion_of(op);
    const graph::Tensor* residual = nullptr;
    RKNN_RETURN_IF_ERROR(check_fusion(g, op, *parts.y, fusion, &residual, &prepared->residual_input));
    const cpu::HostTensor* bias = nullptr;
    cpu::HostTensor bh;
    if (parts.bias != nullptr) {
        bh = view_of(g.tensors[static_cast<size_t>(parts.bias_id)], parts.bias->data);
        bias = &bh;
    }
    RKNN_RETURN_IF_ERROR(finish(*parts.x, view_of(*parts.w, parts.weights->data),
                                reinterpret_cast<const int8_t*>(parts.weights->data), bias, residual, *parts.y, fusion,
                                soc, prepared.get()));
    return prepared;
}

StatusOr<GemmParts> gemm_parts(const graph::Graph& g, const graph::Op& op, DType dtype, DType bias_dtype) {
    if (op.type != OpType::kGemm && op.type != OpType::kMatMul)
        return unsupported(std::string(graph::op_type_name(op.type)) + " is not a matrix product");
    const auto valid_tensor = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (op.inputs.size() < 2 || op.outputs.size() != 1 || !valid_tensor(op.inputs[0]) || !valid_tensor(op.inputs[1]) ||
        !valid_tensor(op.outputs[0]))
        return RKNN_INVALID_ARGUMENT("%s has malformed inputs or outputs", op.name.c_str());
    GemmParts p;
    p.a = &g.tensors[static_cast<size_t>(op.inputs[0])];
    p.w = &g.tensors[static_cast<size_t>(op.inputs[1])];
    p.y = &g.tensors[static_cast<size_t>(op.outputs[0])];
    const graph::Tensor& a = *p.a;
    const graph::Tensor& w = *p.w;
    const graph::Tensor& y = *p.y;
    if (a.dtype != dtype || w.dtype != dtype || y.dtype != dtype)
        return unsupported(std::string("this path takes ") + graph::dtype_name(dtype) + " matrix products");
    // M rows: the NPU sees M one-pixel rows of K channels (a 1x1 convolution).
    // A batch of one ([1, M, K] x [K, N], as sequence models export it) is
    // the same product in the same cube.
    if (!is_matrix(a.shape) || w.shape.size() != 2 || !is_matrix(y.shape) || a.shape.size() != y.shape.size() ||
        !static_shape(a.shape) || !static_shape(w.shape))
        return unsupported("only [M, K] x [K, N] (or [1, M, K] x [K, N]) products are lowered");
    if (op.type == OpType::kGemm && (op.attrs.get_int("transA", 0) != 0 || op.attrs.get_float("alpha", 1.0f) != 1.0f ||
                                     op.attrs.get_float("beta", 1.0f) != 1.0f))
        return unsupported("Gemm with transA or alpha/beta other than 1");
    p.trans_b = op.type == OpType::kGemm && op.attrs.get_int("transB", 0) != 0;
    const size_t rows = a.shape.size() - 2;
    p.m = a.shape[rows];
    p.k = a.shape[rows + 1];
    p.n = p.trans_b ? w.shape[0] : w.shape[1];
    if ((p.trans_b ? w.shape[1] : w.shape[0]) != p.k || y.shape[rows] != p.m || y.shape[rows + 1] != p.n)
        return RKNN_INVALID_ARGUMENT("%s: shapes do not multiply", op.name.c_str());
    if (p.k > 8192 || p.n > 8192) return unsupported("a product wider than the CNA's channel fields");
    if (p.m > 8192) return unsupported("more rows than the cube's height field holds");
    p.weights = g.constant_buffer(op.inputs[1]);
    if (p.weights == nullptr || p.weights->size != static_cast<size_t>(p.k * p.n) * graph::dtype_size(dtype))
        return unsupported("the weights are not a constant");
    p.bias_id = op.type == OpType::kGemm && op.inputs.size() > 2 ? op.inputs[2] : -1;
    if (p.bias_id >= 0) {
        p.bias = valid_tensor(p.bias_id) ? g.constant_buffer(p.bias_id) : nullptr;
        if (p.bias == nullptr || g.tensors[static_cast<size_t>(p.bias_id)].dtype != bias_dtype ||
            p.bias->size != static_cast<size_t>(p.n) * graph::dtype_size(bias_dtype))
            return unsupported(std::string("the bias is not a constant ") + graph::dtype_name(bias_dtype) + " per output");
    }
    return p;
}

StatusOr<std::unique_ptr<PreparedConv>> prepare_int8_gemm(const graph::Graph& g, const graph::Op& op,
                                                          const hw::SocProfile& soc) {
    RKNN_ASSIGN_OR_RETURN(const GemmParts parts, gemm_parts(g, op, DType::kInt8, DType::kInt32));
    const int64_t k = parts.k, n = parts.n;
    const graph::Tensor& a = *parts.a;
    const graph::Tensor& y = *parts.y;
    auto prepared = std::make_unique<PreparedConv>();
    ConvGeometry& geo = prepared->geometry;
    geo.in_c = static_cast<int>(k);
    geo.in_h = static_cast<int>(parts.m);
    geo.in_w = 1;
    geo.out_c = static_cast<int>(n);
    const cpu::Fusion fusion = cpu::fusion_of(op);
    const graph::Tensor* residual = nullptr;
    RKNN_RETURN_IF_ERROR(check_fusion(g, op, y, fusion, &residual, &prepared->residual_input));
    // Weights as [N][K] rows: the 1x1 convolution's kernels.
    const auto* wdata = reinterpret_cast<const int8_t*>(parts.weights->data);
    std::vector<int8_t> rows(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j) rows[static_cast<size_t>(i * k + j)] = wdata[parts.weight_index(i, j)];
    cpu::HostTensor bh;
    if (parts.bias != nullptr) bh = view_of(g.tensors[static_cast<size_t>(parts.bias_id)], parts.bias->data);
    RKNN_RETURN_IF_ERROR(finish(a, view_of(*parts.w, parts.weights->data), rows.data(),
                                parts.bias != nullptr ? &bh : nullptr, residual, y, fusion, soc, prepared.get()));
    return prepared;
}

}  // namespace rknn::npu
