// The general API on small models built in code, through the exported
// functions on the mock device: every query, every input type and layout the
// spec allows, raw/float/preallocated outputs, pass_through, priority, perf,
// and misuse (wrong indices, sizes, NULLs, calls out of order, double
// release, destroy then use) answered with the documented code.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/context_handle.h"
#include "common/mock_soc.h"
#include "base/half.h"
#include "base/log.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "layout/preprocess.h"
#include "model/model_file.h"
#include "quant/calibrate.h"
#include "quant/quantize.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"
#include "rknn_custom_op.h"
#include "hw/soc_profile.h"
#include "npu/placement.h"
#include "runtime/context.h"
#include "common/test_graphs.h"
#include "runtime/contract_models.h"

namespace {

using rknn::cpu::HostTensor;
namespace graph = rknn::graph;
namespace hw = rknn::hw;

using rknn::testing::init_graph;
using rknn::testing::input_of;
using rknn::testing::pixels;
using rknn::testing::quantize_8x8;
using rknn::testing::quantized_cnn;

// The graph's input for NHWC pixels `p` as the runtime normalises and
// quantises it (`fed`), and the CPU reference's outputs for it.
::testing::AssertionResult run_reference(const graph::Graph& g, const std::vector<uint8_t>& p, HostTensor* fed,
                                         std::vector<HostTensor>* expected) {
    HostTensor raw(graph::DType::kUInt8, {1, 8, 8, 3});
    std::memcpy(raw.raw(), p.data(), p.size());
    const graph::Tensor& in = g.tensors[static_cast<size_t>(g.inputs[0])];
    auto normalised = rknn::layout::apply_preprocess(raw, g.preprocess[0], in.shape);
    if (!normalised.is_ok()) return ::testing::AssertionFailure() << normalised.status().message();
    *fed = rknn::cpu::make_tensor_like(in, in.shape);
    if (!rknn::cpu::from_float32(normalised.value(), fed).is_ok()) return ::testing::AssertionFailure() << "quantisation";
    auto exec = rknn::cpu::GraphExecutor::create(g);
    if (!exec.is_ok() || !exec.value()->run({*fed}, expected).is_ok()) return ::testing::AssertionFailure() << "reference run";
    return ::testing::AssertionSuccess();
}

class ApiContract : public ::testing::Test {
protected:
    void SetUp() override {
        graph_ = quantized_cnn();
        ASSERT_EQ(init_graph(graph_, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx_), RKNN_SUCC);
    }
    void TearDown() override {
        if (ctx_ != 0) {
            EXPECT_EQ(rknn_destroy(ctx_), RKNN_SUCC);
        }
    }

    // The reference's int8 output for raw NHWC pixels.
    std::vector<int8_t> reference(const std::vector<uint8_t>& p) const {
        HostTensor fed;
        std::vector<HostTensor> outs;
        EXPECT_TRUE(run_reference(graph_, p, &fed, &outs));
        if (outs.empty()) return {};
        return std::vector<int8_t>(outs[0].data<int8_t>(), outs[0].data<int8_t>() + outs[0].numel());
    }

    std::vector<int8_t> run_raw(rknn_input input) {
        EXPECT_EQ(rknn_inputs_set(ctx_, 1, &input), RKNN_SUCC);
        EXPECT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
        rknn_output out{};
        EXPECT_EQ(rknn_outputs_get(ctx_, 1, &out, nullptr), RKNN_SUCC);
        std::vector<int8_t> result(static_cast<const int8_t*>(out.buf), static_cast<const int8_t*>(out.buf) + out.size);
        EXPECT_EQ(rknn_outputs_release(ctx_, 1, &out), RKNN_SUCC);
        return result;
    }

    graph::Graph graph_;
    rknn_context ctx_ = 0;
};

TEST_F(ApiContract, QueriesDescribeTheModel) {
    rknn_input_output_num io{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_SUCC);
    EXPECT_EQ(io.n_input, 1u);
    EXPECT_EQ(io.n_output, 1u);

    const graph::Tensor& in = graph_.tensors[static_cast<size_t>(graph_.inputs[0])];
    rknn_tensor_attr attr{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_STREQ(attr.name, "input");
    EXPECT_EQ(attr.n_dims, 4u);
    EXPECT_EQ(attr.fmt, RKNN_TENSOR_NHWC);
    EXPECT_EQ(std::vector<uint32_t>(attr.dims, attr.dims + 4), (std::vector<uint32_t>{1, 8, 8, 3}));
    EXPECT_EQ(attr.n_elems, 192u);
    EXPECT_EQ(attr.size, 192u);
    EXPECT_EQ(attr.size_with_stride, 192u);
    EXPECT_EQ(attr.w_stride, 8u);
    EXPECT_EQ(attr.type, RKNN_TENSOR_INT8);
    EXPECT_EQ(attr.qnt_type, RKNN_TENSOR_QNT_AFFINE_ASYMMETRIC);
    EXPECT_EQ(attr.zp, in.quant.zero_point());
    EXPECT_FLOAT_EQ(attr.scale, in.quant.scale());

    // A 3-channel image read only by a convolution: the vendor's native
    // form, NHWC with the width aligned to 16 pixels (runtime-spec 3.3, 3.5).
    for (rknn_query_cmd cmd : {RKNN_QUERY_NATIVE_INPUT_ATTR, RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR}) {
        attr = {};
        ASSERT_EQ(rknn_query(ctx_, cmd, &attr, sizeof(attr)), RKNN_SUCC);
        EXPECT_EQ(attr.fmt, RKNN_TENSOR_NHWC) << cmd;
        EXPECT_EQ(attr.n_dims, 4u) << cmd;
        EXPECT_EQ(std::vector<uint32_t>(attr.dims, attr.dims + 4), (std::vector<uint32_t>{1, 8, 8, 3})) << cmd;
        EXPECT_EQ(attr.w_stride, 16u) << cmd;
        EXPECT_EQ(attr.size_with_stride, 8u * 16u * 3u) << cmd;
        EXPECT_EQ(attr.size, 192u) << cmd;
        EXPECT_EQ(attr.n_elems, 192u) << cmd;
        EXPECT_EQ(attr.type, RKNN_TENSOR_INT8) << cmd;
    }

    attr = {};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_OUTPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_STREQ(attr.name, "logits");
    EXPECT_EQ(attr.fmt, RKNN_TENSOR_UNDEFINED);
    EXPECT_EQ(attr.n_dims, 2u);
    EXPECT_EQ(attr.dims[1], 10u);
    EXPECT_EQ(attr.size, 10u);
    EXPECT_EQ(attr.type, RKNN_TENSOR_INT8);
    EXPECT_EQ(attr.w_stride, 0u);
    for (rknn_query_cmd cmd : {RKNN_QUERY_NATIVE_OUTPUT_ATTR, RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR}) {
        attr = {};
        EXPECT_EQ(rknn_query(ctx_, cmd, &attr, sizeof(attr)), RKNN_SUCC) << cmd;
        EXPECT_GT(attr.n_elems, 0u) << cmd;
    }

    rknn_sdk_version version{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_SDK_VERSION, &version, sizeof(version)), RKNN_SUCC);
    EXPECT_NE(std::string(version.api_version).find("2.3.2"), std::string::npos) << version.api_version;
    EXPECT_GT(std::strlen(version.drv_version), 0u);
    rknn_mem_size mem{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_MEM_SIZE, &mem, sizeof(mem)), RKNN_SUCC);
    EXPECT_GT(mem.total_weight_size, 0u);
    EXPECT_GT(mem.total_internal_size, 0u);
    EXPECT_GE(mem.total_dma_allocated_size, uint64_t{mem.total_weight_size} + mem.total_internal_size);
    rknn_custom_string custom{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_CUSTOM_STRING, &custom, sizeof(custom)), RKNN_SUCC);
    EXPECT_STREQ(custom.string, "contract test");
}

