// Custom ops through the C API on the mock device (runtime-spec 7): the
// SDK demos' flow (rknn_init, rknn_register_custom_ops, rknn_run), the
// callbacks' lifecycle and tensors, attributes, and every refusal.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"
#include "base/npy.h"
#include "convert/onnx_test_models.h"
#include "converter.h"
#include "model/model_file.h"
#include "graph/graph.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "runtime/contract_models.h"

namespace {

using rknn::testing::init_graph;
using rknn::testing::run_pixels;
namespace graph = rknn::graph;

constexpr uint32_t kQuiet = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY;

// What the callbacks saw, reset by each test.
struct Seen {
    int inits = 0, prepares = 0, computes = 0, destroys = 0;
    int compute_result = 0;
    int init_result = 0;
    bool priv_kept = true;
    int priv_matches = 0;  // computes that saw init's priv_data
    rknn_custom_op_tensor first_output{};
    rknn_context ctx = 0;     // for callbacks that call the API
    int reentry_result = 0;
    rknn_custom_op_tensor first_input{};
    uint32_t n_inputs = 0, n_outputs = 0;
    std::vector<std::string> log;
};
Seen seen;

int count_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
               rknn_custom_op_tensor* outputs, uint32_t n_outputs) {
    ++seen.inits;
    seen.first_input = inputs[0];
    seen.first_output = outputs[0];
    seen.n_inputs = n_inputs;
    seen.n_outputs = n_outputs;
    if (seen.init_result == 0) op_ctx->priv_data = new int(42);
    return seen.init_result;
}
int count_prepare(rknn_custom_op_context*, rknn_custom_op_tensor*, uint32_t, rknn_custom_op_tensor*, uint32_t) {
    ++seen.prepares;
    return 0;
}
int count_destroy(rknn_custom_op_context* op_ctx) {
    ++seen.destroys;
    delete static_cast<int*>(op_ctx->priv_data);
    op_ctx->priv_data = nullptr;
    return 0;
}

float* data_of(rknn_custom_op_tensor& t) {
    return reinterpret_cast<float*>(static_cast<uint8_t*>(t.mem.virt_addr) + t.mem.offset);
}

// The CPU demo's callback: a float32 sigmoid over every element.
int sigmoid_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t,
                    rknn_custom_op_tensor* outputs, uint32_t) {
    ++seen.computes;
    if (op_ctx->priv_data != nullptr) {
        if (*static_cast<int*>(op_ctx->priv_data) == 42) ++seen.priv_matches;
        else seen.priv_kept = false;
    }
    const float* in = data_of(inputs[0]);
    float* out = data_of(outputs[0]);
    for (uint32_t i = 0; i < outputs[0].attr.n_elems; ++i) out[i] = 1.0f / (1.0f + std::exp(-in[i]));
    return seen.compute_result;
}

// x * alpha, alpha read from the node's attributes.
int scale_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t,
                  rknn_custom_op_tensor* outputs, uint32_t) {
    rknn_custom_op_attr alpha{};
    rknn_custom_op_get_op_attr(op_ctx, "alpha", &alpha);
    if (alpha.n_elems != 1 || alpha.dtype != RKNN_TENSOR_FLOAT32) return -1;
    const float a = *static_cast<float*>(alpha.data);
    const float* in = data_of(inputs[0]);
    float* out = data_of(outputs[0]);
    for (uint32_t i = 0; i < outputs[0].attr.n_elems; ++i) out[i] = in[i] * a;
    return 0;
}

int relu_compute(rknn_custom_op_context*, rknn_custom_op_tensor* inputs, uint32_t, rknn_custom_op_tensor* outputs,
                 uint32_t) {
    const float* in = data_of(inputs[0]);
    float* out = data_of(outputs[0]);
    for (uint32_t i = 0; i < outputs[0].attr.n_elems; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return 0;
}

rknn_custom_op cpu_op(const char* type, decltype(rknn_custom_op::compute) compute) {
    rknn_custom_op op;
    std::memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    std::snprintf(op.op_type, sizeof(op.op_type), "%s", type);
    op.compute = compute;
    return op;
}

// conv_pool_model (int8 Conv -> Relu -> MaxPool on the NPU) followed by
// custom op `type` writing a float32 output, or one in the pool's int8
// quantisation (`int8_out`) that an NPU MaxPool then reads.
graph::Graph with_custom(const std::string& type, bool int8_out, graph::OpType builtin = graph::OpType::kCustom) {
    graph::Graph g = rknn::testing::conv_pool_model();
    const int32_t pooled = g.outputs[0];
    graph::Tensor out = g.tensors[static_cast<size_t>(pooled)];
    out.name = "custom_out";
    if (!int8_out) {
        out.dtype = graph::DType::kFloat32;
        out.quant = graph::QuantParams();
    }
    const int32_t t = g.add_tensor(out);
    graph::Op op{builtin, "custom_node", builtin == graph::OpType::kCustom ? type : "", {pooled}, {t}, {}};
    op.attrs.set_float("alpha", 0.5f);
    op.attrs.set_int("axis", -3);
    op.attrs.set_string("mode", "fast");
    op.attrs.set_ints("ks", {1, 2, 3});
    op.attrs.set_floats("fs", {0.25f, 0.5f});
    g.add_op(op);
    g.outputs = {t};
    if (builtin == graph::OpType::kCustom) g.custom_ops.push_back({type, {}});
    if (!int8_out) return g;
    graph::Tensor pooled_again = out;
    pooled_again.name = "pooled_again";
    pooled_again.shape = {out.shape[0], out.shape[1], out.shape[2] / 2, out.shape[3] / 2};
    const int32_t p = g.add_tensor(pooled_again);
    graph::Op pool{graph::OpType::kMaxPool, "pool_after", "", {t}, {p}, {}};
    pool.attrs.set_ints("kernel_shape", {2, 2});
    pool.attrs.set_ints("strides", {2, 2});
    g.add_op(pool);
    g.outputs = {p};
    return g;
}

class CustomOps : public ::testing::Test {
protected:
    void SetUp() override {
        seen = Seen();
        rknn::log::set_level(rknn::log::kDefaultLevel);
        rknn::log::set_sink([](const std::string& line) { seen.log.push_back(line); });
    }
    void TearDown() override { rknn::log::set_sink(nullptr); }
    bool logged(const std::string& text) const {
        for (const std::string& line : seen.log)
            if (line.find(text) != std::string::npos) return true;
        return false;
    }
};

std::vector<float> as_floats(const std::vector<uint8_t>& bytes) {
    std::vector<float> f(bytes.size() / sizeof(float));
    std::memcpy(f.data(), bytes.data(), f.size() * sizeof(float));
    return f;
}

// The CPU demo's flow: init, register in one call, run; the op's output is
// the sigmoid of what the NPU computed before it.
TEST_F(CustomOps, CpuSigmoidDemoFlowGivesTheReference) {
    rknn_context plain = 0, ctx = 0;
    ASSERT_EQ(init_graph(rknn::testing::conv_pool_model(), kQuiet, &plain), RKNN_SUCC);
    const std::vector<float> before = as_floats(run_pixels(plain, 5, true));
    ASSERT_EQ(rknn_destroy(plain), RKNN_SUCC);

    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    rknn_tensor_attr out_attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &out_attr, sizeof(out_attr)), RKNN_SUCC);
    EXPECT_EQ(out_attr.type, RKNN_TENSOR_FLOAT32);
    const std::vector<float> after = as_floats(run_pixels(ctx, 5, false));
    ASSERT_EQ(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) ASSERT_EQ(after[i], 1.0f / (1.0f + std::exp(-before[i]))) << i;
    EXPECT_EQ(seen.computes, 1);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// The per-layer table gives the op's conversions rows of their own, around
