// Any shape inside a dynamic model's input ranges (rknn_convert
// --dynamic-range), beyond its shape sets: rknn_set_input_shapes compiles a
// plan on first use, and every such shape must give exactly the bytes of a
// static model of the same graph at that shape, through the general API, the
// zero-copy flow, other core masks and client internal memory, while plans
// are dropped and made again under a small cache bound. Shapes outside the
// ranges, off their steps, or needing more memory than the sets fail with a
// reason and leave the context usable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/npy.h"
#include "convert/onnx_test_models.h"
#include "converter.h"
#include "graph/shape_check.h"
#include "api/context_handle.h"
#include "model/model_file.h"
#include "runtime/context.h"
#include "rknn_api.h"
#include "rknn_openrknn_ext.h"
#include "runtime/contract_models.h"

namespace {

namespace graph = rknn::graph;
using rknn::testing::conv_pool_model;
using rknn::testing::init_graph;
using rknn::testing::run_image;

constexpr uint32_t kFlags = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY;

// NCHW. The sets; the range H and W 4..16 in steps of 4 holds them.
const std::vector<graph::Shape> kSets = {{1, 3, 8, 8}, {1, 3, 16, 16}};
const graph::ShapeRange kRange = {{1, 3, 4, 4}, {1, 3, 16, 16}, {1, 1, 4, 4}};
// Inside the range, not sets.
const std::vector<graph::Shape> kInRange = {{1, 3, 12, 12}, {1, 3, 4, 16}, {1, 3, 16, 8}, {1, 3, 4, 4}};

graph::Graph at_shape(graph::Graph g, const graph::Shape& shape) {
    g.shape_sets.clear();
    g.input_ranges.clear();
    EXPECT_TRUE(graph::infer_graph_shapes(&g, {shape}).is_ok());
    return g;
}

graph::Graph ranged_model(const std::vector<graph::Shape>& sets = kSets, const graph::ShapeRange& range = kRange) {
    graph::Graph g = at_shape(conv_pool_model(), sets.back());
    for (const graph::Shape& s : sets) g.shape_sets.push_back({s});
    g.input_ranges = {range};
    return g;
}

std::vector<uint8_t> pixels_of(const graph::Shape& nchw, uint32_t seed) {
    return rknn::testing::random_pixels(nchw, seed);
}

rknn_tensor_attr nhwc_attr(const graph::Shape& nchw) {
    rknn_tensor_attr attr{};
    attr.index = 0;
    rknn::testing::set_nhwc_dims(nchw, &attr);
    return attr;
}

int set_shape(rknn_context ctx, const graph::Shape& nchw) {
    rknn_tensor_attr attr = nhwc_attr(nchw);
    return rknn_set_input_shapes(ctx, 1, &attr);
}

// The int8 and the float32 output of a static model at `nchw`.
std::vector<uint8_t> static_output(const graph::Shape& nchw, const std::vector<uint8_t>& pixels, bool want_float) {
    rknn_context ctx = 0;
    EXPECT_EQ(init_graph(at_shape(conv_pool_model(), nchw), kFlags, &ctx), RKNN_SUCC);
    std::vector<uint8_t> out = run_image(ctx, pixels, want_float);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    return out;
}

// The ranged model with RKNN_DYNAMIC_SHAPE_CACHE_MB=0: no plan beyond the
// running one is kept.
int init_without_cache_room(rknn_context* ctx) {
    if (setenv("RKNN_DYNAMIC_SHAPE_CACHE_MB", "0", 1) != 0) return -1;
    const int init = init_graph(ranged_model(), kFlags, ctx);
    unsetenv("RKNN_DYNAMIC_SHAPE_CACHE_MB");
    return init;
}

class DynamicRange : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(init_graph(ranged_model(), kFlags, &ctx_), RKNN_SUCC); }
    void TearDown() override {
        for (rknn_tensor_mem* m : mems_) EXPECT_EQ(rknn_destroy_mem(ctx_, m), RKNN_SUCC);
        EXPECT_EQ(rknn_destroy(ctx_), RKNN_SUCC);
    }
    void expect_static_bytes(const graph::Shape& shape, uint32_t seed) {
        const std::vector<uint8_t> pixels = pixels_of(shape, seed);
        for (bool want_float : {false, true}) {
            const std::vector<uint8_t> expected = static_output(shape, pixels, want_float);
            ASSERT_FALSE(expected.empty());
            EXPECT_EQ(run_image(ctx_, pixels, want_float), expected)
                << graph::shape_to_string(shape) << (want_float ? " float" : " int8");
        }
    }
    rknn_context ctx_ = 0;
    std::vector<rknn_tensor_mem*> mems_;
};