TEST_F(ApiContract, WrongQuerySizesAndIndicesAreParamInvalid) {
    rknn_input_output_num io{};
    EXPECT_EQ(rknn_query(ctx_, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io) - 1), RKNN_ERR_PARAM_INVALID);
    rknn_tensor_attr attr{};
    EXPECT_EQ(rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr) + 4), RKNN_ERR_PARAM_INVALID);
    attr.index = 1;
    EXPECT_EQ(rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_query(ctx_, RKNN_QUERY_OUTPUT_ATTR, &attr, sizeof(attr)), RKNN_ERR_PARAM_INVALID);
    rknn_perf_run perf{};
    EXPECT_NE(rknn_query(ctx_, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)), RKNN_SUCC);  // no run yet
}

TEST_F(ApiContract, OutputsEqualTheInt8Reference) {
    std::vector<uint8_t> p = pixels(1);
    const std::vector<int8_t> expected = reference(p);
    EXPECT_EQ(run_raw(input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC)), expected);
}

TEST_F(ApiContract, EveryInputTypeAndLayoutGivesTheSameResult) {
    std::vector<uint8_t> p = pixels(2);
    const std::vector<int8_t> expected = reference(p);
    // The same pixel values in every accepted type, NHWC and NCHW.
    std::vector<float> f32(192), f32_nchw(192);
    std::vector<uint16_t> f16(192);
    std::vector<int16_t> i16(192);
    for (size_t i = 0; i < 192; ++i) {
        f32[i] = p[i];
        f16[i] = rknn::float_to_half(p[i]);
        i16[i] = p[i];
        const size_t c = i % 3, x = (i / 3) % 8, y = i / 24;
        f32_nchw[(c * 8 + y) * 8 + x] = p[i];
    }
    EXPECT_EQ(run_raw(input_of(f32.data(), 768, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NHWC)), expected);
    EXPECT_EQ(run_raw(input_of(f32_nchw.data(), 768, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW)), expected);
    EXPECT_EQ(run_raw(input_of(f16.data(), 384, RKNN_TENSOR_FLOAT16, RKNN_TENSOR_NHWC)), expected);
    EXPECT_EQ(run_raw(input_of(i16.data(), 384, RKNN_TENSOR_INT16, RKNN_TENSOR_NHWC)), expected);

    // INT8 is the model's own type: already normalised and quantised.
    HostTensor raw(graph::DType::kUInt8, {1, 8, 8, 3});
    std::memcpy(raw.raw(), p.data(), p.size());
    const graph::Tensor& in = graph_.tensors[static_cast<size_t>(graph_.inputs[0])];
    auto normalised = rknn::layout::apply_preprocess(raw, graph_.preprocess[0], in.shape);
    HostTensor q = rknn::cpu::make_tensor_like(in, in.shape);
    ASSERT_TRUE(rknn::cpu::from_float32(normalised.value(), &q).is_ok());
    EXPECT_EQ(run_raw(input_of(q.raw(), 192, RKNN_TENSOR_INT8, RKNN_TENSOR_NCHW)), expected);

    // pass_through: the native NHWC image, rows of w_stride = 16 pixels.
    std::vector<int8_t> image(8 * 16 * 3, 0);
    for (int c = 0; c < 3; ++c)
        for (int i = 0; i < 64; ++i) image[static_cast<size_t>(((i / 8) * 16 + i % 8) * 3 + c)] = q.data<int8_t>()[c * 64 + i];
    rknn_input native = input_of(image.data(), static_cast<uint32_t>(image.size()), RKNN_TENSOR_INT8, RKNN_TENSOR_NHWC);
    native.pass_through = 1;
    EXPECT_EQ(run_raw(native), expected);
    // Without the stride padding it is too short.
    native.size = 192;
    EXPECT_NE(rknn_inputs_set(ctx_, 1, &native), RKNN_SUCC);
}

TEST_F(ApiContract, FloatAndPreallocatedOutputs) {
    std::vector<uint8_t> p = pixels(3);
    rknn_input in = input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    rknn_output outs[2] = {};
    outs[0].want_float = 1;
    ASSERT_EQ(rknn_outputs_get(ctx_, 1, &outs[0], nullptr), RKNN_SUCC);
    ASSERT_EQ(outs[0].size, 40u);
    ASSERT_EQ(rknn_outputs_get(ctx_, 1, &outs[1], nullptr), RKNN_SUCC);
    ASSERT_EQ(outs[1].size, 10u);
    const graph::Tensor& logits = graph_.tensors[static_cast<size_t>(graph_.outputs[0])];
    for (int i = 0; i < 10; ++i) {
        const float dequantised = (static_cast<const int8_t*>(outs[1].buf)[i] - logits.quant.zero_point()) *
                                  logits.quant.scale();
        EXPECT_FLOAT_EQ(static_cast<const float*>(outs[0].buf)[i], dequantised);
    }
    float user[10] = {};
    rknn_output pre{};
    pre.want_float = 1;
    pre.is_prealloc = 1;
    pre.buf = user;
    pre.size = sizeof(user) - 4;  // too small
    EXPECT_EQ(rknn_outputs_get(ctx_, 1, &pre, nullptr), RKNN_ERR_OUTPUT_INVALID);
    pre.size = sizeof(user);
    ASSERT_EQ(rknn_outputs_get(ctx_, 1, &pre, nullptr), RKNN_SUCC);
    EXPECT_EQ(std::memcmp(user, outs[0].buf, sizeof(user)), 0);
    EXPECT_EQ(rknn_outputs_release(ctx_, 1, &pre), RKNN_SUCC);  // not ours: left alone
    EXPECT_EQ(pre.buf, static_cast<void*>(user));
    EXPECT_EQ(rknn_outputs_release(ctx_, 1, &outs[0]), RKNN_SUCC);
    EXPECT_EQ(outs[0].buf, nullptr);
    // A stale copy of a released descriptor is refused, not freed twice.
    rknn_output stale = outs[1];
    EXPECT_EQ(rknn_outputs_release(ctx_, 1, &outs[1]), RKNN_SUCC);
    EXPECT_EQ(rknn_outputs_release(ctx_, 1, &outs[1]), RKNN_SUCC);  // buf is NULL now
    EXPECT_EQ(rknn_outputs_release(ctx_, 1, &stale), RKNN_ERR_PARAM_INVALID);
}

TEST_F(ApiContract, MisuseGetsTheDocumentedCodes) {
    rknn_output out{};
    EXPECT_EQ(rknn_outputs_get(ctx_, 1, &out, nullptr), RKNN_ERR_FAIL);  // before any run
    EXPECT_EQ(rknn_outputs_get(ctx_, 2, &out, nullptr), RKNN_ERR_PARAM_INVALID);
    std::vector<uint8_t> p = pixels(4);
    rknn_input in = input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    in.index = 1;
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_ERR_PARAM_INVALID);
    in.index = 0;
    in.size = 191;
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_ERR_INPUT_INVALID);
    in.size = 192;
    in.buf = nullptr;
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_ERR_PARAM_INVALID);
    in.buf = p.data();
    in.type = RKNN_TENSOR_INT64;
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_ERR_INPUT_INVALID);
    in.type = RKNN_TENSOR_UINT8;
    in.fmt = RKNN_TENSOR_FORMAT_MAX;
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_ERR_INPUT_INVALID);

    // A run without inputs works (the buffers hold zeros).
    EXPECT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    ASSERT_EQ(rknn_outputs_get(ctx_, 1, &out, nullptr), RKNN_SUCC);
    EXPECT_EQ(rknn_outputs_release(ctx_, 1, &out), RKNN_SUCC);

    // Destroy, then every call on the handle is CTX_INVALID.
    ASSERT_EQ(rknn_destroy(ctx_), RKNN_SUCC);
    EXPECT_EQ(rknn_run(ctx_, nullptr), RKNN_ERR_CTX_INVALID);
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_ERR_CTX_INVALID);
    EXPECT_EQ(rknn_outputs_get(ctx_, 1, &out, nullptr), RKNN_ERR_CTX_INVALID);
    rknn_input_output_num io{};
    EXPECT_EQ(rknn_query(ctx_, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)), RKNN_ERR_CTX_INVALID);
    EXPECT_EQ(rknn_destroy(ctx_), RKNN_ERR_CTX_INVALID);
    ctx_ = 0;
}