// the callbacks' row, and the rows add up to the total.
TEST_F(CustomOps, PerfDetailShowsTheConversionsApart) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", true), kQuiet | RKNN_FLAG_COLLECT_PERF_MASK, &ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    ASSERT_FALSE(run_pixels(ctx, 5, false).empty());
    rknn_perf_detail detail{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
    const std::string text = detail.perf_data;
    const size_t in = text.find("custom_node (inputs)"), call = text.find("cstSigmoid"),
                 out = text.find("custom_node (outputs)");
    ASSERT_NE(in, std::string::npos) << text;
    ASSERT_NE(out, std::string::npos) << text;
    EXPECT_LT(in, call);
    EXPECT_LT(call, out);
    EXPECT_NE(text.rfind("exDataConvert", in), std::string::npos);
    long sum = 0, total = -1;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        char type[64], dtype[16], target[8], ins[64], outs[64];
        long us = 0;
        if (std::sscanf(line.c_str(), "%*d %63s %15s %7s %63s %63s %ld", type, dtype, target, ins, outs, &us) == 6) sum += us;
        std::sscanf(line.c_str(), "Total Operator Elapsed Per Frame Time(us): %ld", &total);
    }
    EXPECT_EQ(sum, total) << text;
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// An int8 custom op output is quantised back and read by the NPU: the same
// codes as the built-in Relu in its place.
TEST_F(CustomOps, Int8OutputsFeedTheNpuAsTheBuiltinWould) {
    rknn_context builtin = 0, custom = 0;
    ASSERT_EQ(init_graph(with_custom("", true, graph::OpType::kRelu), kQuiet, &builtin), RKNN_SUCC);
    ASSERT_EQ(init_graph(with_custom("cstRelu", true), kQuiet, &custom), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstRelu", relu_compute);
    ASSERT_EQ(rknn_register_custom_ops(custom, &op, 1), RKNN_SUCC);
    for (uint32_t seed : {1u, 2u, 3u}) {
        const std::vector<uint8_t> expected = run_pixels(builtin, seed, false);
        ASSERT_FALSE(expected.empty());
        EXPECT_EQ(run_pixels(custom, seed, false), expected) << "seed " << seed;
    }
    EXPECT_EQ(rknn_destroy(builtin), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(custom), RKNN_SUCC);
}

// runtime-spec 7.1: an op of a type this runtime does not know (a newer
// converter's) loads as a custom op of that name, which a client registers.
TEST_F(CustomOps, AnOpTypeTheRuntimeLacksRunsAsARegisteredCustomOp) {
    rknn_context plain = 0, ctx = 0;
    ASSERT_EQ(init_graph(rknn::testing::conv_pool_model(), kQuiet, &plain), RKNN_SUCC);
    const std::vector<float> before = as_floats(run_pixels(plain, 5, true));
    ASSERT_EQ(rknn_destroy(plain), RKNN_SUCC);
    graph::Graph g = with_custom("cstTmp", false);
    g.custom_ops.clear();
    auto bytes = rknn::model::serialize_model(g);
    ASSERT_TRUE(bytes.is_ok());
    // The op's type string "Custom" becomes "Zigmoi", a name no runtime knows.
    const std::string from("\x06\0\0\0Custom", 10), to("\x06\0\0\0Zigmoi", 10);
    std::vector<uint8_t> model = bytes.value();
    int patched = 0;
    for (size_t i = 0; i + from.size() <= model.size(); ++i)
        if (std::memcmp(model.data() + i, from.data(), from.size()) == 0) {
            std::memcpy(model.data() + i, to.data(), to.size());
            ++patched;
        }
    ASSERT_EQ(patched, 1);
    ASSERT_EQ(rknn_init(&ctx, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr), RKNN_SUCC);
    EXPECT_TRUE(logged("op type \"Zigmoi\" (first op \"custom_node\") is not one this runtime runs")) << "no warning";
    EXPECT_NE(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_TRUE(logged("not registered: 'Zigmoi'"));
    rknn_custom_op op = cpu_op("Zigmoi", sigmoid_compute);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    const std::vector<float> after = as_floats(run_pixels(ctx, 5, false));
    ASSERT_EQ(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) ASSERT_EQ(after[i], 1.0f / (1.0f + std::exp(-before[i]))) << i;
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    // A type that is no name is still refused.
    std::vector<uint8_t> bad = bytes.value();
    const std::string junk("\x06\0\0\0Cu\x01tom", 10);
    for (size_t i = 0; i + from.size() <= bad.size(); ++i)
        if (std::memcmp(bad.data() + i, from.data(), from.size()) == 0) std::memcpy(bad.data() + i, junk.data(), junk.size());
    EXPECT_EQ(rknn_init(&ctx, bad.data(), static_cast<uint32_t>(bad.size()), 0, nullptr), RKNN_ERR_MODEL_INVALID);
}

// Beyond the vendor: an init that sets pass_through takes its tensors as
// the model holds them (int8 codes, NCHW), described by their attrs.
int own_dtype_init(rknn_custom_op_context*, rknn_custom_op_tensor* inputs, uint32_t, rknn_custom_op_tensor* outputs,
                   uint32_t) {
    inputs[0].attr.pass_through = 1;
    outputs[0].attr.pass_through = 1;
    return 0;
}
int int8_relu_compute(rknn_custom_op_context*, rknn_custom_op_tensor* inputs, uint32_t, rknn_custom_op_tensor* outputs,
                      uint32_t) {
    const rknn_tensor_attr& in = inputs[0].attr;
    const rknn_tensor_attr& out = outputs[0].attr;
    if (in.type != RKNN_TENSOR_INT8 || out.type != RKNN_TENSOR_INT8 || in.qnt_type != RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC ||
        in.fmt != RKNN_TENSOR_NCHW || in.size != in.n_elems || out.size != out.n_elems || in.zp != out.zp ||
        in.scale != out.scale || in.pass_through != 1)
        return -1;
    ++seen.computes;
    const auto* x = reinterpret_cast<const int8_t*>(static_cast<uint8_t*>(inputs[0].mem.virt_addr) + inputs[0].mem.offset);
    auto* y = reinterpret_cast<int8_t*>(static_cast<uint8_t*>(outputs[0].mem.virt_addr) + outputs[0].mem.offset);
    for (uint32_t i = 0; i < out.n_elems; ++i) y[i] = static_cast<int8_t>(std::max<int32_t>(x[i], in.zp));
    return 0;
}

TEST_F(CustomOps, InitMayTakeTensorsInTheModelsOwnDtype) {
    rknn_context builtin = 0, custom = 0;
    ASSERT_EQ(init_graph(with_custom("", true, graph::OpType::kRelu), kQuiet, &builtin), RKNN_SUCC);
    ASSERT_EQ(init_graph(with_custom("cstRelu", true), kQuiet, &custom), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstRelu", int8_relu_compute);
    op.init = own_dtype_init;
    ASSERT_EQ(rknn_register_custom_ops(custom, &op, 1), RKNN_SUCC);
    for (uint32_t seed : {1u, 2u}) {
        const std::vector<uint8_t> expected = run_pixels(builtin, seed, false);
        ASSERT_FALSE(expected.empty());
        EXPECT_EQ(run_pixels(custom, seed, false), expected) << "seed " << seed;
    }
    EXPECT_EQ(seen.computes, 2);
    EXPECT_EQ(rknn_destroy(builtin), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(custom), RKNN_SUCC);
    // A float32 tensor is float32 either way: pass_through on it changes nothing.
    seen = Seen();
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &custom), RKNN_SUCC);
    rknn_custom_op sigmoid = cpu_op("cstSigmoid", sigmoid_compute);
    sigmoid.init = own_dtype_init;
    ASSERT_EQ(rknn_register_custom_ops(custom, &sigmoid, 1), RKNN_SUCC);
    EXPECT_FALSE(run_pixels(custom, 5, false).empty());
    EXPECT_EQ(seen.computes, 1);
    EXPECT_EQ(rknn_destroy(custom), RKNN_SUCC);
}

// init once at registration (per node, with its tensors), prepare and
// compute per run, destroy at rknn_destroy; priv_data is the op's own.
TEST_F(CustomOps, CallbacksRunWhenTheSpecSays) {
    rknn_context ctx = 0;
    const graph::Graph g = with_custom("cstSigmoid", false);
    ASSERT_EQ(init_graph(g, kQuiet, &ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    op.init = count_init;
    op.prepare = count_prepare;
    op.destroy = count_destroy;
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    EXPECT_EQ(seen.inits, 1);
    EXPECT_EQ(seen.n_inputs, 1u);
    EXPECT_EQ(seen.n_outputs, 1u);
    const rknn_tensor_attr& in = seen.first_input.attr;
    const graph::Shape& shape = g.tensors[static_cast<size_t>(g.ops.back().inputs[0])].shape;
    ASSERT_EQ(in.n_dims, 4u);
    for (uint32_t d = 0; d < 4; ++d) EXPECT_EQ(in.dims[d], static_cast<uint32_t>(shape[d])) << d;
    EXPECT_EQ(in.fmt, RKNN_TENSOR_NCHW);
    EXPECT_EQ(in.type, RKNN_TENSOR_FLOAT32);
    EXPECT_EQ(in.size, in.n_elems * sizeof(float));
    EXPECT_EQ(seen.first_input.mem.size, in.size);
    EXPECT_NE(seen.first_input.mem.virt_addr, nullptr);
    EXPECT_EQ(seen.first_output.mem.virt_addr, seen.first_input.mem.virt_addr);
    EXPECT_EQ(seen.first_output.mem.offset % 64, 0);
    EXPECT_GE(static_cast<uint32_t>(seen.first_output.mem.offset), seen.first_input.mem.offset + in.size)
        << "the tensors do not overlap";
    for (int run = 0; run < 3; ++run) ASSERT_FALSE(run_pixels(ctx, 9, true).empty());
    EXPECT_EQ(seen.prepares, 3);
    EXPECT_EQ(seen.computes, 3);
    EXPECT_TRUE(seen.priv_kept);
    EXPECT_EQ(seen.priv_matches, 3) << "every compute saw init's priv_data";
    EXPECT_EQ(seen.destroys, 0);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    EXPECT_EQ(seen.inits, 1);
    EXPECT_EQ(seen.destroys, 1);
}

int attrs_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_in,
                  rknn_custom_op_tensor* outputs, uint32_t n_out) {
    rknn_custom_op_attr a{};
    rknn_custom_op_get_op_attr(op_ctx, "axis", &a);
    EXPECT_EQ(a.dtype, RKNN_TENSOR_INT64);
    EXPECT_EQ(a.n_elems, 1u);
    if (a.data) {
        EXPECT_EQ(*static_cast<int64_t*>(a.data), -3);
    }
    EXPECT_STREQ(a.name, "axis");
    rknn_custom_op_get_op_attr(op_ctx, "mode", &a);
    EXPECT_EQ(a.dtype, RKNN_TENSOR_UINT8);
    EXPECT_EQ(a.n_elems, 4u);
    if (a.data) {
        EXPECT_EQ(std::string(static_cast<char*>(a.data), a.n_elems), "fast");
    }
    rknn_custom_op_get_op_attr(op_ctx, "ks", &a);
    EXPECT_EQ(a.dtype, RKNN_TENSOR_INT64);
    EXPECT_EQ(a.n_elems, 3u);
    if (a.data) {
        EXPECT_EQ(static_cast<int64_t*>(a.data)[2], 3);
    }
    rknn_custom_op_get_op_attr(op_ctx, "fs", &a);
    EXPECT_EQ(a.dtype, RKNN_TENSOR_FLOAT32);
    EXPECT_EQ(a.n_elems, 2u);
    if (a.data) {
        EXPECT_EQ(static_cast<float*>(a.data)[1], 0.5f);
    }
    rknn_custom_op_get_op_attr(op_ctx, "name", &a);
    EXPECT_EQ(a.dtype, RKNN_TENSOR_UINT8);
    if (a.data) {
        EXPECT_EQ(std::string(static_cast<char*>(a.data), a.n_elems), "custom_node");
    }
    std::memset(&a, 0x5a, sizeof(a));
    rknn_custom_op_get_op_attr(op_ctx, "no_such_attr", &a);
    EXPECT_EQ(a.n_elems, 0u);
    EXPECT_EQ(a.data, nullptr);
    rknn_custom_op_context forged = *op_ctx;
    forged.internal_ctx = static_cast<rknn_custom_op_interal_context>(~0ull);
    std::memset(&a, 0x5a, sizeof(a));
    rknn_custom_op_get_op_attr(&forged, "axis", &a);  // logged, left empty
    EXPECT_EQ(a.n_elems, 0u);
    EXPECT_EQ(a.data, nullptr);
    return sigmoid_compute(op_ctx, inputs, n_in, outputs, n_out);
}

// Every attribute kind, the "name" key, a missing one, a forged op_ctx.
TEST_F(CustomOps, AttributesOfEveryKind) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", attrs_compute);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    ASSERT_FALSE(run_pixels(ctx, 1, true).empty());
    EXPECT_EQ(seen.computes, 1);
    EXPECT_TRUE(logged("op_ctx is not a context the runtime handed")) << "the forged op_ctx is logged";
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// Two custom types: registered in one call or across two, the same output;
// rknn_run names what is still missing in between.
TEST_F(CustomOps, RegisteredInOneCallOrSeveral) {
    graph::Graph g = with_custom("cstSigmoid", false);
    const int32_t sig = g.outputs[0];
    graph::Tensor scaled = g.tensors[static_cast<size_t>(sig)];
    scaled.name = "scaled";
    const int32_t s = g.add_tensor(scaled);
    graph::Op scale{graph::OpType::kCustom, "scale_node", "cstScale", {sig}, {s}, {}};
    scale.attrs.set_float("alpha", 3.0f);
    g.add_op(scale);
    g.custom_ops.push_back({"cstScale", {}});
    g.outputs = {s};

    rknn_custom_op both[2] = {cpu_op("cstSigmoid", sigmoid_compute), cpu_op("cstScale", scale_compute)};
    rknn_context one = 0, two = 0;
    ASSERT_EQ(init_graph(g, kQuiet, &one), RKNN_SUCC);
    ASSERT_EQ(rknn_register_custom_ops(one, both, 2), RKNN_SUCC);
    const std::vector<uint8_t> expected = run_pixels(one, 4, true);
    ASSERT_FALSE(expected.empty());

    ASSERT_EQ(init_graph(g, kQuiet, &two), RKNN_SUCC);
    ASSERT_EQ(rknn_register_custom_ops(two, &both[1], 1), RKNN_SUCC);
    std::vector<uint8_t> p = rknn::testing::pixels(4);
    rknn_input in = rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(two, 1, &in), RKNN_SUCC);
    seen.log.clear();
    EXPECT_EQ(rknn_run(two, nullptr), RKNN_ERR_FAIL);
    EXPECT_TRUE(logged("'cstSigmoid'")) << "the missing type is named";
    EXPECT_FALSE(logged("'cstScale'"));
    ASSERT_EQ(rknn_register_custom_ops(two, &both[0], 1), RKNN_SUCC);
    EXPECT_EQ(run_pixels(two, 4, true), expected);
    const std::vector<float> out = as_floats(expected);
    for (float v : out) ASSERT_TRUE(v >= 0.0f && v <= 3.0f) << v;
    EXPECT_EQ(rknn_destroy(one), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(two), RKNN_SUCC);
}

// Each malformed registration fails with its reason logged, registers
// nothing, and leaves the context able to register and run.
TEST_F(CustomOps, BadRegistrationsAreRefusedAndLoseNothing) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &ctx), RKNN_SUCC);
    struct Case {
        const char* what;
        rknn_custom_op op;
        const char* reason;
    };
    std::vector<Case> cases;
    cases.push_back({"no compute", cpu_op("cstSigmoid", nullptr), "compute is NULL"});
    cases.push_back({"unknown type", cpu_op("cstNope", sigmoid_compute), "no custom op of this type"});
    cases.push_back({"empty type", cpu_op("", sigmoid_compute), "op_type is empty"});
    Case version{"version 0", cpu_op("cstSigmoid", sigmoid_compute), "version 0"};
    version.op.version = 0;
    cases.push_back(version);
    Case target{"target 7", cpu_op("cstSigmoid", sigmoid_compute), "target 7"};
    const int seven = 7;  // any int can be stored there; a cast to the enum could not say 7
    std::memcpy(&target.op.target, &seven, sizeof(seven));
    cases.push_back(target);
    Case native{"compute_native", cpu_op("cstSigmoid", sigmoid_compute), "compute_native is reserved"};
    native.op.compute_native = sigmoid_compute;
    cases.push_back(native);
    Case unterminated{"unterminated type", cpu_op("cstSigmoid", sigmoid_compute), "not NUL-terminated"};
    std::memset(unterminated.op.op_type, 'x', sizeof(unterminated.op.op_type));
    cases.push_back(unterminated);
    for (Case& c : cases) {
        seen.log.clear();
        EXPECT_EQ(rknn_register_custom_ops(ctx, &c.op, 1), RKNN_ERR_PARAM_INVALID) << c.what;
        EXPECT_TRUE(logged(c.reason)) << c.what << ": no log line says \"" << c.reason << "\"";
    }
    rknn_custom_op twice[2] = {cpu_op("cstSigmoid", sigmoid_compute), cpu_op("cstSigmoid", sigmoid_compute)};
    seen.log.clear();
    EXPECT_EQ(rknn_register_custom_ops(ctx, twice, 2), RKNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(logged("the same type"));

    // A failing init registers nothing; a failing compute fails the run.
    rknn_custom_op failing = cpu_op("cstSigmoid", sigmoid_compute);
    failing.init = count_init;
    failing.destroy = count_destroy;
    seen.init_result = -5;
    seen.log.clear();
    EXPECT_EQ(rknn_register_custom_ops(ctx, &failing, 1), RKNN_ERR_FAIL);
    EXPECT_TRUE(logged("init returned -5"));
    EXPECT_EQ(seen.destroys, 0) << "destroy is for ops whose init succeeded";
    seen.init_result = 0;

    rknn_custom_op good = cpu_op("cstSigmoid", sigmoid_compute);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &good, 1), RKNN_SUCC) << "nothing stayed registered";
    seen.log.clear();
    EXPECT_EQ(rknn_register_custom_ops(ctx, &good, 1), RKNN_ERR_FAIL);
    EXPECT_TRUE(logged("registered already"));
    seen.compute_result = -7;
    std::vector<uint8_t> p = rknn::testing::pixels(2);
    rknn_input in = rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    seen.log.clear();
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_ERR_FAIL);
    EXPECT_TRUE(logged("compute returned -7"));
    EXPECT_TRUE(logged("custom_node"));
    seen.compute_result = 0;
    EXPECT_FALSE(run_pixels(ctx, 2, true).empty()) << "the context still runs";
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    EXPECT_EQ(rknn_register_custom_ops(ctx, &good, 1), RKNN_ERR_CTX_INVALID) << "after rknn_destroy";
}