TEST_F(DynamicRange, InRangeShapesGiveTheStaticModelsBytes) {
    uint32_t seed = 1;
    // New shapes, a set between them, and shapes seen before (kept plans).
    for (const graph::Shape& shape : {kInRange[0], kInRange[1], kSets[0], kInRange[2], kInRange[0], kInRange[3]}) {
        ASSERT_EQ(set_shape(ctx_, shape), RKNN_SUCC) << graph::shape_to_string(shape);
        expect_static_bytes(shape, seed++);
    }
}

TEST_F(DynamicRange, QueriesListTheSetsAndFollowTheCurrentShape) {
    rknn_input_range range{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof(range)), RKNN_SUCC);
    EXPECT_EQ(range.shape_number, kSets.size()) << "the preset sets only";
    // The extension query gives the range, NHWC.
    rknn_openrknn_shape_range ranged{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &ranged, sizeof(ranged)), RKNN_SUCC);
    ASSERT_EQ(ranged.n_dims, 4u);
    EXPECT_EQ(ranged.shape_number, kSets.size());
    EXPECT_EQ(ranged.fmt, RKNN_TENSOR_NHWC);
    const uint32_t min[] = {1, 4, 4, 3}, max[] = {1, 16, 16, 3}, step[] = {1, 4, 4, 1};
    for (int d = 0; d < 4; ++d) {
        EXPECT_EQ(ranged.min[d], min[d]) << d;
        EXPECT_EQ(ranged.max[d], max[d]) << d;
        EXPECT_EQ(ranged.step[d], step[d]) << d;
    }
    ranged.index = 1;
    EXPECT_EQ(rknn_query(ctx_, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &ranged, sizeof(ranged)), RKNN_ERR_PARAM_INVALID);
    EXPECT_NE(rknn_query(ctx_, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &ranged, sizeof(ranged) - 4), RKNN_SUCC);
    ASSERT_EQ(set_shape(ctx_, kInRange[1]), RKNN_SUCC);
    rknn_tensor_attr current{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_CURRENT_INPUT_ATTR, &current, sizeof(current)), RKNN_SUCC);
    EXPECT_EQ(current.dims[1], 4u);
    EXPECT_EQ(current.dims[2], 16u);
    rknn_tensor_attr model{};
    ASSERT_EQ(rknn_query(ctx_, RKNN_QUERY_INPUT_ATTR, &model, sizeof(model)), RKNN_SUCC);
    EXPECT_EQ(model.dims[1], 16u) << "INPUT_ATTR stays the largest set's";
}

TEST_F(DynamicRange, ShapesOutsideOrOffTheStepsAreRefused) {
    for (const graph::Shape& bad : {graph::Shape{1, 3, 20, 16}, graph::Shape{1, 3, 10, 12}, graph::Shape{1, 3, 0, 8},
                                    graph::Shape{1, 4, 8, 8}, graph::Shape{2, 3, 8, 8}})
        EXPECT_EQ(set_shape(ctx_, bad), RKNN_ERR_INPUT_INVALID) << graph::shape_to_string(bad);
    // Still usable, in range and at a set.
    ASSERT_EQ(set_shape(ctx_, kInRange[0]), RKNN_SUCC);
    expect_static_bytes(kInRange[0], 7);
    EXPECT_EQ(set_shape(ctx_, graph::Shape{1, 3, 10, 12}), RKNN_ERR_INPUT_INVALID);
    ASSERT_EQ(set_shape(ctx_, kSets[0]), RKNN_SUCC);
    expect_static_bytes(kSets[0], 8);
}

