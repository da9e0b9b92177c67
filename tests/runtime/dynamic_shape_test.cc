// Dynamic shapes through the exported functions (spec 6): a model with three
// shape sets, driven as the SDK's dynamic-shape demos drive it (the general
// API and the zero-copy flow), must give for every set exactly the bytes a
// static model of the same graph at that shape gives. Bad calls fail with a
// reason and leave the context usable.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "graph/shape_check.h"
#include "rknn_api.h"
#include "runtime/contract_models.h"

namespace {

namespace graph = rknn::graph;
using rknn::testing::conv_pool_model;
using rknn::testing::init_graph;
using rknn::testing::input_of;
using rknn::testing::quantized_cnn;

constexpr uint32_t kFlags = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY;

// Shape sets in the model's layout (NCHW); the graph declares the largest.
const std::vector<graph::Shape> kSets = {{1, 3, 8, 8}, {1, 3, 16, 16}, {1, 3, 8, 16}};

graph::Graph at_shape(graph::Graph g, const graph::Shape& shape) {
    g.shape_sets.clear();
    EXPECT_TRUE(graph::infer_graph_shapes(&g, {shape}).is_ok());
    return g;
}

graph::Graph dynamic_model() {
    graph::Graph g = at_shape(conv_pool_model(), kSets[1]);
    for (const graph::Shape& s : kSets) g.shape_sets.push_back({s});
    return g;
}

std::vector<uint8_t> pixels_of(const graph::Shape& nchw, uint32_t seed) {
    return rknn::testing::random_pixels(nchw, seed);
}

rknn_tensor_attr query_attr(rknn_context ctx, rknn_query_cmd cmd, uint32_t index = 0, int* status = nullptr) {
    rknn_tensor_attr attr{};
    attr.index = index;
    const int ret = rknn_query(ctx, cmd, &attr, sizeof(attr));
    if (status != nullptr) {
        *status = ret;
    } else {
        EXPECT_EQ(ret, RKNN_SUCC) << "query " << cmd;
    }
    return attr;
}

// The input attr of set `nchw` as the demos fill it: NHWC dims.
rknn_tensor_attr shape_attr(rknn_context ctx, const graph::Shape& nchw) {
    rknn_tensor_attr attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR);
    rknn::testing::set_nhwc_dims(nchw, &attr);
    return attr;
}

// The general API: pixels in, output 0 out (int8 codes or float32).
std::vector<uint8_t> run_general(rknn_context ctx, const std::vector<uint8_t>& pixels, bool want_float) {
    return rknn::testing::run_image(ctx, pixels, want_float);
}

void expect_same_attr(const rknn_tensor_attr& a, const rknn_tensor_attr& b, const char* what) {
    EXPECT_EQ(a.n_dims, b.n_dims) << what;
    for (uint32_t d = 0; d < a.n_dims && d < RKNN_MAX_DIMS; ++d) EXPECT_EQ(a.dims[d], b.dims[d]) << what << " dim " << d;
    EXPECT_EQ(a.fmt, b.fmt) << what;
    EXPECT_EQ(a.type, b.type) << what;
    EXPECT_EQ(a.n_elems, b.n_elems) << what;
    EXPECT_EQ(a.size, b.size) << what;
    EXPECT_EQ(a.size_with_stride, b.size_with_stride) << what;
    EXPECT_EQ(a.w_stride, b.w_stride) << what;
}

class DynamicShapes : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(init_graph(dynamic_model(), kFlags, &ctx_), RKNN_SUCC);
        for (const graph::Shape& s : kSets) {
            rknn_context ctx = 0;
            ASSERT_EQ(init_graph(at_shape(conv_pool_model(), s), kFlags, &ctx), RKNN_SUCC);
            static_.push_back(ctx);
        }
    }
    void TearDown() override {
        for (rknn_tensor_mem* m : mems_) EXPECT_EQ(rknn_destroy_mem(ctx_, m), RKNN_SUCC);
        if (ctx_ != 0) {
            EXPECT_EQ(rknn_destroy(ctx_), RKNN_SUCC);
        }
        for (rknn_context c : static_) EXPECT_EQ(rknn_destroy(c), RKNN_SUCC);
    }
    int set_shape(size_t k) {
        rknn_tensor_attr attr = shape_attr(ctx_, kSets[k]);
        return rknn_set_input_shapes(ctx_, 1, &attr);
    }
    rknn_context ctx_ = 0;
    std::vector<rknn_context> static_;  // one static model per set
    std::vector<rknn_tensor_mem*> mems_;
};