int skip_init(rknn_custom_op_context*, rknn_custom_op_tensor*, uint32_t, rknn_custom_op_tensor*, uint32_t) {
    ++seen.inits;
    return RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE;
}

// init's RKNN_WARNING_SKIP_CUSTOM_OP_COMPUTE: the built-in kernel where the
// type is an operator the runtime has, a refusal where it is not.
TEST_F(CustomOps, SkipComputeFallsBackToTheBuiltinKernel) {
    rknn_context builtin = 0, custom = 0, unknown = 0;
    ASSERT_EQ(init_graph(with_custom("", true, graph::OpType::kRelu), kQuiet, &builtin), RKNN_SUCC);
    ASSERT_EQ(init_graph(with_custom("Relu", true), kQuiet, &custom), RKNN_SUCC);
    rknn_custom_op op = cpu_op("Relu", sigmoid_compute);
    op.init = skip_init;
    ASSERT_EQ(rknn_register_custom_ops(custom, &op, 1), RKNN_SUCC);
    EXPECT_EQ(run_pixels(custom, 3, false), run_pixels(builtin, 3, false));
    EXPECT_EQ(seen.computes, 0) << "the callback's compute is skipped";

    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &unknown), RKNN_SUCC);
    rknn_custom_op none = cpu_op("cstSigmoid", sigmoid_compute);
    none.init = skip_init;
    seen.log.clear();
    EXPECT_EQ(rknn_register_custom_ops(unknown, &none, 1), RKNN_ERR_FAIL);
    EXPECT_TRUE(logged("has none for this type"));
    for (rknn_context c : {builtin, custom, unknown}) EXPECT_EQ(rknn_destroy(c), RKNN_SUCC);
}

