// GPU (OpenCL) custom ops through the C API on the mock device
// (runtime-spec 7.5): an ArgMax kept as a custom op runs as an OpenCL kernel
// the runtime built, on its queue, with the tensors in the cl_mem it gives in
// mem.priv_data (no cl_arm_import_memory on PoCL or NVIDIA); programs that do
// not build, kernels that are missing and sources that are files; a GPU
// compute that fails falls back to the CPU kernel. Skips without an OpenCL
// platform.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/log.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"
#include "runtime/contract_models.h"

// PoCL and its LLVM keep allocations until the process ends; LeakSanitizer
// (in the ASan build) reports them unless told not to. Ours stay checked.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpocl.so\nleak:libLLVM\nleak:libclang-cpp\n"; }

namespace {

using rknn::testing::init_graph;
using rknn::testing::run_pixels;
namespace graph = rknn::graph;

constexpr uint32_t kQuiet = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY;

const char kSource[] =
    "__kernel void argmax_c(__global const float* in, uint in_first, __global long* out, uint out_first,\n"
    "                       uint channels, uint plane) {\n"
    "    const uint p = get_global_id(0);\n"
    "    float best = in[in_first + p];\n"
    "    long best_c = 0;\n"
    "    for (uint c = 1; c < channels; ++c) {\n"
    "        const float v = in[in_first + c * plane + p];\n"
    "        if (v > best) { best = v; best_c = c; }\n"
    "    }\n"
    "    out[out_first + p] = best_c;\n"
    "}\n";

struct Seen {
    int inits = 0, computes = 0;
    bool init_had_gpu_ctx = false;
    bool compute_had_buffers = false;
    int compute_result = 0;  // what a compute returns without running (0: it runs the kernel)
    std::vector<std::string> log;
};
Seen seen;

int gpu_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t, rknn_custom_op_tensor*, uint32_t) {
    ++seen.inits;
    seen.init_had_gpu_ctx = op_ctx->target == RKNN_TARGET_TYPE_GPU && op_ctx->gpu_ctx.cl_context != nullptr &&
                            op_ctx->gpu_ctx.cl_command_queue != nullptr && op_ctx->gpu_ctx.cl_kernel != nullptr &&
                            inputs[0].mem.priv_data != nullptr;
    return 0;
}

int gpu_compute(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t, rknn_custom_op_tensor* outputs,
                uint32_t) {
    ++seen.computes;
    if (seen.compute_result != 0) return seen.compute_result;
    auto queue = static_cast<cl_command_queue>(op_ctx->gpu_ctx.cl_command_queue);
    auto kernel = static_cast<cl_kernel>(op_ctx->gpu_ctx.cl_kernel);
    cl_mem in = static_cast<cl_mem>(inputs[0].mem.priv_data);
    cl_mem out = static_cast<cl_mem>(outputs[0].mem.priv_data);
    seen.compute_had_buffers = in != nullptr && out != nullptr;
    if (!seen.compute_had_buffers) return -1;
    const cl_uint in_first = static_cast<cl_uint>(inputs[0].mem.offset) / 4;
    const cl_uint out_first = static_cast<cl_uint>(outputs[0].mem.offset) / 8;
    const cl_uint channels = inputs[0].attr.dims[1];
    const cl_uint plane = inputs[0].attr.dims[2] * inputs[0].attr.dims[3];
    cl_int err = clSetKernelArg(kernel, 0, sizeof(cl_mem), &in);
    err |= clSetKernelArg(kernel, 1, sizeof(cl_uint), &in_first);
    err |= clSetKernelArg(kernel, 2, sizeof(cl_mem), &out);
    err |= clSetKernelArg(kernel, 3, sizeof(cl_uint), &out_first);
    err |= clSetKernelArg(kernel, 4, sizeof(cl_uint), &channels);
    err |= clSetKernelArg(kernel, 5, sizeof(cl_uint), &plane);
    const size_t global = plane;
    if (err == CL_SUCCESS) err = clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) err = clFinish(queue);
    return err == CL_SUCCESS ? 0 : -1;
}

rknn_custom_op gpu_op(const char* source = kSource, const char* kernel = "argmax_c") {
    rknn_custom_op op;
    std::memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_GPU;
    std::snprintf(op.op_type, sizeof(op.op_type), "ArgMax");
    std::snprintf(op.cl_kernel_name, sizeof(op.cl_kernel_name), "%s", kernel);
    op.cl_kernel_source = const_cast<char*>(source);
    op.cl_source_size = std::strlen(source);
    op.init = gpu_init;
    op.compute = gpu_compute;
    return op;
}