TEST_F(DynamicShapes, RangeQueryListsTheSetsInNhwc) {
    rknn_input_range range{};
    range.index = 0;
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)), RKNN_SUCC);
    EXPECT_EQ(range.index, 0u);
    EXPECT_EQ(range.shape_number, kSets.size());
    EXPECT_EQ(range.fmt, RKNN_TENSOR_NHWC);
    EXPECT_EQ(range.n_dims, 4u);
    EXPECT_GT(std::strlen(range.name), 0u);
    for (size_t k = 0; k < kSets.size(); ++k) {
        EXPECT_EQ(range.dyn_range[k][0], 1u);
        EXPECT_EQ(range.dyn_range[k][1], kSets[k][2]);
        EXPECT_EQ(range.dyn_range[k][2], kSets[k][3]);
        EXPECT_EQ(range.dyn_range[k][3], kSets[k][1]);
    }
    range.index = 1;
    EXPECT_NE(rknn_query(ctx_, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)), RKNN_SUCC);
    // A static model has no range, nor current native attrs.
    range.index = 0;
    EXPECT_NE(rknn_query(static_[0], RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)), RKNN_SUCC);
    int status = 0;
    query_attr(static_[0], RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR, 0, &status);
    EXPECT_NE(status, RKNN_SUCC);
}

TEST_F(DynamicShapes, ModelAttrsAreTheLargestSetsAndCurrentOnesFollowTheChoice) {
    expect_same_attr(query_attr(ctx_, RKNN_QUERY_INPUT_ATTR), query_attr(static_[1], RKNN_QUERY_INPUT_ATTR), "input");
    expect_same_attr(query_attr(ctx_, RKNN_QUERY_OUTPUT_ATTR), query_attr(static_[1], RKNN_QUERY_OUTPUT_ATTR), "output");
    int status = 0;
    query_attr(ctx_, RKNN_QUERY_CURRENT_INPUT_ATTR, 0, &status);
    EXPECT_NE(status, RKNN_SUCC) << "CURRENT_INPUT_ATTR before rknn_set_input_shapes";
    query_attr(ctx_, RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR, 0, &status);
    EXPECT_NE(status, RKNN_SUCC) << "NATIVE_NHWC_OUTPUT_ATTR of a dynamic model";
    for (size_t k : {0, 2, 1}) {
        ASSERT_EQ(set_shape(k), RKNN_SUCC);
        const struct {
            rknn_query_cmd dynamic, fixed;
        } pairs[] = {{RKNN_QUERY_CURRENT_INPUT_ATTR, RKNN_QUERY_INPUT_ATTR},
                     {RKNN_QUERY_CURRENT_OUTPUT_ATTR, RKNN_QUERY_OUTPUT_ATTR},
                     {RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR, RKNN_QUERY_NATIVE_INPUT_ATTR},
                     {RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR, RKNN_QUERY_NATIVE_OUTPUT_ATTR}};
        for (const auto& p : pairs)
            expect_same_attr(query_attr(ctx_, p.dynamic), query_attr(static_[k], p.fixed),
                             ("set " + std::to_string(k) + " query " + std::to_string(p.dynamic)).c_str());
    }
}

// The SDK's normal-API flow: set the shapes, set inputs of that size, run.
TEST_F(DynamicShapes, EverySetGivesTheStaticModelsBytes) {
    uint32_t seed = 1;
    for (size_t k : {0, 1, 2, 1, 0, 2, 2}) {
        ASSERT_EQ(set_shape(k), RKNN_SUCC);
        const std::vector<uint8_t> pixels = pixels_of(kSets[k], seed++);
        for (bool want_float : {false, true}) {
            const std::vector<uint8_t> got = run_general(ctx_, pixels, want_float);
            const std::vector<uint8_t> expected = run_general(static_[k], pixels, want_float);
            ASSERT_FALSE(expected.empty());
            EXPECT_EQ(got, expected) << "set " << k << (want_float ? " float" : " int8");
        }
    }
}