// A duplicate registers its own ops; the original's registrations are its own.
TEST_F(CustomOps, DuplicatedContextsRegisterTheirOwn) {
    rknn_context original = 0, copy = 0;
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &original), RKNN_SUCC);
    ASSERT_EQ(rknn_dup_context(&original, &copy), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    op.init = count_init;
    op.destroy = count_destroy;
    ASSERT_EQ(rknn_register_custom_ops(copy, &op, 1), RKNN_SUCC);
    const std::vector<uint8_t> from_copy = run_pixels(copy, 6, true);
    ASSERT_FALSE(from_copy.empty());
    std::vector<uint8_t> p = rknn::testing::pixels(6);
    rknn_input in = rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(original, 1, &in), RKNN_SUCC);
    EXPECT_EQ(rknn_run(original, nullptr), RKNN_ERR_FAIL) << "the original registered nothing";
    ASSERT_EQ(rknn_register_custom_ops(original, &op, 1), RKNN_SUCC);
    EXPECT_EQ(run_pixels(original, 6, true), from_copy);
    EXPECT_EQ(seen.inits, 2);
    EXPECT_EQ(rknn_destroy(copy), RKNN_SUCC);
    EXPECT_EQ(seen.destroys, 1);
    EXPECT_EQ(rknn_destroy(original), RKNN_SUCC);
    EXPECT_EQ(seen.destroys, 2);
}