// conv_pool_model's int8 [1, C, H, W] followed by ArgMax over the channels
// (keepdims): a custom op of type ArgMax, or the runtime's own.
graph::Graph with_argmax(bool custom) {
    graph::Graph g = rknn::testing::conv_pool_model();
    const int32_t pooled = g.outputs[0];
    graph::Tensor mask = g.tensors[static_cast<size_t>(pooled)];
    mask.name = "mask";
    mask.dtype = graph::DType::kInt64;
    mask.quant = graph::QuantParams();
    mask.shape[1] = 1;
    const int32_t t = g.add_tensor(mask);
    graph::Op op{custom ? graph::OpType::kCustom : graph::OpType::kArgMax, "argmax", custom ? "ArgMax" : "", {pooled}, {t}, {}};
    op.attrs.set_int("axis", 1);
    op.attrs.set_int("keepdims", 1);
    g.add_op(op);
    g.outputs = {t};
    if (custom) g.custom_ops.push_back({"ArgMax", {}});
    return g;
}

// conv_pool_model's output plus a constant of its shape, by a custom op of
// type Add writing float32: a GPU op with a constant input.
graph::Graph with_add_of_constant(std::vector<float>* constant) {
    graph::Graph g = rknn::testing::conv_pool_model();
    const int32_t pooled = g.outputs[0];
    graph::Tensor sum = g.tensors[static_cast<size_t>(pooled)];
    sum.name = "sum";
    sum.dtype = graph::DType::kFloat32;
    sum.quant = graph::QuantParams();
    constant->resize(static_cast<size_t>(graph::num_elements(sum.shape)));
    for (size_t i = 0; i < constant->size(); ++i) (*constant)[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
    const int32_t c = g.add_constant("addend", graph::DType::kFloat32, sum.shape,
                                     graph::Buffer::copy_of(constant->data(), constant->size() * sizeof(float)));
    const int32_t t = g.add_tensor(sum);
    g.add_op({graph::OpType::kCustom, "add", "Add", {pooled, c}, {t}, {}});
    g.outputs = {t};
    g.custom_ops.push_back({"Add", {}});
    return g;
}

bool have_opencl_platform() {
    cl_uint count = 0;
    return clGetPlatformIDs(0, nullptr, &count) == CL_SUCCESS && count > 0;
}

class CustomGpuOps : public ::testing::Test {
protected:
    void SetUp() override {
        if (!have_opencl_platform()) GTEST_SKIP() << "no OpenCL platform (install pocl-opencl-icd)";
        seen = Seen();
        rknn::log::set_level(rknn::log::kDefaultLevel);
        rknn::log::set_sink([](const std::string& line) { seen.log.push_back(line); });
        ASSERT_EQ(init_graph(with_argmax(false), kQuiet, &builtin_), RKNN_SUCC);
        expected_ = run_pixels(builtin_, 9, false);
        ASSERT_EQ(expected_.size(), 4u * 4u * 8u);  // [1, 1, 4, 4] int64
        ASSERT_EQ(init_graph(with_argmax(true), RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU | RKNN_FLAG_COLLECT_PERF_MASK | kQuiet,
                             &ctx_),
                  RKNN_SUCC);
    }
    void TearDown() override {
        for (rknn_context c : {ctx_, builtin_}) {
            if (c == 0) continue;
            EXPECT_EQ(rknn_destroy(c), RKNN_SUCC);
        }
        rknn::log::set_sink(nullptr);
    }
    bool logged(const std::string& text) const {
        for (const std::string& line : seen.log)
            if (line.find(text) != std::string::npos) return true;
        return false;
    }
    // The Target column of the ArgMax custom op's row in the per-layer table.
    std::string argmax_target() const {
        rknn_perf_detail detail{};
        if (rknn_query(ctx_, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)) != RKNN_SUCC) return "";
        std::istringstream lines(detail.perf_data);
        for (std::string line; std::getline(lines, line);) {
            char op[64], dtype[16], target[8];
            if (std::sscanf(line.c_str(), "%*d %63s %15s %7s", op, dtype, target) == 3 && std::string(op) == "ArgMax")
                return target;
        }
        return "";
    }
    rknn_context builtin_ = 0, ctx_ = 0;
    std::vector<uint8_t> expected_;
};

TEST_F(CustomGpuOps, KernelRunsOnTheRuntimesQueueAndBuffers) {
    rknn_custom_op op = gpu_op();
    ASSERT_EQ(rknn_register_custom_ops(ctx_, &op, 1), RKNN_SUCC);
    EXPECT_EQ(seen.inits, 1);
    EXPECT_TRUE(seen.init_had_gpu_ctx) << "init sees the cl_context, queue, kernel and the tensors' cl_mem";
    for (uint32_t seed : {9u, 9u}) EXPECT_EQ(run_pixels(ctx_, seed, false), expected_);
    EXPECT_EQ(seen.computes, 2);
    EXPECT_TRUE(seen.compute_had_buffers);
    EXPECT_NE(run_pixels(ctx_, 4, false), expected_) << "another image gives another mask (the output is live)";
    EXPECT_EQ(argmax_target(), "GPU");
}