// The SDK's zero-copy flow at in-range shapes: max-size buffers, bound again
// with the current attrs after every switch.
TEST_F(DynamicRange, ZeroCopyFlowRunsInRangeShapes) {
    rknn_tensor_mem *in_mem = nullptr, *out_mem = nullptr;
    ASSERT_TRUE(rknn::testing::create_max_io_mems(ctx_, &in_mem, &out_mem));
    mems_ = {in_mem, out_mem};
    uint32_t seed = 20;
    for (const graph::Shape& shape : {kInRange[2], kInRange[0], kInRange[2]}) {
        ASSERT_EQ(set_shape(ctx_, shape), RKNN_SUCC);
        rknn_tensor_attr out_attr{};
        ASSERT_TRUE(rknn::testing::bind_current_io(ctx_, in_mem, out_mem, &out_attr));
        const std::vector<uint8_t> pixels = pixels_of(shape, seed++);
        std::memcpy(in_mem->virt_addr, pixels.data(), pixels.size());
        ASSERT_EQ(rknn_run(ctx_, nullptr), RKNN_SUCC);
        const std::vector<uint8_t> expected = static_output(shape, pixels, true);
        ASSERT_EQ(expected.size(), out_attr.n_elems * sizeof(float));
        EXPECT_EQ(std::memcmp(out_mem->virt_addr, expected.data(), expected.size()), 0) << graph::shape_to_string(shape);
    }
}

// A core mask set after a plan was made applies to it too, and one made
// after the mask is lowered for it.
TEST_F(DynamicRange, CoreMasksApplyToInRangePlans) {
    ASSERT_EQ(set_shape(ctx_, kInRange[0]), RKNN_SUCC);
    ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_0_1_2), RKNN_SUCC);
    expect_static_bytes(kInRange[0], 30);
    ASSERT_EQ(set_shape(ctx_, kInRange[2]), RKNN_SUCC);
    expect_static_bytes(kInRange[2], 31);
    ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_AUTO), RKNN_SUCC);
    expect_static_bytes(kInRange[2], 32);
}

// Relinking (core masks, client memory) keeps a plan's byte count: the
// cache does not see plans grow and drop them.
TEST_F(DynamicRange, RelinkingKeepsThePlansCounted) {
    auto context = rknn::api::runtime_context(ctx_);
    ASSERT_TRUE(context.is_ok());
    ASSERT_EQ(set_shape(ctx_, kInRange[0]), RKNN_SUCC);
    ASSERT_EQ(set_shape(ctx_, kInRange[1]), RKNN_SUCC);
    const auto before = context.value()->ranged_plan_stats();
    EXPECT_EQ(before.kept, 2u);
    EXPECT_GT(before.bytes, 0u);
    for (int round = 0; round < 3; ++round) {
        ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_0_1), RKNN_SUCC);
        ASSERT_EQ(rknn_set_core_mask(ctx_, RKNN_NPU_CORE_AUTO), RKNN_SUCC);
    }
    const auto after = context.value()->ranged_plan_stats();
    EXPECT_EQ(after.kept, 2u);
    EXPECT_EQ(after.bytes, before.bytes);
    expect_static_bytes(kInRange[1], 33);
}