// RKNN_LOAD_CSTOP_PLUGINS=1: the runtime registers the plugin whose type the
// model keeps; a plugin for another type, one without the entry point and a
// file that is not a library are logged and skipped. Without the switch
// nothing is loaded.
TEST_F(CustomOps, PluginsLoadOnlyOnRequest) {
    struct EnvGuard {  // nothing leaks into later tests, whatever fails
        ~EnvGuard() {
            ::unsetenv("RKNN_LOAD_CSTOP_PLUGINS");
            ::unsetenv("RKNN_CSTOP_PLUGIN_DIR");
        }
    } env_guard;
    rknn_context reference = 0, ctx = 0, unasked = 0, nowhere = 0;
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &reference), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    ASSERT_EQ(rknn_register_custom_ops(reference, &op, 1), RKNN_SUCC);
    const std::vector<uint8_t> expected = run_pixels(reference, 8, true);

    ::setenv("RKNN_CSTOP_PLUGIN_DIR", RKNN_TEST_PLUGIN_DIR, 1);
    ::setenv("RKNN_LOAD_CSTOP_PLUGINS", "1", 1);
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &ctx), RKNN_SUCC);
    EXPECT_TRUE(logged("librkcst_noentry.so: no get_rknn_custom_op entry point"));
    EXPECT_TRUE(logged("librkcst_not_elf.so does not load"));
    EXPECT_EQ(run_pixels(ctx, 8, true), expected) << "the plugin's sigmoid ran";
    seen.log.clear();
    EXPECT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC) << "the client's op replaces the plugin's";
    EXPECT_TRUE(logged("replaces the plugin's"));
    EXPECT_EQ(run_pixels(ctx, 8, true), expected);

    ::setenv("RKNN_CSTOP_PLUGIN_DIR", "/nonexistent/plugins", 1);
    seen.log.clear();
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &nowhere), RKNN_SUCC);
    EXPECT_TRUE(logged("cannot open the directory /nonexistent/plugins"));

    ::unsetenv("RKNN_LOAD_CSTOP_PLUGINS");
    ::setenv("RKNN_CSTOP_PLUGIN_DIR", RKNN_TEST_PLUGIN_DIR, 1);
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &unasked), RKNN_SUCC);
    ASSERT_EQ(rknn_register_custom_ops(unasked, &op, 1), RKNN_SUCC) << "nothing was loaded unasked";
    ::unsetenv("RKNN_CSTOP_PLUGIN_DIR");
    for (rknn_context c : {reference, ctx, unasked, nowhere}) EXPECT_EQ(rknn_destroy(c), RKNN_SUCC);
}