TEST_F(CustomGpuOps, SourceFromAFile) {
    const std::string path = (std::filesystem::temp_directory_path() / "rknn_gpu_test_argmax.cl").string();
    std::ofstream(path) << kSource;
    rknn_custom_op op = gpu_op();
    op.cl_kernel_source = const_cast<char*>(path.c_str());
    op.cl_source_size = 0;  // a path
    std::snprintf(op.cl_build_options, sizeof(op.cl_build_options), "-cl-fast-relaxed-math");
    ASSERT_EQ(rknn_register_custom_ops(ctx_, &op, 1), RKNN_SUCC);
    EXPECT_EQ(run_pixels(ctx_, 9, false), expected_);
    std::filesystem::remove(path);
}

// Each refusal names its reason, and the context takes a good op after them.
TEST_F(CustomGpuOps, BadProgramsAreRefusedWithTheirReason) {
    rknn_custom_op broken = gpu_op("__kernel void argmax_c(__global float* x) { x[0] = undeclared_name; }\n");
    EXPECT_NE(rknn_register_custom_ops(ctx_, &broken, 1), RKNN_SUCC);
    EXPECT_TRUE(logged("build log")) << "the build log is in the error";
    EXPECT_TRUE(logged("undeclared_name"));

    rknn_custom_op misnamed = gpu_op(kSource, "no_such_kernel");
    EXPECT_NE(rknn_register_custom_ops(ctx_, &misnamed, 1), RKNN_SUCC);
    EXPECT_TRUE(logged("clCreateKernel(\"no_such_kernel\")"));

    rknn_custom_op unnamed = gpu_op(kSource, "");
    EXPECT_EQ(rknn_register_custom_ops(ctx_, &unnamed, 1), RKNN_ERR_PARAM_INVALID);
    EXPECT_TRUE(logged("cl_kernel_name is empty"));

    rknn_custom_op no_source = gpu_op();
    no_source.cl_kernel_source = nullptr;
    EXPECT_EQ(rknn_register_custom_ops(ctx_, &no_source, 1), RKNN_ERR_PARAM_INVALID);

    rknn_custom_op no_file = gpu_op("/nonexistent/argmax.cl");
    no_file.cl_source_size = 0;
    EXPECT_NE(rknn_register_custom_ops(ctx_, &no_file, 1), RKNN_SUCC);
    EXPECT_TRUE(logged("OpenCL kernel file not found: /nonexistent/argmax.cl"));

    EXPECT_EQ(seen.inits, 0) << "no init ran for a refused op";
    EXPECT_NE(rknn_run(ctx_, nullptr), RKNN_SUCC) << "nothing stayed registered";
    rknn_custom_op good = gpu_op();
    ASSERT_EQ(rknn_register_custom_ops(ctx_, &good, 1), RKNN_SUCC);
    EXPECT_EQ(run_pixels(ctx_, 9, false), expected_);
}

TEST_F(CustomGpuOps, FailingComputeFallsBackToTheCpuKernel) {
    rknn_custom_op op = gpu_op();
    ASSERT_EQ(rknn_register_custom_ops(ctx_, &op, 1), RKNN_SUCC);
    seen.compute_result = -7;
    EXPECT_EQ(run_pixels(ctx_, 9, false), expected_);
    EXPECT_TRUE(logged("runs on the GPU failed")) << "the fallback is logged";
    EXPECT_TRUE(logged("compute returned -7"));
    EXPECT_EQ(run_pixels(ctx_, 9, false), expected_);
    EXPECT_EQ(seen.computes, 1) << "later runs stay on the CPU";
    EXPECT_EQ(argmax_target(), "CPU");
}

// The stand-in reads a constant input from the staging as the callbacks would.
TEST_F(CustomGpuOps, FallbackTakesConstantInputs) {
    rknn_context plain = 0, add = 0;
    ASSERT_EQ(init_graph(rknn::testing::conv_pool_model(), kQuiet, &plain), RKNN_SUCC);
    std::vector<uint8_t> pooled_bytes = run_pixels(plain, 5, true);
    ASSERT_EQ(rknn_destroy(plain), RKNN_SUCC);
    std::vector<float> constant;
    ASSERT_EQ(init_graph(with_add_of_constant(&constant), kQuiet, &add), RKNN_SUCC);
    rknn_custom_op op = gpu_op();
    std::snprintf(op.op_type, sizeof(op.op_type), "Add");
    op.init = nullptr;
    ASSERT_EQ(rknn_register_custom_ops(add, &op, 1), RKNN_SUCC);
    seen.compute_result = -3;
    const std::vector<uint8_t> sum_bytes = run_pixels(add, 5, false);
    ASSERT_EQ(sum_bytes.size(), constant.size() * sizeof(float));
    ASSERT_EQ(pooled_bytes.size(), sum_bytes.size());
    std::vector<float> pooled(constant.size()), sum(constant.size());
    std::memcpy(pooled.data(), pooled_bytes.data(), pooled_bytes.size());
    std::memcpy(sum.data(), sum_bytes.data(), sum_bytes.size());
    for (size_t i = 0; i < sum.size(); ++i) ASSERT_EQ(sum[i], pooled[i] + constant[i]) << i;
    EXPECT_TRUE(logged("runs on the GPU failed"));
    EXPECT_EQ(rknn_destroy(add), RKNN_SUCC);
}

}  // namespace