TEST_F(ApiContract, CoreMasksGiveTheSameResult) {
    std::vector<uint8_t> p = pixels(5);
    const std::vector<int8_t> expected = reference(p);
    for (rknn_core_mask mask : {RKNN_NPU_CORE_0, RKNN_NPU_CORE_1, RKNN_NPU_CORE_2, RKNN_NPU_CORE_0_1,
                                RKNN_NPU_CORE_0_1_2, RKNN_NPU_CORE_ALL, RKNN_NPU_CORE_AUTO}) {
        ASSERT_EQ(rknn_set_core_mask(ctx_, mask), RKNN_SUCC) << mask;
        EXPECT_EQ(run_raw(input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC)), expected) << mask;
    }
    int eight = 8;
    rknn_core_mask bad;
    std::memcpy(&bad, &eight, sizeof(bad));
    EXPECT_EQ(rknn_set_core_mask(ctx_, bad), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(run_raw(input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC)), expected);
}

// A duplicate runs the same model with its own memory, concurrently with
// the original, and outlives it.
TEST_F(ApiContract, DuplicatedContextsRunIndependently) {
    ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_1), RKNN_SUCC);
    rknn_context dup = 0;
    ASSERT_EQ(rknn_dup_context(&ctx_, &dup), RKNN_SUCC);
    ASSERT_NE(dup, 0u);
    ASSERT_NE(dup, ctx_);
    {
        // One weights buffer on the device for both, another for an unrelated context.
        auto original = rknn::api::runtime_context(ctx_), copy = rknn::api::runtime_context(dup);
        ASSERT_TRUE(original.is_ok() && copy.is_ok());
        EXPECT_TRUE(copy.value()->shares_weights_with(*original.value()));
        rknn_context separate = 0;
        ASSERT_EQ(init_graph(graph_, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &separate), RKNN_SUCC);
        auto third = rknn::api::runtime_context(separate);
        ASSERT_TRUE(third.is_ok());
        EXPECT_FALSE(third.value()->shares_weights_with(*original.value()));
        EXPECT_EQ(rknn_destroy(separate), RKNN_SUCC);
    }
    std::vector<uint8_t> p1 = pixels(7), p2 = pixels(8);
    const std::vector<int8_t> e1 = reference(p1), e2 = reference(p2);
    std::vector<int8_t> r1, r2;
    std::thread other([&] {
        rknn_input in = input_of(p2.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
        for (int i = 0; i < 5; ++i) {
            EXPECT_EQ(rknn_inputs_set(dup, 1, &in), RKNN_SUCC);
            EXPECT_EQ(rknn_run(dup, nullptr), RKNN_SUCC);
        }
        rknn_output out{};
        EXPECT_EQ(rknn_outputs_get(dup, 1, &out, nullptr), RKNN_SUCC);
        if (out.buf != nullptr) r2.assign(static_cast<int8_t*>(out.buf), static_cast<int8_t*>(out.buf) + out.size);
        EXPECT_EQ(rknn_outputs_release(dup, 1, &out), RKNN_SUCC);
    });
    for (int i = 0; i < 5; ++i) r1 = run_raw(input_of(p1.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC));
    other.join();
    EXPECT_EQ(r1, e1);
    EXPECT_EQ(r2, e2);
    ASSERT_EQ(rknn_destroy(ctx_), RKNN_SUCC);
    ctx_ = dup;  // destroyed by TearDown
    EXPECT_EQ(run_raw(input_of(p2.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC)), e2);
    rknn_context none = 0;
    EXPECT_EQ(rknn_dup_context(&none, &dup), RKNN_ERR_CTX_INVALID);
}

TEST_F(ApiContract, PerfQueriesAfterARun) {
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    rknn_perf_run perf{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)), RKNN_SUCC);
    EXPECT_GT(perf.run_duration, 0);
    rknn_perf_detail detail{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
    ASSERT_NE(detail.perf_data, nullptr);
    const std::string table(detail.perf_data, detail.data_len);
    EXPECT_NE(table.find("Conv"), std::string::npos) << table;
    EXPECT_NE(table.find("NPU"), std::string::npos) << table;
    EXPECT_NE(table.find("CPU"), std::string::npos) << table;  // the Reshape
    EXPECT_NE(table.find("Total"), std::string::npos) << table;
    EXPECT_NE(table.find("NPU(us)"), std::string::npos) << table;
    EXPECT_NE(table.find("Total NPU Time(us), driver-reported"), std::string::npos) << table;
    // The MAC share: every convolution of this model runs on the NPU.
    EXPECT_NE(table.find("on the NPU"), std::string::npos) << table;
    EXPECT_NE(table.find("(100.00%)"), std::string::npos) << table;
    EXPECT_EQ(table.find("MACs off the NPU"), std::string::npos) << table;
}

// On RK3588 the per-layer table has the vendor's WorkLoad(0/1/2) column:
// each core's share of a layer's tasks, from the core the kernel reports.
TEST_F(ApiContract, PerfDetailSaysWhichCoreRanEachLayer) {
    const auto conv_row = [&]() -> std::string {
        rknn_perf_detail detail{};
        if (rknn_query(ctx_, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)) != RKNN_SUCC) return "";
        std::istringstream table(std::string(detail.perf_data, detail.data_len));
        std::string line, header;
        std::getline(table, header);
        EXPECT_NE(header.find("WorkLoad(0/1/2)"), std::string::npos) << header;
        while (std::getline(table, line))
            if (line.find("Conv") != std::string::npos && line.find(" NPU ") != std::string::npos) return line;
        return "";
    };
    ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_1), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    EXPECT_NE(conv_row().find(" 0.0%/100.0%/0.0% "), std::string::npos) << conv_row();
    ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_2), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    EXPECT_NE(conv_row().find(" 0.0%/0.0%/100.0% "), std::string::npos) << conv_row();
    // AUTO: the kernel picks an idle core and says which.
    ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_AUTO), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
    EXPECT_NE(conv_row().find("100.0%"), std::string::npos) << conv_row();
}