// Conv -> cstScale (alpha 0.5, a node attribute) -> Conv, as ONNX.
std::string write_scaled_convs() {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
    const auto values = [&](size_t n) {
        std::vector<float> v(n);
        for (float& x : v) x = dist(rng);
        return v;
    };
    onnx::GraphProto g;
    rknn::testing::add_float_value(g.add_input(), "x", {"1", "3", "8", "8"});
    rknn::testing::add_float_value(g.add_output(), "y", {"1", "4", "8", "8"});
    rknn::testing::add_float_value(g.add_value_info(), "s", {"1", "8", "8", "8"});
    rknn::testing::add_floats(&g, "w1", {8, 3, 3, 3}, values(8 * 3 * 3 * 3));
    rknn::testing::add_floats(&g, "w2", {4, 8, 1, 1}, values(4 * 8));
    onnx::NodeProto* conv = rknn::testing::add_node(&g, "Conv", {"x", "w1"}, "c");
    rknn::testing::add_ints_attribute(conv, "pads", {1, 1, 1, 1});
    onnx::NodeProto* scale = rknn::testing::add_node(&g, "cstScale", {"c"}, "s");
    onnx::AttributeProto* alpha = scale->add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(onnx::AttributeProto::FLOAT);
    alpha->set_f(0.5f);
    rknn::testing::add_node(&g, "Conv", {"s", "w2"}, "y");
    return rknn::testing::save_model(std::move(g), "scaled_convs");
}

std::vector<float> run_nchw(rknn_context ctx, std::vector<float> x) {
    rknn_input in = rknn::testing::input_of(x.data(), static_cast<uint32_t>(x.size() * sizeof(float)),
                                            RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW);
    rknn_output out{};
    out.want_float = 1;
    if (rknn_inputs_set(ctx, 1, &in) != RKNN_SUCC || rknn_run(ctx, nullptr) != RKNN_SUCC ||
        rknn_outputs_get(ctx, 1, &out, nullptr) != RKNN_SUCC)
        return {};
    std::vector<float> result(static_cast<const float*>(out.buf), static_cast<const float*>(out.buf) + out.size / 4);
    rknn_outputs_release(ctx, 1, &out);
    return result;
}