// Internal memory the client gives after a plan was made: the plan's
// streams are linked again onto it.
TEST(DynamicRangeModels, ClientInternalMemoryServesInRangePlans) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(ranged_model(), kFlags | RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE, &ctx), RKNN_SUCC);
    ASSERT_EQ(set_shape(ctx, kInRange[0]), RKNN_SUCC);
    rknn_mem_size size{};
    ASSERT_EQ(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &size, sizeof(size)), RKNN_SUCC);
    rknn_tensor_mem* internal = rknn_create_mem(ctx, size.total_internal_size);
    ASSERT_NE(internal, nullptr);
    ASSERT_EQ(rknn_set_internal_mem(ctx, internal), RKNN_SUCC);
    for (const graph::Shape& shape : {kInRange[0], kInRange[1]}) {
        ASSERT_EQ(set_shape(ctx, shape), RKNN_SUCC);
        const std::vector<uint8_t> pixels = pixels_of(shape, 40);
        EXPECT_EQ(run_image(ctx, pixels, false), static_output(shape, pixels, false)) << graph::shape_to_string(shape);
    }
    EXPECT_EQ(rknn_destroy_mem(ctx, internal), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// All memory from the client: in-range plans stage their inputs and outputs
// where the sets do.
TEST(DynamicRangeModels, AllMemoryFromTheClientServesInRangePlans) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(ranged_model(), kFlags | RKNN_FLAG_MEM_ALLOC_OUTSIDE, &ctx), RKNN_SUCC);
    rknn_tensor_mem *weights = nullptr, *internal = nullptr;
    ASSERT_TRUE(rknn::testing::give_all_memory(ctx, &weights, &internal));
    uint32_t seed = 45;
    for (const graph::Shape& shape : {kInRange[0], kSets[0], kInRange[2], kInRange[0]}) {
        ASSERT_EQ(set_shape(ctx, shape), RKNN_SUCC);
        const std::vector<uint8_t> pixels = pixels_of(shape, seed++);
        for (bool want_float : {false, true})
            EXPECT_EQ(run_image(ctx, pixels, want_float), static_output(shape, pixels, want_float))
                << graph::shape_to_string(shape);
    }
    EXPECT_EQ(rknn_destroy_mem(ctx, weights), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx, internal), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// With no room kept, every other plan is dropped at each switch and made
// again when its shapes come back; the plan running is never dropped.
TEST(DynamicRangeModels, PlansDroppedUnderTheBoundAreMadeAgain) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_without_cache_room(&ctx), RKNN_SUCC);
    uint32_t seed = 50;
    for (const graph::Shape& shape : {kInRange[0], kInRange[1], kInRange[0], kSets[1], kInRange[1], kInRange[1]}) {
        ASSERT_EQ(set_shape(ctx, shape), RKNN_SUCC);
        const std::vector<uint8_t> pixels = pixels_of(shape, seed++);
        EXPECT_EQ(run_image(ctx, pixels, false), static_output(shape, pixels, false)) << graph::shape_to_string(shape);
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// A range reaching past the sets: shapes that need more memory than the
// largest set are refused; the smaller ones run.
TEST(DynamicRangeModels, ShapesNeedingMoreThanTheSetsAreRefused) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_graph(ranged_model({kSets[0]}), kFlags, &ctx), RKNN_SUCC);
    EXPECT_EQ(set_shape(ctx, kSets[1]), RKNN_ERR_INPUT_INVALID);
    ASSERT_EQ(set_shape(ctx, kInRange[3]), RKNN_SUCC);
    const std::vector<uint8_t> pixels = pixels_of(kInRange[3], 60);
    EXPECT_EQ(run_image(ctx, pixels, false), static_output(kInRange[3], pixels, false));
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// The extension query on a model with sets and no range, and on a static
// model: n_dims 0 (a program may ask any model without an error).
TEST(DynamicRangeModels, RangeQueryOfSetsOnlyAndStaticModels) {
    graph::Graph sets_only = ranged_model();
    sets_only.input_ranges.clear();
    for (const graph::Graph& g : {sets_only, at_shape(conv_pool_model(), kSets[0])}) {
        rknn_context ctx = 0;
        ASSERT_EQ(init_graph(g, kFlags, &ctx), RKNN_SUCC);
        rknn_openrknn_shape_range range{};
        range.n_dims = 7;
        EXPECT_EQ(rknn_query(ctx, RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE, &range, sizeof(range)), RKNN_SUCC);
        EXPECT_EQ(range.n_dims, 0u);
        EXPECT_EQ(range.shape_number, g.shape_sets.size());
        EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    }
}