// The table-driven pixel path must agree with the generic one when the
// model reverses the channel order, and an input listed as an output too
// comes back as fed.
TEST(ApiModels, ReversedChannelsAndAnInputThatIsAnOutput) {
    graph::Graph g = quantized_cnn();
    g.preprocess[0].reverse_channels = true;
    g.outputs.push_back(g.inputs[0]);
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    // Read back as an output, the input is not kept as a packed image: the
    // NPU's cube.
    rknn_tensor_attr attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_EQ(attr.fmt, RKNN_TENSOR_NC1HWC2);
    EXPECT_EQ(std::vector<uint32_t>(attr.dims, attr.dims + 5), (std::vector<uint32_t>{1, 1, 8, 8, 16}));
    EXPECT_EQ(attr.size_with_stride, 8u * 8u * 16u);
    std::vector<uint8_t> p = pixels(6);
    HostTensor fed;
    std::vector<HostTensor> expected;
    ASSERT_TRUE(run_reference(g, p, &fed, &expected));

    rknn_input input = input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &input), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output outs[2] = {};
    ASSERT_EQ(rknn_outputs_get(ctx, 2, outs, nullptr), RKNN_SUCC);
    ASSERT_EQ(outs[0].size, 10u);
    ASSERT_EQ(outs[1].size, 192u);
    EXPECT_EQ(std::memcmp(outs[0].buf, expected[0].raw(), 10), 0);
    EXPECT_EQ(std::memcmp(outs[1].buf, fed.raw(), 192), 0);  // the normalised, quantised input
    EXPECT_EQ(rknn_outputs_release(ctx, 2, outs), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// A model for RK3568 on a mock RK3568: the convolution and the Gemm run in
// the RK356x dialect and MaxPool on its PPU (Relu and Reshape on the CPU);
// native cubes have 8-byte atoms and padded surfaces, the RGB input is an
// ARGB image of biased bytes; the results equal the int8 reference, also
// through pass_through of a hand-packed native input.
TEST(ApiModels, Rk3568ModelThroughTheApi) {
    const rknn::testing::MockSoc mock("rk3568");
    graph::Graph g = quantized_cnn();
    g.target_soc = "rk3568";
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    auto context = rknn::api::runtime_context(ctx);
    ASSERT_TRUE(context.is_ok());
    EXPECT_EQ(context.value()->npu_task_op_count(), 3u) << "Conv, MaxPool and Gemm (Relu and Reshape on the CPU)";
    // The RGB input stays an image the first convolution reads in ARGB mode:
    // NHWC rows of align(8, 8) pixels, uint8 bytes (the int8 value + 128).
    rknn_tensor_attr in_attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr)), RKNN_SUCC);
    rknn_tensor_attr attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_EQ(attr.fmt, RKNN_TENSOR_NHWC);
    EXPECT_EQ(std::vector<uint32_t>(attr.dims, attr.dims + 4), (std::vector<uint32_t>{1, 8, 8, 3}));
    EXPECT_EQ(attr.w_stride, 8u);
    EXPECT_EQ(attr.size_with_stride, 8u * 8u * 3u);
    EXPECT_EQ(in_attr.type, RKNN_TENSOR_INT8);
    EXPECT_EQ(attr.type, RKNN_TENSOR_UINT8);
    EXPECT_EQ(attr.zp, in_attr.zp + 128);
    EXPECT_EQ(attr.scale, in_attr.scale);
    rknn_tensor_attr out_attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &out_attr, sizeof(out_attr)), RKNN_SUCC);
    EXPECT_EQ(out_attr.size_with_stride, 2u * 8u) << "10 channels of one pixel: two one-pixel surfaces";

    std::vector<uint8_t> p = pixels(12);
    HostTensor fed;
    std::vector<HostTensor> expected;
    ASSERT_TRUE(run_reference(g, p, &fed, &expected));

    // The native input by hand: channel c of pixel (y, x) at (y * 8 + x) * 3 + c, biased by 128.
    std::vector<uint8_t> native(attr.size_with_stride, 0);
    for (int c = 0; c < 3; ++c)
        for (int i = 0; i < 64; ++i)
            native[static_cast<size_t>(i * 3 + c)] = static_cast<uint8_t>(fed.data<int8_t>()[c * 64 + i] + 128);
    rknn_input plain = input_of(p.data(), 192, RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    rknn_input passed = input_of(native.data(), static_cast<uint32_t>(native.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    passed.pass_through = 1;
    for (rknn_input input : {plain, passed}) {
        ASSERT_EQ(rknn_inputs_set(ctx, 1, &input), RKNN_SUCC);
        ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
        rknn_output out{};
        ASSERT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
        ASSERT_EQ(out.size, 10u);
        EXPECT_EQ(std::memcmp(out.buf, expected[0].raw(), 10), 0) << (input.pass_through ? "pass_through" : "pixels");
        EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    }
    passed.size -= 8;
    EXPECT_EQ(rknn_inputs_set(ctx, 1, &passed), RKNN_ERR_INPUT_INVALID) << "a native input cut short";
    // The same biased image bound with rknn_set_io_mem under its native attr.
    rknn_tensor_mem* mem = rknn_create_mem(ctx, attr.size_with_stride);
    ASSERT_NE(mem, nullptr);
    std::memcpy(mem->virt_addr, native.data(), native.size());
    attr.pass_through = 1;
    ASSERT_EQ(rknn_set_io_mem(ctx, mem, &attr), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output out{};
    ASSERT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
    EXPECT_EQ(std::memcmp(out.buf, expected[0].raw(), 10), 0) << "bound native image";
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx, mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// An fp16 model: FLOAT16 attributes, raw outputs in fp16, want_float the
// same values widened, results close to the CPU fp16 reference.
// Mainline rocket completes a task on the DPU's interrupt only: the pool
// runs on the CPU there, and the results are those of the vendor driver.
// It also picks the core of each job, so core masks other than AUTO are refused.
TEST(ApiModels, RocketRunsPoolsOnTheCpu) {
    const graph::Graph g = quantized_cnn();
    rknn_context vendor = 0, rocket = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &vendor), RKNN_SUCC);
    {
        const rknn::testing::MockDriver abi("rocket");
        ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &rocket), RKNN_SUCC);
    }
    auto on_vendor = rknn::api::runtime_context(vendor);
    auto on_rocket = rknn::api::runtime_context(rocket);
    ASSERT_TRUE(on_vendor.is_ok() && on_rocket.is_ok());
    EXPECT_EQ(on_rocket.value()->npu_task_op_count() + 1, on_vendor.value()->npu_task_op_count());
    // Rocket chooses the core of each job: no pinning, no splits.
    EXPECT_EQ(rknn_set_core_mask(rocket, RKNN_NPU_CORE_1), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_set_core_mask(rocket, RKNN_NPU_CORE_0_1_2), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_set_core_mask(rocket, RKNN_NPU_CORE_AUTO), RKNN_SUCC);
    for (uint32_t seed : {3u, 4u}) {
        const std::vector<uint8_t> expected = rknn::testing::run_pixels(vendor, seed, true);
        EXPECT_FALSE(expected.empty());
        EXPECT_EQ(rknn::testing::run_pixels(rocket, seed, true), expected) << "seed " << seed;
    }
    EXPECT_EQ(rknn_destroy(vendor), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(rocket), RKNN_SUCC);
}

