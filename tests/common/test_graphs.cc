#include "test_graphs.h"

#include <cmath>
#include <limits>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"

namespace rknn::testing {

int32_t random_constant(graph::Graph* g, const std::string& name, const graph::Shape& shape, uint32_t seed, float lo,
                        float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> values(static_cast<size_t>(graph::num_elements(shape)));
    for (float& v : values) v = dist(rng);
    return g->add_constant(name, graph::DType::kFloat32, shape, graph::Buffer::copy_of(values.data(), values.size() * 4));
}

graph::QuantParams per_tensor(float scale, int32_t zero_point) {
    graph::QuantParams q;
    q.scales = {scale};
    q.zero_points = {zero_point};
    return q;
}

int32_t add_tensor(graph::Graph* g, const std::string& name, graph::DType dtype, const graph::Shape& shape,
                   const graph::QuantParams& q) {
    graph::Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = shape;
    t.quant = q;
    return g->add_tensor(t);
}

graph::Graph conversion_graph(graph::OpType type, graph::DType in_dtype, graph::DType out_dtype, const graph::Shape& shape,
                              float scale, int8_t zero_point) {
    graph::Graph g;
    const graph::QuantParams q = per_tensor(scale, zero_point);
    const auto params_of = [&q](graph::DType dtype) { return dtype == graph::DType::kInt8 ? q : graph::QuantParams(); };
    const int32_t x = add_tensor(&g, "x", in_dtype, shape, params_of(in_dtype));
    const int32_t y = add_tensor(&g, "y", out_dtype, shape, params_of(out_dtype));
    const int32_t s = g.add_constant("scale", graph::DType::kFloat32, {}, graph::Buffer::copy_of(&scale, sizeof(scale)));
    const int32_t z = g.add_constant("zero_point", graph::DType::kInt8, {}, graph::Buffer::copy_of(&zero_point, 1));
    graph::Op op;
    op.type = type;
    op.name = "convert";
    op.inputs = {x, s, z};
    op.outputs = {y};
    g.add_op(op);
    g.inputs = {x};
    g.outputs = {y};
    return g;
}

cpu::HostTensor random_int8(const graph::Shape& shape, const graph::QuantParams& q, uint32_t seed) {
    std::mt19937 rng(seed);
    cpu::HostTensor t(graph::DType::kInt8, shape);
    t.quant = q;
    for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
    return t;
}

graph::Graph small_cnn() {
    graph::Graph g;
    auto tensor = [&g](const std::string& name, const graph::Shape& shape, graph::DType dtype = graph::DType::kFloat32) {
        graph::Tensor t;
        t.name = name;
        t.shape = shape;
        t.dtype = dtype;
        return g.add_tensor(t);
    };
    const int32_t input = tensor("input", {1, 3, 8, 8});
    g.inputs = {input};
    const int32_t w = random_constant(&g, "conv.weight", {8, 3, 3, 3}, 1, -0.5f, 0.5f);
    const int32_t b = random_constant(&g, "conv.bias", {8}, 2, -0.1f, 0.1f);
    const int32_t conv_out = tensor("conv_out", {1, 8, 8, 8});
    graph::Op conv;
    conv.type = graph::OpType::kConv;
    conv.name = "conv";
    conv.inputs = {input, w, b};
    conv.outputs = {conv_out};
    conv.attrs.set_ints("pads", {1, 1, 1, 1});
    g.add_op(conv);
    const int32_t relu_out = tensor("relu_out", {1, 8, 8, 8});
    g.add_op({graph::OpType::kRelu, "relu", "", {conv_out}, {relu_out}, {}});
    const int32_t pool_out = tensor("pool_out", {1, 8, 4, 4});
    graph::Op pool{graph::OpType::kMaxPool, "pool", "", {relu_out}, {pool_out}, {}};
    pool.attrs.set_ints("kernel_shape", {2, 2});
    pool.attrs.set_ints("strides", {2, 2});
    g.add_op(pool);
    const std::vector<int64_t> shape_values = {1, 128};
    const int32_t shape = g.add_constant("shape", graph::DType::kInt64, {2},
                                         graph::Buffer::copy_of(shape_values.data(), shape_values.size() * 8));
    const int32_t flat = tensor("flat", {1, 128});
    g.add_op({graph::OpType::kReshape, "reshape", "", {pool_out, shape}, {flat}, {}});
    const int32_t fw = random_constant(&g, "fc.weight", {10, 128}, 3, -0.1f, 0.1f);
    const int32_t fb = random_constant(&g, "fc.bias", {10}, 4);
    const int32_t logits = tensor("logits", {1, 10});
    graph::Op fc{graph::OpType::kGemm, "fc", "", {flat, fw, fb}, {logits}, {}};
    fc.attrs.set_int("transB", 1);
    g.add_op(fc);
    g.outputs = {logits};
    g.target_soc = "rk3588";
    g.custom_string = "small cnn for tests";
    return g;
}

cpu::HostTensor random_floats(const graph::Shape& shape, uint32_t seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    cpu::HostTensor t(graph::DType::kFloat32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
    return t;
}

int count_ops(const graph::Graph& g, graph::OpType type) {
    int n = 0;
    for (const graph::Op& op : g.ops) n += op.type == type ? 1 : 0;
    return n;
}

StatusOr<std::vector<cpu::HostTensor>> run_reference(const graph::Graph& g, const std::vector<cpu::HostTensor>& inputs,
                                                     bool int8_kernels) {
    cpu::GraphExecutor::Options options;
    options.use_int8_kernels = int8_kernels;
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(g, options));
    std::vector<cpu::HostTensor> outputs;
    RKNN_RETURN_IF_ERROR(exec->run(inputs, &outputs));
    for (cpu::HostTensor& t : outputs) t = cpu::to_float32(t);
    return outputs;
}

float max_abs_difference(const cpu::HostTensor& a, const cpu::HostTensor& b) {
    if (a.shape() != b.shape()) return std::numeric_limits<float>::infinity();
    float worst = 0.0f;
    for (int64_t i = 0; i < a.numel(); ++i) {
        const float d = std::fabs(a.data<float>()[i] - b.data<float>()[i]);
        if (std::isnan(d)) return std::numeric_limits<float>::infinity();  // a NaN on either side never passes
        worst = std::max(worst, d);
    }
    return worst;
}

}  // namespace rknn::testing