// The SDK's zero-copy flow: buffers of the largest size, bound again with
// the current attrs after every switch.
TEST_F(DynamicShapes, ZeroCopyFlowRebindsPerSet) {
    rknn_tensor_attr max_in = query_attr(ctx_, RKNN_QUERY_INPUT_ATTR);
    rknn_tensor_attr max_out = query_attr(ctx_, RKNN_QUERY_OUTPUT_ATTR);
    rknn_tensor_mem* in_mem = rknn_create_mem(ctx_, max_in.n_elems);  // uint8 pixels
    rknn_tensor_mem* out_mem = rknn_create_mem(ctx_, max_out.n_elems * sizeof(float));
    ASSERT_NE(in_mem, nullptr);
    ASSERT_NE(out_mem, nullptr);
    mems_ = {in_mem, out_mem};
    uint32_t seed = 10;
    for (size_t k : {2, 0, 1, 0}) {
        ASSERT_EQ(set_shape(k), RKNN_SUCC);
        rknn_tensor_attr out_attr{};
        ASSERT_TRUE(rknn::testing::bind_current_io(ctx_, in_mem, out_mem, &out_attr));
        const std::vector<uint8_t> pixels = pixels_of(kSets[k], seed++);
        std::memcpy(in_mem->virt_addr, pixels.data(), pixels.size());
        ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
        const std::vector<uint8_t> expected = run_general(static_[k], pixels, true);
        ASSERT_EQ(expected.size(), out_attr.n_elems * sizeof(float));
        EXPECT_EQ(std::memcmp(out_mem->virt_addr, expected.data(), expected.size()), 0) << "set " << k;
    }
}