// rknn_convert --custom-op-plugin: calibration runs the plugin's compute (its
// attribute read through the tool's rknn_custom_op_get_op_attr), so the
// layer after the custom op is int8 too, and the int8 model stays close to
// the float32 one. With --custom-op alone that layer stays float16.
TEST_F(CustomOps, ConverterCalibratesThroughAPluginsOp) {
    const std::string onnx = write_scaled_convs();
    const std::filesystem::path data = std::filesystem::path(::testing::TempDir()) / "scaled_convs_calibration";
    std::filesystem::create_directories(data);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::vector<std::vector<float>> inputs;
    for (uint32_t k = 0; k < 6; ++k) {
        std::vector<float> x(3 * 8 * 8);
        for (float& v : x) v = dist(rng);
        inputs.push_back(x);
        rknn::npy::Array array{"f4", {1, 3, 8, 8}, std::vector<uint8_t>(x.size() * sizeof(float))};
        std::memcpy(array.data.data(), x.data(), array.data.size());
        ASSERT_TRUE(rknn::npy::write_file((data / ("sample_" + std::to_string(k) + ".npy")).string(), array).is_ok());
    }
    rknn::convert::ConvertOptions options;
    options.onnx_path = onnx;
    options.progress = false;
    const auto convert = [](const rknn::convert::ConvertOptions& o) -> graph::Graph {
        auto converted = rknn::convert::convert_onnx(o);
        EXPECT_TRUE(converted.is_ok()) << converted.status().message();
        return converted.is_ok() ? converted.value().graph : graph::Graph();
    };
    options.dtype = rknn::convert::TargetDType::kFloat32;
    options.custom_ops = {"cstScale"};
    const graph::Graph reference_graph = convert(options);
    options.dtype = rknn::convert::TargetDType::kInt8;
    options.dataset = data.string();
    const graph::Graph plain = convert(options);
    options.custom_ops.clear();
    options.custom_op_plugins = {std::string(RKNN_TEST_PLUGIN_DIR) + "/librkcst_scale.so"};
    const graph::Graph calibrated = convert(options);
    ASSERT_FALSE(calibrated.outputs.empty());
    ASSERT_FALSE(plain.outputs.empty());
    EXPECT_EQ(plain.tensors[static_cast<size_t>(plain.outputs[0])].dtype, graph::DType::kFloat16)
        << "without the plugin nothing is calibrated after the custom op";
    EXPECT_EQ(calibrated.tensors[static_cast<size_t>(calibrated.outputs[0])].dtype, graph::DType::kInt8);

    rknn_context reference = 0, ctx = 0;
    ASSERT_EQ(init_graph(reference_graph, kQuiet, &reference), RKNN_SUCC);
    ASSERT_EQ(init_graph(calibrated, kQuiet, &ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstScale", scale_compute);
    ASSERT_EQ(rknn_register_custom_ops(reference, &op, 1), RKNN_SUCC);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    for (const std::vector<float>& x : inputs) {
        const std::vector<float> expected = run_nchw(reference, x), actual = run_nchw(ctx, x);
        ASSERT_EQ(actual.size(), expected.size());
        ASSERT_FALSE(expected.empty());
        double dot = 0, a2 = 0, e2 = 0;
        for (size_t i = 0; i < actual.size(); ++i) {
            dot += static_cast<double>(actual[i]) * expected[i];
            a2 += static_cast<double>(actual[i]) * actual[i];
            e2 += static_cast<double>(expected[i]) * expected[i];
        }
        EXPECT_GT(dot / std::sqrt(a2 * e2), 0.99);
    }
    EXPECT_EQ(rknn_destroy(reference), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);

    options.custom_op_plugins = {std::string(RKNN_TEST_PLUGIN_DIR) + "/librkcst_noentry.so"};
    auto refused = rknn::convert::convert_onnx(options);
    ASSERT_FALSE(refused.is_ok());
    EXPECT_NE(refused.status().message().find("no get_rknn_custom_op entry point"), std::string::npos);
}

int reentrant_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_in,
                      rknn_custom_op_tensor* outputs, uint32_t n_out) {
    rknn_input_output_num io{};
    seen.reentry_result = rknn_query(seen.ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io));
    return sigmoid_compute(op_ctx, inputs, n_in, outputs, n_out);
}

int tampering_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_in,
                      rknn_custom_op_tensor* outputs, uint32_t n_out) {
    rknn_custom_op_attr alpha{};
    rknn_custom_op_get_op_attr(op_ctx, "alpha", &alpha);
    if (alpha.n_elems != 1) return -3;
    op_ctx->internal_ctx = static_cast<rknn_custom_op_interal_context>(0x5a5a);
    const int nine = 9;
    std::memcpy(&op_ctx->target, &nine, sizeof(nine));
    return sigmoid_compute(op_ctx, inputs, n_in, outputs, n_out);
}

// A callback that calls back into its own context gets an error, not a
// hang; one that overwrites its op_ctx changes nothing for the runtime.
TEST_F(CustomOps, CallbacksCannotReenterOrCorruptTheirContext) {
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &seen.ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", reentrant_compute);
    ASSERT_EQ(rknn_register_custom_ops(seen.ctx, &op, 1), RKNN_SUCC);
    ASSERT_FALSE(run_pixels(seen.ctx, 1, true).empty());
    EXPECT_EQ(seen.reentry_result, RKNN_ERR_FAIL);
    EXPECT_TRUE(logged("called from a custom op callback of this same context"));
    rknn_input_output_num io{};
    EXPECT_EQ(rknn_query(seen.ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC) << "outside callbacks it works";
    EXPECT_EQ(rknn_destroy(seen.ctx), RKNN_SUCC);

    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &ctx), RKNN_SUCC);
    rknn_custom_op tamper = cpu_op("cstSigmoid", tampering_compute);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &tamper, 1), RKNN_SUCC);
    for (int run = 0; run < 3; ++run) ASSERT_FALSE(run_pixels(ctx, 2, true).empty()) << "run " << run;
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

int flaky_inits = 0, flaky_fail_on = 0;
int flaky_init(rknn_custom_op_context*, rknn_custom_op_tensor*, uint32_t, rknn_custom_op_tensor*, uint32_t) {
    return ++flaky_inits == flaky_fail_on ? -1 : 0;
}

// A multi-batch model registers its ops in every batch copy; when one copy's
// init fails, the copies before it are undone (their destroy runs), so the
// client can register again and run.
TEST_F(CustomOps, BatchRegistrationFailingInOneCopyCanBeRetried) {
    graph::Graph g = with_custom("cstSigmoid", false);
    g.batch = 2;
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, kQuiet, &ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    op.init = flaky_init;
    op.destroy = count_destroy;
    flaky_inits = 0;
    flaky_fail_on = 2;  // the second batch copy's init
    EXPECT_NE(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    EXPECT_TRUE(logged("batch copy 1")) << "the log names the copy that failed";
    EXPECT_EQ(seen.destroys, 1) << "the first copy's registration is undone";
    flaky_fail_on = 0;
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC) << "registering again works";
    std::vector<uint8_t> pixels = rknn::testing::random_pixels({1, 3, 8, 8}, 5);
    const std::vector<uint8_t> second = rknn::testing::random_pixels({1, 3, 8, 8}, 6);
    pixels.insert(pixels.end(), second.begin(), second.end());
    rknn_input in = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size()), RKNN_TENSOR_UINT8,
                                            RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(seen.computes, 2) << "one compute per batch item";
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    EXPECT_EQ(seen.destroys, 3) << "and each copy's destroy at rknn_destroy";
}