// int8 conv -> DequantizeLinear -> float16 MaxPool -> QuantizeLinear -> int8
// MaxPool, as the converter's precision boundaries make it: the CPU converts
// the device cubes between the two NPU layers directly, and the output equals
// the CPU reference's codes (max pooling is exact in float16).
TEST(ApiModels, HybridModelConvertsBetweenInt8AndFloat16Cubes) {
    graph::Graph g = rknn::testing::conv_pool_model();
    const graph::Op pool = g.ops[2];
    const int32_t relu_out = pool.inputs[0], pool_out = pool.outputs[0];
    const graph::QuantParams relu_quant = g.tensors[static_cast<size_t>(relu_out)].quant;
    const graph::QuantParams pool_quant = g.tensors[static_cast<size_t>(pool_out)].quant;
    const int32_t wide_in = rknn::testing::add_tensor(&g, "wide_in", graph::DType::kFloat16,
                                                      g.tensors[static_cast<size_t>(relu_out)].shape);
    const int32_t wide_out = rknn::testing::add_tensor(&g, "wide_out", graph::DType::kFloat16,
                                                       g.tensors[static_cast<size_t>(pool_out)].shape);
    const int32_t y = rknn::testing::add_tensor(&g, "y", graph::DType::kInt8, {1, 8, 2, 2}, pool_quant);
    const auto parameters = [&g](const std::string& name, const graph::QuantParams& q) {
        const float scale = q.scales[0];
        const auto zp = static_cast<int8_t>(q.zero_points[0]);
        return std::vector<int32_t>{
            g.add_constant(name + "_scale", graph::DType::kFloat32, {}, graph::Buffer::copy_of(&scale, sizeof(scale))),
            g.add_constant(name + "_zp", graph::DType::kInt8, {}, graph::Buffer::copy_of(&zp, sizeof(zp)))};
    };
    const std::vector<int32_t> dq = parameters("dq", relu_quant), q = parameters("q", pool_quant);
    g.ops.resize(2);
    g.add_op({graph::OpType::kDequantizeLinear, "dq", "", {relu_out, dq[0], dq[1]}, {wide_in}, {}});
    const auto add_pool = [&g, &pool](const char* name, int32_t from, int32_t to) {
        graph::Op copy = pool;
        copy.name = name;
        copy.inputs = {from};
        copy.outputs = {to};
        g.add_op(copy);
    };
    add_pool("wide_pool", wide_in, wide_out);
    g.add_op({graph::OpType::kQuantizeLinear, "q", "", {wide_out, q[0], q[1]}, {pool_out}, {}});
    add_pool("int8_pool", pool_out, y);
    g.outputs = {y};

    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    auto context = rknn::api::runtime_context(ctx);
    ASSERT_TRUE(context.is_ok());
    EXPECT_EQ(context.value()->cube_requant_count(), 2u);
    for (uint32_t seed : {5u, 6u}) {
        HostTensor fed;
        std::vector<HostTensor> expected;
        ASSERT_TRUE(run_reference(g, rknn::testing::pixels(seed), &fed, &expected));
        const std::vector<uint8_t> actual = rknn::testing::run_pixels(ctx, seed, false);
        ASSERT_EQ(actual.size(), 32u);
        EXPECT_EQ(std::memcmp(actual.data(), expected[0].raw(), actual.size()), 0) << "seed " << seed;
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

TEST(ApiModels, Fp16ModelThroughTheApi) {
    graph::Graph g = rknn::testing::small_cnn();
    ASSERT_TRUE(rknn::convert::convert_to_fp16(&g).is_ok());
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    rknn_tensor_attr attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_EQ(attr.type, RKNN_TENSOR_FLOAT16);
    EXPECT_EQ(attr.qnt_type, RKNN_TENSOR_QNT_NONE);
    EXPECT_EQ(attr.size, 192u * 2u);
    attr = {};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_EQ(attr.type, RKNN_TENSOR_FLOAT16);

    std::vector<float> x(192);
    std::mt19937 rng(9);
    for (float& v : x) v = static_cast<float>(rng() % 200) / 50.0f - 2.0f;
    rknn_input in = input_of(x.data(), 192 * 4, RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output outs[2] = {};
    outs[1].want_float = 1;
    ASSERT_EQ(rknn_outputs_get(ctx, 1, &outs[0], nullptr), RKNN_SUCC);
    ASSERT_EQ(rknn_outputs_get(ctx, 1, &outs[1], nullptr), RKNN_SUCC);
    ASSERT_EQ(outs[0].size, 20u);
    ASSERT_EQ(outs[1].size, 40u);

    HostTensor fed(graph::DType::kFloat16, {1, 3, 8, 8});
    for (int i = 0; i < 192; ++i) fed.data<uint16_t>()[i] = rknn::float_to_half(x[static_cast<size_t>(i)]);
    auto exec = rknn::cpu::GraphExecutor::create(g);
    std::vector<HostTensor> expected;
    ASSERT_TRUE(exec.value()->run({fed}, &expected).is_ok());
    for (int i = 0; i < 10; ++i) {
        const float raw = rknn::half_to_float(static_cast<const uint16_t*>(outs[0].buf)[i]);
        EXPECT_EQ(static_cast<const float*>(outs[1].buf)[i], raw) << i;
        const float want = rknn::half_to_float(expected[0].data<uint16_t>()[i]);
        EXPECT_NEAR(raw, want, 1e-2f + 1e-2f * std::fabs(want)) << i;
    }
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &outs[0]), RKNN_SUCC);
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &outs[1]), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// A channel Split read in place: conv -> Split (16, 16, 8) -> a conv on
// each of the first two, the third a graph output itself. The Split has no
// task (PERF_DETAIL lists it on the NPU with no time of its own) and the
// outputs equal the int8 reference.
TEST(ApiModels, ChannelSplitIsReadInPlace) {
    graph::Graph g;
    const int32_t x = rknn::testing::add_tensor(&g, "x", graph::DType::kFloat32, {1, 3, 8, 8});
    g.inputs = {x};
    auto conv = [&g](int32_t in, int c_in, int c_out, const std::string& name) {
        const int32_t y = rknn::testing::add_tensor(&g, name, graph::DType::kFloat32, {1, c_out, 8, 8});
        graph::Op op{graph::OpType::kConv, name, "", {in, rknn::testing::random_constant(&g, name + ".w", {c_out, c_in, 3, 3}, 11u + static_cast<uint32_t>(c_out)),
                     rknn::testing::random_constant(&g, name + ".b", {c_out}, 5)}, {y}, {}};
        op.attrs.set_ints("pads", {1, 1, 1, 1});
        g.add_op(op);
        return y;
    };
    const int32_t wide = conv(x, 3, 40, "wide");
    const int32_t a = rknn::testing::add_tensor(&g, "a", graph::DType::kFloat32, {1, 16, 8, 8});
    const int32_t b = rknn::testing::add_tensor(&g, "b", graph::DType::kFloat32, {1, 16, 8, 8});
    const int32_t c = rknn::testing::add_tensor(&g, "c", graph::DType::kFloat32, {1, 8, 8, 8});
    graph::Op split{graph::OpType::kSplit, "split", "", {wide}, {a, b, c}, {}};
    split.attrs.set_int("axis", 1);
    split.attrs.set_ints("split", {16, 16, 8});
    g.add_op(split);
    g.outputs = {conv(a, 16, 8, "from_a"), conv(b, 16, 4, "from_b"), c};
    quantize_8x8(&g, 3, 3);
    ASSERT_EQ(g.tensors[static_cast<size_t>(a)].quant, g.tensors[static_cast<size_t>(wide)].quant);

    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    const graph::Tensor& in = g.tensors[static_cast<size_t>(x)];
    HostTensor fed = rknn::testing::random_int8({1, 3, 8, 8}, in.quant, 21);
    rknn_input input = input_of(fed.raw(), 192, RKNN_TENSOR_INT8, RKNN_TENSOR_NCHW);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &input), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output outs[3] = {};
    ASSERT_EQ(rknn_outputs_get(ctx, 3, outs, nullptr), RKNN_SUCC);
    auto exec = rknn::cpu::GraphExecutor::create(g);
    std::vector<HostTensor> expected;
    ASSERT_TRUE(exec.value()->run({fed}, &expected).is_ok());
    for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(outs[k].size, expected[static_cast<size_t>(k)].byte_size()) << k;
        EXPECT_EQ(std::memcmp(outs[k].buf, expected[static_cast<size_t>(k)].raw(), outs[k].size), 0) << "output " << k;
    }
    EXPECT_EQ(rknn_outputs_release(ctx, 3, outs), RKNN_SUCC);
    rknn_perf_detail detail{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
    const std::string table(detail.perf_data, detail.data_len);
    const size_t row = table.find("Split");
    ASSERT_NE(row, std::string::npos) << table;
    const std::string line = table.substr(row, table.find('\n', row) - row);
    EXPECT_NE(line.find("NPU"), std::string::npos) << line;
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// In-place channel Split and Concat on RK3568, whose parts start on 32
// channels there, in 7 x 7 maps (surfaces padded to 52 pixels): conv (48) ->
// Split (32, 16); a conv on the first and a depthwise conv on the second
// (its 32-channel group writes past the 48 channels, into the room the
// Concat's cube keeps) are joined by a Concat (48) that a conv reads. A
// Split (16, 32) needs a copy there (on RK3588 it does not).
TEST(ApiModels, InPlaceSplitAndConcatOnRk3568) {
    const rknn::testing::MockSoc mock("rk3568");
    graph::Graph g;
    const int32_t x = rknn::testing::add_tensor(&g, "x", graph::DType::kFloat32, {1, 3, 8, 8});
    g.inputs = {x};
    // 3x3 convolutions keep the 7 x 7 maps; the first, 2x2 and unpadded, makes them.
    auto conv = [&g](int32_t in, int c_in, int c_out, int group, const std::string& name) {
        const bool first = c_in == 3;
        const int64_t k = first ? 2 : 3;
        const int32_t y = rknn::testing::add_tensor(&g, name, graph::DType::kFloat32, {1, c_out, 7, 7});
        const auto seed = static_cast<uint32_t>(31 + c_out + group);
        graph::Op op{graph::OpType::kConv, name, "",
                     {in, rknn::testing::random_constant(&g, name + ".w", {c_out, c_in / group, k, k}, seed),
                      rknn::testing::random_constant(&g, name + ".b", {c_out}, seed + 1)},
                     {y}, {}};
        op.attrs.set_ints("pads", first ? std::vector<int64_t>{0, 0, 0, 0} : std::vector<int64_t>{1, 1, 1, 1});
        op.attrs.set_int("group", group);
        g.add_op(op);
        return y;
    };
    const int32_t wide = conv(x, 3, 48, 1, "wide");
    const int32_t a = rknn::testing::add_tensor(&g, "a", graph::DType::kFloat32, {1, 32, 7, 7});
    const int32_t b = rknn::testing::add_tensor(&g, "b", graph::DType::kFloat32, {1, 16, 7, 7});
    graph::Op split{graph::OpType::kSplit, "split", "", {wide}, {a, b}, {}};
    split.attrs.set_int("axis", 1);
    split.attrs.set_ints("split", {32, 16});
    g.add_op(split);
    const int32_t narrow = conv(a, 32, 32, 1, "narrow");
    const int32_t depthwise = conv(b, 16, 16, 16, "depthwise");
    const int32_t joined = rknn::testing::add_tensor(&g, "joined", graph::DType::kFloat32, {1, 48, 7, 7});
    graph::Op concat{graph::OpType::kConcat, "concat", "", {narrow, depthwise}, {joined}, {}};
    concat.attrs.set_int("axis", 1);
    g.add_op(concat);
    g.outputs = {conv(joined, 48, 8, 1, "after"), depthwise};
    quantize_8x8(&g, 4, 3);
    g.target_soc = "rk3568";
    const rknn::hw::SocProfile& rk3568 = *rknn::hw::find_soc("rk3568");
    EXPECT_EQ(rknn::npu::place_op(g, g.ops[1], rk3568).target, rknn::npu::Target::kNpu);
    graph::Graph swapped = g;
    swapped.ops[1].attrs.set_ints("split", {16, 32});
    const auto& parts = swapped.ops[1].outputs;
    swapped.tensors[static_cast<size_t>(parts[0])].shape = {1, 16, 7, 7};
    swapped.tensors[static_cast<size_t>(parts[1])].shape = {1, 32, 7, 7};
    const rknn::npu::Placement copy = rknn::npu::place_op(swapped, swapped.ops[1], rk3568);
    EXPECT_EQ(copy.target, rknn::npu::Target::kCpu);
    EXPECT_NE(copy.reason.find("inside a group of 32"), std::string::npos) << copy.reason;
    EXPECT_EQ(rknn::npu::place_op(swapped, swapped.ops[1], *rknn::hw::find_soc("rk3588")).target, rknn::npu::Target::kNpu)
        << "16-channel atoms on RK3588";

    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    const graph::Tensor& in = g.tensors[static_cast<size_t>(x)];
    auto exec = rknn::cpu::GraphExecutor::create(g);
    ASSERT_TRUE(exec.is_ok());
    for (uint32_t seed : {41u, 42u}) {
        HostTensor fed = rknn::testing::random_int8({1, 3, 8, 8}, in.quant, seed);
        rknn_input input = input_of(fed.raw(), 192, RKNN_TENSOR_INT8, RKNN_TENSOR_NCHW);
        ASSERT_EQ(rknn_inputs_set(ctx, 1, &input), RKNN_SUCC);
        ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
        rknn_output outs[2] = {};
        ASSERT_EQ(rknn_outputs_get(ctx, 2, outs, nullptr), RKNN_SUCC);
        std::vector<HostTensor> expected;
        ASSERT_TRUE(exec.value()->run({fed}, &expected).is_ok());
        for (int k = 0; k < 2; ++k) {
            ASSERT_EQ(outs[k].size, expected[static_cast<size_t>(k)].byte_size()) << k;
            EXPECT_EQ(std::memcmp(outs[k].buf, expected[static_cast<size_t>(k)].raw(), outs[k].size), 0)
                << "output " << k << ", seed " << seed;
        }
        EXPECT_EQ(rknn_outputs_release(ctx, 2, outs), RKNN_SUCC);
    }
    rknn_perf_detail detail{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
    const std::string table(detail.perf_data, detail.data_len);
    for (const char* op : {"Split", "Concat"}) {
        const size_t row = table.find(op);
        ASSERT_NE(row, std::string::npos) << op << "\n" << table;
        const std::string line = table.substr(row, table.find('\n', row) - row);
        EXPECT_NE(line.find("NPU"), std::string::npos) << line;
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// Cache maintenance by ranges keeps bytes the CPU did not write: a CPU step
// (two Reshapes) writes the first part of an in-place Concat of 3 x 3 maps,
// 144 bytes, so its last cache line also holds the start of the second
// part, which the NPU wrote in the segment before. The line must be made
// current before the CPU writes its part, or the flush writes stale bytes
// over the NPU's. The outputs equal the int8 reference.
TEST(ApiModels, CpuWrittenConcatPartKeepsItsNeighbour) {
    graph::Graph g;
    const int32_t x = rknn::testing::add_tensor(&g, "x", graph::DType::kFloat32, {1, 3, 8, 8});
    g.inputs = {x};
    auto conv = [&g](int32_t in, int c_in, int c_out, int64_t k, int64_t stride, int64_t pad, const std::string& name) {
        const int32_t y = rknn::testing::add_tensor(&g, name, graph::DType::kFloat32, {1, c_out, 3, 3});
        const auto seed = static_cast<uint32_t>(51 + c_out + k);
        graph::Op op{graph::OpType::kConv, name, "",
                     {in, rknn::testing::random_constant(&g, name + ".w", {c_out, c_in, k, k}, seed),
                      rknn::testing::random_constant(&g, name + ".b", {c_out}, seed + 1)},
                     {y}, {}};
        op.attrs.set_ints("strides", {stride, stride});
        op.attrs.set_ints("pads", {pad, pad, pad, pad});
        g.add_op(op);
        return y;
    };
    auto reshape = [&g](int32_t in, const std::vector<int64_t>& shape, const std::string& name) {
        const int32_t target = g.add_constant(name + ".shape", graph::DType::kInt64, {static_cast<int64_t>(shape.size())},
                                              graph::Buffer::copy_of(shape.data(), shape.size() * sizeof(int64_t)));
        const int32_t y = rknn::testing::add_tensor(&g, name, graph::DType::kFloat32, shape);
        g.add_op({graph::OpType::kReshape, name, "", {in, target}, {y}, {}});
        return y;
    };
    const int32_t from_npu = conv(x, 3, 16, 2, 3, 0, "from_npu");  // 8 x 8 -> 3 x 3
    const int32_t b0 = conv(x, 3, 16, 2, 3, 0, "b0");
    const int32_t from_cpu = reshape(reshape(b0, {1, 144}, "flat"), {1, 16, 3, 3}, "from_cpu");
    const int32_t joined = rknn::testing::add_tensor(&g, "joined", graph::DType::kFloat32, {1, 32, 3, 3});
    graph::Op concat{graph::OpType::kConcat, "concat", "", {from_cpu, from_npu}, {joined}, {}};
    concat.attrs.set_int("axis", 1);
    g.add_op(concat);
    g.outputs = {conv(joined, 32, 8, 3, 1, 1, "after")};
    quantize_8x8(&g, 5, 3);

    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    rknn_perf_detail detail{};
    const graph::Tensor& in = g.tensors[static_cast<size_t>(x)];
    auto exec = rknn::cpu::GraphExecutor::create(g);
    ASSERT_TRUE(exec.is_ok());
    for (uint32_t seed : {61u, 62u, 63u}) {
        HostTensor fed = rknn::testing::random_int8({1, 3, 8, 8}, in.quant, seed);
        rknn_input input = input_of(fed.raw(), 192, RKNN_TENSOR_INT8, RKNN_TENSOR_NCHW);
        ASSERT_EQ(rknn_inputs_set(ctx, 1, &input), RKNN_SUCC);
        ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
        rknn_output out{};
        ASSERT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
        std::vector<HostTensor> expected;
        ASSERT_TRUE(exec.value()->run({fed}, &expected).is_ok());
        ASSERT_EQ(out.size, expected[0].byte_size());
        EXPECT_EQ(std::memcmp(out.buf, expected[0].raw(), out.size), 0) << "seed " << seed;
        EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    }
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), RKNN_SUCC);
    const std::string table(detail.perf_data, detail.data_len);
    const size_t row = table.find("Concat");
    ASSERT_NE(row, std::string::npos) << table;
    EXPECT_NE(table.substr(row, table.find('\n', row) - row).find("NPU"), std::string::npos) << "in place";
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// Calibrates `g` on its one float input `x` (min-max) and quantises it to int8.
bool quantize_on(graph::Graph* g, const HostTensor& x) {
    rknn::convert::CalibrationOptions min_max;
    min_max.progress = false;
    auto calibration = rknn::convert::calibrate(*g, {{x}}, min_max);
    return calibration.is_ok() && rknn::convert::quantize_int8(g, calibration.value().ranges, {}).is_ok();
}

// The int8 reference's outputs for float input `x` (empty on failure).
std::vector<HostTensor> int8_reference(const graph::Graph& g, const HostTensor& x) {
    const graph::Tensor& input = g.tensors[static_cast<size_t>(g.inputs[0])];
    HostTensor fed = rknn::cpu::make_tensor_like(input, input.shape);
    auto exec = rknn::cpu::GraphExecutor::create(g);
    std::vector<HostTensor> outputs;
    if (!rknn::cpu::from_float32(x, &fed).is_ok() || !exec.is_ok() || !exec.value()->run({fed}, &outputs).is_ok())
        return {};
    return outputs;
}

// A matrix of several rows through the API: an [M, K] input is packed into
// M one-pixel rows of the NPU's cube and the [M, N] output comes back in
// row-major order (UNDEFINED layout, FLOAT32 values).
TEST(ApiModels, MultiRowGemmThroughTheApi) {
    graph::Graph g;
    const int32_t a = rknn::testing::add_tensor(&g, "a", graph::DType::kFloat32, {5, 16});
    g.inputs = {a};
    const int32_t w = rknn::testing::random_constant(&g, "w", {8, 16}, 21);
    const int32_t b = rknn::testing::random_constant(&g, "b", {8}, 22);
    const int32_t y = rknn::testing::add_tensor(&g, "y", graph::DType::kFloat32, {5, 8});
    graph::Op op{graph::OpType::kGemm, "fc", "", {a, w, b}, {y}, {}};
    op.attrs.set_int("transB", 1);
    g.add_op(op);
    g.outputs = {y};
    g.target_soc = "rk3588";
    std::mt19937 rng(23);
    HostTensor x(graph::DType::kFloat32, {5, 16});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng() % 200) / 50.0f - 2.0f;
    ASSERT_TRUE(quantize_on(&g, x));
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    rknn_input in = input_of(x.raw(), static_cast<uint32_t>(x.byte_size()), RKNN_TENSOR_FLOAT32,
                                   RKNN_TENSOR_UNDEFINED);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output out{};
    ASSERT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
    ASSERT_EQ(out.size, 40u);

    const std::vector<HostTensor> expected = int8_reference(g, x);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(std::memcmp(out.buf, expected[0].raw(), 40), 0);
    rknn_tensor_attr attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_EQ(attr.fmt, RKNN_TENSOR_NC1HWC2);
    EXPECT_EQ(std::vector<uint32_t>(attr.dims, attr.dims + 5), (std::vector<uint32_t>{1, 1, 5, 1, 16}));
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// The batch-of-one form sequence models export ([1, M, K] x [K, N], as in
// PP-OCR rec's neck): on the NPU as the same M one-pixel rows, its Reshape to
// [M, N] an alias of the same cube, and the int8 bytes of the reference.
TEST(ApiModels, BatchOfOneMatMulRunsOnTheNpu) {
    graph::Graph g;
    const int32_t a = rknn::testing::add_tensor(&g, "a", graph::DType::kFloat32, {1, 6, 16});
    g.inputs = {a};
    const int32_t w = rknn::testing::random_constant(&g, "w", {16, 8}, 31);
    const int32_t y = rknn::testing::add_tensor(&g, "y", graph::DType::kFloat32, {1, 6, 8});
    g.add_op(graph::Op{graph::OpType::kMatMul, "fc", "", {a, w}, {y}, {}});
    const int32_t shape = g.add_constant("shape", graph::DType::kInt64, {2},
                                         graph::Buffer::copy_of(std::vector<int64_t>{6, 8}.data(), 16));
    const int32_t flat = rknn::testing::add_tensor(&g, "flat", graph::DType::kFloat32, {6, 8});
    g.add_op(graph::Op{graph::OpType::kReshape, "flatten", "", {y, shape}, {flat}, {}});
    g.outputs = {y, flat};
    g.target_soc = "rk3588";
    std::mt19937 rng(33);
    HostTensor x(graph::DType::kFloat32, {1, 6, 16});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng() % 200) / 50.0f - 2.0f;
    ASSERT_TRUE(quantize_on(&g, x));
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    auto context = rknn::api::runtime_context(ctx);
    ASSERT_TRUE(context.is_ok());
    EXPECT_EQ(context.value()->npu_task_op_count(), 1u) << "the MatMul on the NPU, the Reshape an alias";
    rknn_input in = input_of(x.raw(), static_cast<uint32_t>(x.byte_size()), RKNN_TENSOR_FLOAT32, RKNN_TENSOR_UNDEFINED);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    rknn_output out[2] = {};
    ASSERT_EQ(rknn_outputs_get(ctx, 2, out, nullptr), RKNN_SUCC);
    ASSERT_EQ(out[0].size, 48u);
    ASSERT_EQ(out[1].size, 48u);

    const std::vector<HostTensor> expected = int8_reference(g, x);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(std::memcmp(out[0].buf, expected[0].raw(), 48), 0);
    EXPECT_EQ(std::memcmp(out[1].buf, expected[1].raw(), 48), 0);
    rknn_tensor_attr attr{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, &attr, sizeof(attr)), RKNN_SUCC);
    EXPECT_EQ(attr.fmt, RKNN_TENSOR_NC1HWC2);
    EXPECT_EQ(std::vector<uint32_t>(attr.dims, attr.dims + 5), (std::vector<uint32_t>{1, 1, 6, 1, 16}));
    EXPECT_EQ(rknn_outputs_release(ctx, 2, out), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

TEST(ApiInit, BadModelsAreRefusedWithAClearCode) {
    rknn_context ctx = 0;
    std::vector<uint8_t> junk(256, 0x5a);
    EXPECT_EQ(rknn_init(&ctx, junk.data(), static_cast<uint32_t>(junk.size()), 0, nullptr), RKNN_ERR_MODEL_INVALID);
    EXPECT_EQ(ctx, 0u);
    char missing[] = "/nonexistent/model.rknn";
    EXPECT_NE(rknn_init(&ctx, missing, 0, 0, nullptr), RKNN_SUCC);
    EXPECT_EQ(ctx, 0u);
    graph::Graph g = quantized_cnn();
    g.target_soc = "rk3568";
    EXPECT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_ERR_TARGET_PLATFORM_UNMATCH);
}

TEST(ApiInit, ChipsThatShareAnNpuTakeEachOthersModels) {
    graph::Graph g = quantized_cnn();
    g.target_soc = "RK3588S";  // runtime-spec 10.3: 3588 and 3588S are one target
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    EXPECT_TRUE(hw::runs_models_for("rk3568", "rk3566"));
    EXPECT_TRUE(hw::runs_models_for("rk3566", "rk3568"));
    EXPECT_TRUE(hw::runs_models_for("rv1106", "rv1103"));
    EXPECT_TRUE(hw::runs_models_for("rk3588", "rk3588"));
    EXPECT_TRUE(hw::runs_models_for("rk3583", "rk3588"));
    EXPECT_FALSE(hw::runs_models_for("rk3588", "rk3576"));
    EXPECT_FALSE(hw::runs_models_for("rk3568", "rk3562"));
    EXPECT_FALSE(hw::runs_models_for("rk3588", ""));
}

TEST(ApiInit, PriorityIsRaisedUnlessDisabled) {
    errno = 0;
    const int before = getpriority(PRIO_PROCESS, 0);
    graph::Graph g = quantized_cnn();
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, &ctx), RKNN_SUCC);
    EXPECT_EQ(getpriority(PRIO_PROCESS, 0), before);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    // Without the flag: nice -19 when permitted, and init succeeds either way.
    ASSERT_EQ(init_graph(g, 0, &ctx), RKNN_SUCC);
    if (geteuid() == 0) {
        EXPECT_EQ(getpriority(PRIO_PROCESS, 0), -19);
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    (void)setpriority(PRIO_PROCESS, 0, before);
}

// RKNN_FLAG_ENABLE_SRAM on a mock RK3588 (956 KiB of NPU SRAM): the internal
// buffer takes SRAM (MEM_SIZE shows it gone from the free size, and back
// after destroy; a context without the flag reports none) and the outputs
// do not change. Where the NPU has no SRAM (RK3568) the flag is ignored.
TEST(ApiInit, SramHoldsTheInternalTensors) {
    const graph::Graph g = quantized_cnn();
    const uint32_t quiet = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY;
    const auto sram_of = [](rknn_context ctx) {
        rknn_mem_size size{};
        EXPECT_EQ(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &size, sizeof(size)), RKNN_SUCC);
        return size;
    };
    rknn_context plain = 0, sram = 0;
    ASSERT_EQ(init_graph(g, quiet, &plain), RKNN_SUCC);
    EXPECT_EQ(sram_of(plain).total_sram_size, 0u) << "SRAM is off for this context";
    ASSERT_EQ(init_graph(g, quiet | RKNN_FLAG_ENABLE_SRAM, &sram), RKNN_SUCC);
    const rknn_mem_size with = sram_of(sram);
    EXPECT_EQ(with.total_sram_size, 956u * 1024u);
    const uint32_t taken = (with.total_internal_size + 4095u) / 4096u * 4096u;  // whole 4 KiB chunks
    EXPECT_EQ(with.free_sram_size + taken, with.total_sram_size);
    for (uint32_t seed : {71u, 72u}) {
        const std::vector<uint8_t> expected = rknn::testing::run_pixels(plain, seed, false);
        EXPECT_FALSE(expected.empty());
        EXPECT_EQ(rknn::testing::run_pixels(sram, seed, false), expected) << "seed " << seed;
    }
    EXPECT_EQ(rknn_destroy(sram), RKNN_SUCC);
    ASSERT_EQ(init_graph(g, quiet | RKNN_FLAG_ENABLE_SRAM, &sram), RKNN_SUCC);
    EXPECT_EQ(sram_of(sram).free_sram_size, with.free_sram_size) << "the first context's SRAM came back";
    EXPECT_EQ(rknn_destroy(sram), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(plain), RKNN_SUCC);

    const rknn::testing::MockSoc mock("rk3568");
    graph::Graph for_rk3568 = g;
    for_rk3568.target_soc = "rk3568";
    rknn_context none = 0;
    ASSERT_EQ(init_graph(for_rk3568, quiet | RKNN_FLAG_ENABLE_SRAM, &none), RKNN_SUCC) << "ignored with a warning";
    rknn_mem_size zero{};
    ASSERT_EQ(rknn_query(none, RKNN_QUERY_MEM_SIZE, &zero, sizeof(zero)), RKNN_SUCC);
    EXPECT_EQ(zero.total_sram_size, 0u);
    EXPECT_EQ(rknn_destroy(none), RKNN_SUCC);
}