TEST_F(DynamicShapes, SameShapeAgainKeepsTheBindings) {
    ASSERT_EQ(set_shape(0), RKNN_SUCC);
    rknn_tensor_attr in_attr = query_attr(ctx_, RKNN_QUERY_CURRENT_INPUT_ATTR);
    rknn_tensor_mem* in_mem = rknn_create_mem(ctx_, in_attr.n_elems);
    ASSERT_NE(in_mem, nullptr);
    mems_ = {in_mem};
    in_attr.type = RKNN_TENSOR_UINT8;
    ASSERT_EQ(rknn_set_io_mem(ctx_, in_mem, &in_attr), RKNN_SUCC);
    // Setting the same shapes again changes nothing: the input stays bound,
    // so rknn_inputs_set is refused (the APIs are not mixed).
    ASSERT_EQ(set_shape(0), RKNN_SUCC);
    std::vector<uint8_t> pixels = pixels_of(kSets[0], 3);
    rknn_input in = input_of(pixels.data(), static_cast<uint32_t>(pixels.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    EXPECT_NE(rknn_inputs_set(ctx_, 1, &in), RKNN_SUCC);
    // Another set ends the binding: the general API works again.
    ASSERT_EQ(set_shape(2), RKNN_SUCC);
    pixels = pixels_of(kSets[2], 3);
    in = input_of(pixels.data(), static_cast<uint32_t>(pixels.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    EXPECT_EQ(rknn_inputs_set(ctx_, 1, &in), RKNN_SUCC);
}

TEST_F(DynamicShapes, BadCallsFailAndTheContextStaysUsable) {
    std::vector<uint8_t> pixels = pixels_of(kSets[0], 5);
    rknn_input in = input_of(pixels.data(), static_cast<uint32_t>(pixels.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    // Before any set is chosen.
    EXPECT_NE(rknn_inputs_set(ctx_, 1, &in), RKNN_SUCC);
    EXPECT_NE(rknn_run(ctx_, nullptr), RKNN_SUCC);

    rknn_tensor_attr attr = shape_attr(ctx_, kSets[0]);
    EXPECT_EQ(rknn_set_input_shapes(ctx_, 2, &attr), RKNN_ERR_PARAM_INVALID) << "wrong count";
    rknn_tensor_attr bad = attr;
    bad.index = 1;
    EXPECT_EQ(rknn_set_input_shapes(ctx_, 1, &bad), RKNN_ERR_PARAM_INVALID) << "wrong index";
    bad = attr;
    bad.n_dims = 3;
    EXPECT_EQ(rknn_set_input_shapes(ctx_, 1, &bad), RKNN_ERR_INPUT_INVALID) << "wrong rank";
    bad = attr;
    bad.fmt = RKNN_TENSOR_NCHW;
    EXPECT_EQ(rknn_set_input_shapes(ctx_, 1, &bad), RKNN_ERR_INPUT_INVALID) << "NCHW fmt";
    bad = attr;
    bad.dims[1] = 12;
    EXPECT_EQ(rknn_set_input_shapes(ctx_, 1, &bad), RKNN_ERR_INPUT_INVALID) << "not a set";
    bad = shape_attr(ctx_, kSets[2]);
    std::swap(bad.dims[1], bad.dims[2]);  // [1, 16, 8, 3]: H and W of set 2 swapped
    EXPECT_EQ(rknn_set_input_shapes(ctx_, 1, &bad), RKNN_ERR_INPUT_INVALID) << "transposed set";
    EXPECT_NE(rknn_set_input_shapes(ctx_, 1, nullptr), RKNN_SUCC);
    EXPECT_NE(rknn_set_input_shapes(ctx_, 0, &attr), RKNN_SUCC);

    // After a switch, data of the previous shape's size is refused.
    ASSERT_EQ(rknn_set_input_shapes(ctx_, 1, &attr), RKNN_SUCC);
    ASSERT_EQ(set_shape(1), RKNN_SUCC);
    EXPECT_NE(rknn_inputs_set(ctx_, 1, &in), RKNN_SUCC) << "8x8 pixels for the 16x16 set";

    // A buffer too small for the current shape is refused.
    rknn_tensor_attr in_attr = query_attr(ctx_, RKNN_QUERY_CURRENT_INPUT_ATTR);
    in_attr.type = RKNN_TENSOR_UINT8;
    rknn_tensor_mem* small = rknn_create_mem(ctx_, 8 * 8 * 3);
    ASSERT_NE(small, nullptr);
    mems_ = {small};
    EXPECT_NE(rknn_set_io_mem(ctx_, small, &in_attr), RKNN_SUCC);

    // No duplicate of a dynamic model.
    rknn_context copy = 0;
    EXPECT_NE(rknn_dup_context(&ctx_, &copy), RKNN_SUCC);

    // Still usable: the 16x16 set runs and matches its static model.
    const std::vector<uint8_t> p16 = pixels_of(kSets[1], 6);
    EXPECT_EQ(run_general(ctx_, p16, false), run_general(static_[1], p16, false));
}

TEST_F(DynamicShapes, StaticModelRefusesShapeChanges) {
    rknn_tensor_attr attr = shape_attr(static_[0], kSets[0]);
    EXPECT_NE(rknn_set_input_shapes(static_[0], 1, &attr), RKNN_SUCC);
    // It still runs.
    EXPECT_FALSE(run_general(static_[0], pixels_of(kSets[0], 1), false).empty());
}

TEST_F(DynamicShapes, DeprecatedSingleInputCallSelectsASet) {
    rknn_tensor_attr attr = shape_attr(ctx_, kSets[2]);
    ASSERT_EQ(rknn_set_input_shape(ctx_, &attr), RKNN_SUCC);
    const std::vector<uint8_t> pixels = pixels_of(kSets[2], 9);
    EXPECT_EQ(run_general(ctx_, pixels, false), run_general(static_[2], pixels, false));
}

TEST_F(DynamicShapes, MemoryIsTheLargestSetsWithWeightsStoredOnce) {
    rknn_mem_size dynamic{}, largest{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_MEM_SIZE, &dynamic, sizeof(dynamic)), RKNN_SUCC);
    ASSERT_EQ(rknn_query(static_[1], RKNN_QUERY_MEM_SIZE, &largest, sizeof(largest)), RKNN_SUCC);
    EXPECT_EQ(dynamic.total_weight_size, largest.total_weight_size);
    EXPECT_EQ(dynamic.total_internal_size, largest.total_internal_size);
    // The regcmd streams of every set come on top (the benchmark reports the totals).
}

// A graph that cannot take a set (a Reshape to a fixed shape) is refused at
// rknn_init with a reason, not run wrong.
TEST(DynamicShapeModels, SetTheGraphCannotTakeIsRefusedAtInit) {
    graph::Graph g = quantized_cnn();  // Conv -> Relu -> MaxPool -> Reshape [1, N] -> Gemm at 8x8
    g.shape_sets = {{{1, 3, 8, 8}}, {{1, 3, 16, 16}}};
    rknn_context ctx = 0;
    EXPECT_NE(init_graph(g, kFlags, &ctx), RKNN_SUCC);
    EXPECT_EQ(ctx, 0u);
}

}  // namespace

namespace {

// A core mask applies to every set's programs (layers split over the cores).
TEST_F(DynamicShapes, CoreMasksApplyToEverySet) {
    ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_0_1_2), RKNN_SUCC);
    uint32_t seed = 20;
    for (size_t k : {1, 0, 2}) {
        ASSERT_EQ(set_shape(k), RKNN_SUCC);
        const std::vector<uint8_t> pixels = pixels_of(kSets[k], seed++);
        EXPECT_EQ(run_general(ctx_, pixels, false), run_general(static_[k], pixels, false)) << "set " << k;
    }
}

// After a switch, rknn_outputs_get waits for a run of the new set.
TEST_F(DynamicShapes, OutputsOfAnotherSetAreNotHandedOut) {
    ASSERT_EQ(set_shape(0), RKNN_SUCC);
    ASSERT_FALSE(run_general(ctx_, pixels_of(kSets[0], 40), false).empty());
    ASSERT_EQ(set_shape(1), RKNN_SUCC);
    rknn_output out{};
    EXPECT_NE(rknn_outputs_get(ctx_, 1, &out, nullptr), RKNN_SUCC);
    EXPECT_EQ(out.buf, nullptr);
    const std::vector<uint8_t> pixels = pixels_of(kSets[1], 41);
    EXPECT_EQ(run_general(ctx_, pixels, false), run_general(static_[1], pixels, false));
}

// Internal memory from the client, sized by MEM_SIZE: the largest set's.
TEST(DynamicShapeModels, ClientInternalMemoryServesEverySet) {
    rknn_context ctx = 0, reference = 0;
    ASSERT_EQ(init_graph(dynamic_model(), kFlags | RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE, &ctx), RKNN_SUCC);
    ASSERT_EQ(init_graph(dynamic_model(), kFlags, &reference), RKNN_SUCC);
    rknn_mem_size size{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &size, sizeof(size)), RKNN_SUCC);
    rknn_tensor_mem* internal = rknn_create_mem(ctx, size.total_internal_size);
    ASSERT_NE(internal, nullptr);
    ASSERT_EQ(rknn_set_internal_mem(ctx, internal), RKNN_SUCC);
    uint32_t seed = 30;
    for (size_t k : {0, 1, 2}) {
        for (rknn_context c : {ctx, reference}) {
            rknn_tensor_attr attr = shape_attr(c, kSets[k]);
            ASSERT_EQ(rknn_set_input_shapes(c, 1, &attr), RKNN_SUCC);
        }
        const std::vector<uint8_t> pixels = pixels_of(kSets[k], seed++);
        EXPECT_EQ(run_general(ctx, pixels, false), run_general(reference, pixels, false)) << "set " << k;
    }
    EXPECT_EQ(rknn_destroy_mem(ctx, internal), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(reference), RKNN_SUCC);
}

// A quantised graph stores element types inference does not derive: the
// converter's DequantizeLinear into float16 layers is float16 (inference
// says float32). Every set keeps the stored types.
TEST(DynamicShapeModels, EverySetKeepsTheStoredElementTypes) {
    graph::Graph g = conv_pool_model();
    const int32_t pooled = g.outputs[0];
    graph::Tensor wide = g.tensors[static_cast<size_t>(pooled)];
    wide.name = "pooled_fp16";
    wide.dtype = graph::DType::kFloat16;
    wide.quant = graph::QuantParams();
    const int32_t out = g.add_tensor(wide);
    const float scale = g.tensors[static_cast<size_t>(pooled)].quant.scale();
    const int8_t zero_point = static_cast<int8_t>(g.tensors[static_cast<size_t>(pooled)].quant.zero_point());
    const int32_t s = g.add_constant("dq_scale", graph::DType::kFloat32, {}, graph::Buffer::copy_of(&scale, 4));
    const int32_t z = g.add_constant("dq_zero_point", graph::DType::kInt8, {}, graph::Buffer::copy_of(&zero_point, 1));
    g.add_op({graph::OpType::kDequantizeLinear, "dq", "", {pooled, s, z}, {out}, {}});
    g.outputs = {out};
    ASSERT_TRUE(graph::reinfer_graph_shapes(&g, {kSets[1]}).is_ok());
    for (const graph::Shape& set : kSets) g.shape_sets.push_back({set});
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(g, kFlags, &ctx), RKNN_SUCC);
    for (size_t k = 0; k < kSets.size(); ++k) {
        rknn_tensor_attr attr = shape_attr(ctx, kSets[k]);
        ASSERT_EQ(rknn_set_input_shapes(ctx, 1, &attr), RKNN_SUCC);
        const rknn_tensor_attr current = query_attr(ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR);
        EXPECT_EQ(current.type, RKNN_TENSOR_FLOAT16) << "set " << k;
        EXPECT_EQ(current.size, current.n_elems * 2) << "set " << k;
        // And it runs as the stored graph does at that shape.
        graph::Graph fixed = g;
        fixed.shape_sets.clear();
        ASSERT_TRUE(graph::reinfer_graph_shapes(&fixed, {kSets[k]}).is_ok());
        rknn_context reference = 0;
        ASSERT_EQ(init_graph(fixed, kFlags, &reference), RKNN_SUCC);
        const std::vector<uint8_t> pixels = pixels_of(kSets[k], 50 + static_cast<uint32_t>(k));
        EXPECT_EQ(run_general(ctx, pixels, false), run_general(reference, pixels, false)) << "set " << k;
        EXPECT_EQ(rknn_destroy(reference), RKNN_SUCC);
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// All memory from the client (RKNN_FLAG_MEM_ALLOC_OUTSIDE), sized by
// MEM_SIZE: every set stages its inputs and outputs at the same offsets of
// the internal memory, and runs as a context with its own memory does.
TEST(DynamicShapeModels, AllMemoryFromTheClientServesEverySet) {
    rknn_context ctx = 0, reference = 0;
    ASSERT_EQ(init_graph(dynamic_model(), kFlags | RKNN_FLAG_MEM_ALLOC_OUTSIDE, &ctx), RKNN_SUCC);
    ASSERT_EQ(init_graph(dynamic_model(), kFlags, &reference), RKNN_SUCC);
    rknn_tensor_mem *weights = nullptr, *internal = nullptr;
    ASSERT_TRUE(rknn::testing::give_all_memory(ctx, &weights, &internal));
    uint32_t seed = 70;
    for (size_t k : {0, 1, 2, 1, 0}) {
        for (rknn_context c : {ctx, reference}) {
            rknn_tensor_attr attr = shape_attr(c, kSets[k]);
            ASSERT_EQ(rknn_set_input_shapes(c, 1, &attr), RKNN_SUCC);
        }
        const std::vector<uint8_t> pixels = pixels_of(kSets[k], seed++);
        for (bool want_float : {false, true})
            EXPECT_EQ(run_general(ctx, pixels, want_float), run_general(reference, pixels, want_float)) << "set " << k;
    }
    EXPECT_EQ(rknn_destroy_mem(ctx, weights), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx, internal), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(reference), RKNN_SUCC);
}

}  // namespace