// A client's registration that replaces a plugin's op and then fails (its
// init returns an error) gives the type back to the plugin, in a plain
// context and in every batch copy, so the model still runs.
TEST_F(CustomOps, AFailedClientRegistrationGivesThePluginItsOpBack) {
    struct EnvGuard {
        ~EnvGuard() {
            ::unsetenv("RKNN_LOAD_CSTOP_PLUGINS");
            ::unsetenv("RKNN_CSTOP_PLUGIN_DIR");
        }
    } env_guard;
    ::setenv("RKNN_CSTOP_PLUGIN_DIR", RKNN_TEST_PLUGIN_DIR, 1);
    ::setenv("RKNN_LOAD_CSTOP_PLUGINS", "1", 1);
    rknn_context ctx = 0, batched = 0;
    ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &ctx), RKNN_SUCC);
    const std::vector<uint8_t> expected = run_pixels(ctx, 8, true);
    ASSERT_FALSE(expected.empty()) << "the plugin's sigmoid runs";
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    op.init = flaky_init;
    flaky_inits = 0;
    flaky_fail_on = 1;
    seen.log.clear();
    EXPECT_NE(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    EXPECT_TRUE(logged("the plugin's op is back"));
    EXPECT_EQ(run_pixels(ctx, 8, true), expected) << "the plugin's op runs again";

    graph::Graph g = with_custom("cstSigmoid", false);
    g.batch = 2;
    ASSERT_EQ(init_graph(g, kQuiet, &batched), RKNN_SUCC);
    flaky_inits = 0;
    flaky_fail_on = 2;  // copy 0 registers, copy 1 fails: both are given back
    EXPECT_NE(rknn_register_custom_ops(batched, &op, 1), RKNN_SUCC);
    std::vector<uint8_t> pixels = rknn::testing::random_pixels({1, 3, 8, 8}, 5);
    pixels.insert(pixels.end(), pixels.begin(), pixels.end());
    rknn_input in = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size()), RKNN_TENSOR_UINT8,
                                            RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(batched, 1, &in), RKNN_SUCC);
    EXPECT_EQ(rknn_run(batched, nullptr), RKNN_SUCC) << "every batch copy has the plugin's op";
    for (rknn_context c : {ctx, batched}) EXPECT_EQ(rknn_destroy(c), RKNN_SUCC);
}

std::atomic<bool> racing_compute_started{false};
std::atomic<int> racing_destroys{0};

// Calls its own (refused) handle until another thread has destroyed it.
int racing_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_in,
                   rknn_custom_op_tensor* outputs, uint32_t n_out) {
    racing_compute_started = true;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    rknn_input_output_num io{};
    while (rknn_query(seen.ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)) == RKNN_ERR_FAIL &&
           std::chrono::steady_clock::now() < give_up) {
    }
    return sigmoid_compute(op_ctx, inputs, n_in, outputs, n_out);
}
int racing_destroy(rknn_custom_op_context*) {
    ++racing_destroys;
    return 0;
}

// rknn_destroy while a non-blocking frame's callback calls its own handle:
// the callback's call may hold the handle's last reference, so the handle
// can end on the frame's own worker thread. It must neither join itself
// (std::terminate) nor leak; the op's destroy runs once the frame is over.
TEST_F(CustomOps, DestroyRacingACallbackOnTheWorkerEndsCleanly) {
    rknn::log::set_sink([](const std::string&) {});  // thousands of refusals, from two threads
    constexpr int kRounds = 30;
    for (int round = 0; round < kRounds; ++round) {
        racing_compute_started = false;
        ASSERT_EQ(init_graph(with_custom("cstSigmoid", false), kQuiet, &seen.ctx), RKNN_SUCC);
        rknn_custom_op op = cpu_op("cstSigmoid", racing_compute);
        op.destroy = racing_destroy;
        ASSERT_EQ(rknn_register_custom_ops(seen.ctx, &op, 1), RKNN_SUCC);
        std::vector<uint8_t> p = rknn::testing::random_pixels({1, 3, 8, 8}, round);
        rknn_input in = rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8,
                                                RKNN_TENSOR_NHWC);
        ASSERT_EQ(rknn_inputs_set(seen.ctx, 1, &in), RKNN_SUCC);
        rknn_run_extend extend{};
        extend.non_block = 1;
        ASSERT_EQ(rknn_run(seen.ctx, &extend), RKNN_SUCC);
        while (!racing_compute_started) std::this_thread::yield();
        ASSERT_EQ(rknn_destroy(seen.ctx), RKNN_SUCC);
    }
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (racing_destroys < kRounds && std::chrono::steady_clock::now() < limit)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(racing_destroys, kRounds) << "a destroyed handle's context was never freed";
}

// A dynamic model whose shape sets change a custom op's tensors runs the op
// at the declared shapes only; at the others rknn_run says why.
TEST_F(CustomOps, ShapeSetsThatChangeTheOpAreRefusedAtRun) {
    graph::Graph g = with_custom("cstSigmoid", false);
    g.shape_sets = {{{1, 3, 8, 8}}, {{1, 3, 4, 4}}};
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, kQuiet, &ctx), RKNN_SUCC);
    rknn_custom_op op = cpu_op("cstSigmoid", sigmoid_compute);
    ASSERT_EQ(rknn_register_custom_ops(ctx, &op, 1), RKNN_SUCC);
    for (const graph::Shape& shape : {graph::Shape{1, 3, 8, 8}, graph::Shape{1, 3, 4, 4}}) {
        rknn_tensor_attr attr{};
        rknn::testing::set_nhwc_dims(shape, &attr);
        ASSERT_EQ(rknn_set_input_shapes(ctx, 1, &attr), RKNN_SUCC);
        std::vector<uint8_t> p = rknn::testing::random_pixels(shape, 4);
        rknn_input in = rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8,
                                                RKNN_TENSOR_NHWC);
        ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
        seen.log.clear();
        const int status = rknn_run(ctx, nullptr);
        if (shape[2] == 8) {
            EXPECT_EQ(status, RKNN_SUCC);
        } else {
            EXPECT_EQ(status, RKNN_ERR_FAIL);
            EXPECT_TRUE(logged("custom ops run only at the shapes the model declares"));
        }
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

}  // namespace