// What the runtime lacks fails with its reason in the log (only a stub's
// bare "not implemented" is said once, by the stub): here a matmul type of RK3576 not built yet.
TEST(ApiErrors, WhatTheRuntimeLacksIsLoggedWithItsReason) {
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.M = 4;
    info.K = 64;
    info.N = 32;
    info.type = RKNN_FLOAT16_MM_INT8_TO_FLOAT32;  // RK3576 lists it; its B layout is not built
    const rknn::testing::MockSoc mock("rk3576");
    rknn_matmul_io_attr io_attr;
    std::memset(&io_attr, 0, sizeof(io_attr));
    rknn_matmul_ctx ctx = 1;
    std::vector<std::string> lines;
    rknn::log::set_level(rknn::log::kDefaultLevel);
    rknn::log::set_sink([&lines](const std::string& line) { lines.push_back(line); });
    const int status = rknn_matmul_create(&ctx, &info, &io_attr);
    rknn::log::set_sink(nullptr);
    EXPECT_EQ(status, RKNN_ERR_FAIL);
    EXPECT_EQ(ctx, 0u);
    bool named = false;
    for (const std::string& line : lines)
        named = named || (line.find("rknn_matmul_create") != std::string::npos &&
                          line.find("not implemented") != std::string::npos);
    EXPECT_TRUE(named) << "no log line gives the reason";
}

}  // namespace