TEST(DynamicRangeModels, RangesTheModelCannotHoldAreRefusedAtInit) {
    graph::Graph no_sets = ranged_model();
    no_sets.shape_sets.clear();
    graph::Graph wrong_rank = ranged_model({kSets}, {{1, 3, 4}, {1, 3, 16}, {1, 1, 4}});
    graph::Graph set_outside = ranged_model({kSets}, {{1, 3, 4, 4}, {1, 3, 12, 12}, {1, 1, 4, 4}});
    graph::Graph zero_step = ranged_model({kSets}, {{1, 3, 4, 4}, {1, 3, 16, 16}, {1, 1, 0, 4}});
    graph::Graph two_ranges = ranged_model();
    two_ranges.input_ranges.push_back(kRange);
    for (const graph::Graph* g : {&no_sets, &wrong_rank, &set_outside, &zero_step, &two_ranges}) {
        rknn_context ctx = 0;
        EXPECT_EQ(init_graph(*g, kFlags, &ctx), RKNN_ERR_MODEL_INVALID);
        EXPECT_EQ(ctx, 0u);
    }
}

// A seeded random walk over the API of a ranged model with no cache room
// (every other plan dropped at each switch): valid and invalid shapes, the
// general and the zero-copy flow, wrong input sizes and core masks. Every
// call answers as it should, and every run gives the static model's bytes.
TEST(DynamicRangeModels, RandomCallSequencesStayCorrect) {
    rknn_context ctx = 0;
    ASSERT_EQ(init_without_cache_room(&ctx), RKNN_SUCC);
    rknn_tensor_mem *in_mem = nullptr, *out_mem = nullptr;
    ASSERT_TRUE(rknn::testing::create_max_io_mems(ctx, &in_mem, &out_mem));
    std::map<graph::Shape, rknn_context> statics;  // made when first needed
    const auto static_ctx = [&](const graph::Shape& shape) {
        rknn_context& c = statics[shape];
        if (c == 0) {
            EXPECT_EQ(init_graph(at_shape(conv_pool_model(), shape), kFlags, &c), RKNN_SUCC);
        }
        return c;
    };
    std::mt19937 rng(2026);
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    const uint32_t masks[] = {RKNN_NPU_CORE_AUTO, RKNN_NPU_CORE_0, RKNN_NPU_CORE_0_1, RKNN_NPU_CORE_0_1_2};
    graph::Shape current;
    bool bound = false;
    int compared = 0;
    for (int step = 0; step < 150; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        switch (pick(6)) {
            case 0: {  // a shape inside the range
                const graph::Shape shape = {1, 3, 4 + 4 * pick(4), 4 + 4 * pick(4)};
                ASSERT_EQ(set_shape(ctx, shape), RKNN_SUCC) << graph::shape_to_string(shape);
                if (shape != current) bound = false;  // a switch ends the bindings
                current = shape;
                break;
            }
            case 1: {  // outside it, or off its steps: refused, nothing changes
                const graph::Shape shape = {1, 3, 4 + 4 * pick(4) + 1 + pick(3), 20 + pick(8)};
                EXPECT_EQ(set_shape(ctx, shape), RKNN_ERR_INPUT_INVALID);
                break;
            }
            case 2: {  // the general API
                if (current.empty() || bound) break;
                const std::vector<uint8_t> pixels = pixels_of(current, rng());
                const bool want_float = pick(2) == 1;
                EXPECT_EQ(run_image(ctx, pixels, want_float), run_image(static_ctx(current), pixels, want_float))
                    << graph::shape_to_string(current);
                ++compared;
                break;
            }
            case 3: {  // pixels of another size
                if (current.empty() || bound) break;
                std::vector<uint8_t> pixels(pixels_of(current, 1).size() + 3 * (1 + pick(4)), 7);
                rknn_input in = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size()),
                                                         RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
                EXPECT_NE(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
                break;
            }
            case 4:
                ASSERT_EQ(rknn_set_core_mask(ctx, static_cast<rknn_core_mask>(masks[pick(4)])), RKNN_SUCC);
                break;
            case 5: {  // the zero-copy flow
                if (current.empty()) break;
                rknn_tensor_attr out_attr{};
                ASSERT_TRUE(rknn::testing::bind_current_io(ctx, in_mem, out_mem, &out_attr));
                bound = true;
                const std::vector<uint8_t> pixels = pixels_of(current, rng());
                std::memcpy(in_mem->virt_addr, pixels.data(), pixels.size());
                ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
                const std::vector<uint8_t> expected = run_image(static_ctx(current), pixels, true);
                ASSERT_EQ(expected.size(), out_attr.n_elems * sizeof(float));
                EXPECT_EQ(std::memcmp(out_mem->virt_addr, expected.data(), expected.size()), 0)
                    << graph::shape_to_string(current);
                ++compared;
                break;
            }
        }
    }
    EXPECT_GE(compared, 30) << "runs compared";
    EXPECT_GE(statics.size(), 8u) << "shapes run";
    EXPECT_EQ(rknn_destroy_mem(ctx, in_mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(ctx, out_mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    for (auto& [shape, c] : statics) EXPECT_EQ(rknn_destroy(c), RKNN_SUCC);
}

// int8: a dynamic model calibrated at its largest shape gives, at every
// shape in its range, the bytes of a static conversion at that shape
// calibrated at the same shape (--calib-shapes) on the same data.
std::string write_two_convs() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> weight(-0.5f, 0.5f);
    const auto values = [&](size_t n) {
        std::vector<float> v(n);
        for (float& x : v) x = weight(rng);
        return v;
    };
    onnx::GraphProto g;
    rknn::testing::add_float_value(g.add_input(), "x", {"1", "3", "h", "w"});
    rknn::testing::add_float_value(g.add_output(), "y", {"1", "2", "h", "w"});
    rknn::testing::add_floats(&g, "w1", {4, 3, 3, 3}, values(4 * 3 * 3 * 3));
    rknn::testing::add_floats(&g, "b1", {4}, values(4));
    rknn::testing::add_floats(&g, "w2", {2, 4, 1, 1}, values(2 * 4));
    rknn::testing::add_floats(&g, "b2", {2}, values(2));
    onnx::NodeProto* conv = rknn::testing::add_node(&g, "Conv", {"x", "w1", "b1"}, "c1");
    rknn::testing::add_ints_attribute(conv, "pads", {1, 1, 1, 1});
    rknn::testing::add_node(&g, "Relu", {"c1"}, "r1");
    rknn::testing::add_node(&g, "Conv", {"r1", "w2", "b2"}, "y");
    return rknn::testing::save_model(std::move(g), "two_convs_dynamic");
}

std::vector<float> floats_of(const graph::Shape& nchw, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    std::vector<float> v(static_cast<size_t>(nchw[1] * nchw[2] * nchw[3]));
    for (float& x : v) x = value(rng);
    return v;
}

std::vector<uint8_t> convert_to_bytes(rknn::convert::ConvertOptions options) {
    auto converted = rknn::convert::convert_onnx(options);
    EXPECT_TRUE(converted.is_ok()) << converted.status().message();
    if (!converted.is_ok()) return {};
    auto bytes = rknn::model::serialize_model(converted.value().graph);
    EXPECT_TRUE(bytes.is_ok());
    return bytes.is_ok() ? bytes.value() : std::vector<uint8_t>{};
}

// Float32 NCHW in; output 0 as int8 codes or float32.
std::vector<uint8_t> run_floats(rknn_context ctx, std::vector<float> x, bool want_float) {
    rknn_input in{};
    in.index = 0;
    in.buf = x.data();
    in.size = static_cast<uint32_t>(x.size() * sizeof(float));
    in.type = RKNN_TENSOR_FLOAT32;
    in.fmt = RKNN_TENSOR_NCHW;
    if (rknn_inputs_set(ctx, 1, &in) != RKNN_SUCC || rknn_run(ctx, nullptr) != RKNN_SUCC) return {};
    rknn_output out{};
    out.want_float = want_float ? 1 : 0;
    if (rknn_outputs_get(ctx, 1, &out, nullptr) != RKNN_SUCC) return {};
    const auto* bytes = static_cast<const uint8_t*>(out.buf);
    std::vector<uint8_t> result(bytes, bytes + out.size);
    rknn_outputs_release(ctx, 1, &out);
    return result;
}

TEST(DynamicRangeModels, Int8ShapesGiveTheBytesOfStaticConversionsCalibratedAlike) {
    const graph::Shape largest = {1, 3, 8, 16};
    const std::string onnx = write_two_convs();
    const std::filesystem::path data = std::filesystem::path(::testing::TempDir()) / "two_convs_calibration";
    std::filesystem::create_directories(data);
    for (uint32_t k = 0; k < 4; ++k) {
        const std::vector<float> x = floats_of(largest, 100 + k);
        rknn::npy::Array array{"f4", largest, std::vector<uint8_t>(x.size() * sizeof(float))};
        std::memcpy(array.data.data(), x.data(), array.data.size());
        ASSERT_TRUE(rknn::npy::write_file((data / ("sample_" + std::to_string(k) + ".npy")).string(), array).is_ok());
    }
    rknn::convert::ConvertOptions options;
    options.onnx_path = onnx;
    options.progress = false;
    options.dtype = rknn::convert::TargetDType::kInt8;
    options.dataset = data.string();
    rknn::convert::ConvertOptions dynamic = options;
    dynamic.dynamic_range = {{{1, 3, 4, 4}, largest, {1, 1, 2, 4}}};
    std::vector<uint8_t> dynamic_model = convert_to_bytes(dynamic);
    ASSERT_FALSE(dynamic_model.empty());
    rknn_context ctx = 0;
    ASSERT_EQ(rknn_init(&ctx, dynamic_model.data(), static_cast<uint32_t>(dynamic_model.size()), kFlags, nullptr),
              RKNN_SUCC);
    uint32_t seed = 200;
    for (const graph::Shape& shape : {graph::Shape{1, 3, 4, 8}, graph::Shape{1, 3, 6, 12}, largest,
                                      graph::Shape{1, 3, 8, 4}}) {
        rknn::convert::ConvertOptions fixed = options;
        fixed.input_shapes = {{shape}};
        fixed.calib_shapes = {largest};
        std::vector<uint8_t> static_model = convert_to_bytes(fixed);
        ASSERT_FALSE(static_model.empty());
        rknn_context reference = 0;
        ASSERT_EQ(rknn_init(&reference, static_model.data(), static_cast<uint32_t>(static_model.size()), kFlags,
                            nullptr),
                  RKNN_SUCC);
        ASSERT_EQ(set_shape(ctx, shape), RKNN_SUCC);
        const std::vector<float> x = floats_of(shape, seed++);
        for (bool want_float : {false, true}) {
            const std::vector<uint8_t> expected = run_floats(reference, x, want_float);
            ASSERT_FALSE(expected.empty());
            EXPECT_EQ(run_floats(ctx, x, want_float), expected)
                << graph::shape_to_string(shape) << (want_float ? " float" : " int8");
        }
        EXPECT_EQ(rknn_destroy(reference), RKNN_SUCC);
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

}  // namespace
