// rknn_convert with several --input-shapes sets: the graph is stored at the
// largest set and the runtime infers the others from it. A Reshape target
// computed from the input's shape is folded at the largest set; the
// converter writes it with 0 / -1 where that holds for every set, and
// refuses (naming the op) where it cannot.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "convert/onnx_test_models.h"
#include "converter.h"
#include "graph/shape_check.h"

namespace {

using rknn::convert::ConvertOptions;
using rknn::convert::convert_onnx;
using rknn::testing::add_float_value;
using rknn::testing::add_int64s;
using rknn::testing::add_int_attribute;
using rknn::testing::add_node;

enum class Target {
    kNone,         // x [n, 2, h, w] -> Relu -> y
    kWidthLast,    // ... -> Reshape to [1, -1, w] (w from Shape(x)): two dims change, neither a copy
    kHeightCopied  // ... -> Reshape to [n, 2, h, -1, 2] (n, h from Shape(x)): h is a copy of the input's
};

std::string write_model(const std::string& name, Target target) {
    const bool width_reshape = target != Target::kNone;
    onnx::GraphProto g;
    add_float_value(g.add_input(), "x", {"n", "2", "h", "w"});
    add_node(&g, "Relu", {"x"}, width_reshape ? "r" : "y");
    onnx::ValueInfoProto* out = g.add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    if (width_reshape) {
        const bool width = target == Target::kWidthLast;
        add_int64s(&g, "picked", width ? std::vector<int64_t>{3} : std::vector<int64_t>{0, 1, 2});
        add_int64s(&g, "fixed", width ? std::vector<int64_t>{1, -1} : std::vector<int64_t>{-1, 2});
        add_node(&g, "Shape", {"x"}, "shape");
        add_node(&g, "Gather", {"shape", "picked"}, "dims");
        onnx::NodeProto* cat = add_node(
            &g, "Concat", width ? std::vector<std::string>{"fixed", "dims"} : std::vector<std::string>{"dims", "fixed"},
            "target");
        add_int_attribute(cat, "axis", 0);
        add_node(&g, "Reshape", {"r", "target"}, "y");
    }
    return rknn::testing::save_model(std::move(g), name);
}

ConvertOptions options_for(const std::string& path) {
    ConvertOptions options;
    options.onnx_path = path;
    options.progress = false;
    options.input_shapes = {{{1, 2, 4, 4}}, {{1, 2, 8, 8}}, {{1, 2, 4, 8}}};
    return options;
}

TEST(ShapeSets, TheLargestSetIsStoredAndEverySetChecked) {
    auto result = convert_onnx(options_for(write_model("relu_sets", Target::kNone)));
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    const rknn::graph::Graph& g = result.value().graph;
    ASSERT_EQ(g.shape_sets.size(), 3u);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.inputs[0])].shape, (rknn::graph::Shape{1, 2, 8, 8}));
    bool logged = false;
    for (const std::string& line : result.value().log) logged = logged || line.find("3 shape sets") != std::string::npos;
    EXPECT_TRUE(logged);
}

TEST(ShapeSets, AReshapeTargetCopyingADimIsWrittenWithZero) {
    auto result = convert_onnx(options_for(write_model("height_reshape", Target::kHeightCopied)));
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    const rknn::graph::Graph& g = result.value().graph;
    bool rewritten = false;
    for (const rknn::graph::Op& op : g.ops) {
        if (op.type != rknn::graph::OpType::kReshape) continue;
        const rknn::graph::Buffer* target = g.constant_buffer(op.inputs[1]);
        ASSERT_NE(target, nullptr);
        ASSERT_EQ(target->size, 5 * sizeof(int64_t));
        std::vector<int64_t> values(5);
        std::memcpy(values.data(), target->data, target->size);
        EXPECT_EQ(values, (std::vector<int64_t>{1, 2, 0, -1, 2}));
        rewritten = true;
    }
    EXPECT_TRUE(rewritten);
    // Every set re-infers to the ONNX graph's output shape.
    for (const auto& set : g.shape_sets) {
        rknn::graph::Graph at_set = g;
        ASSERT_TRUE(rknn::graph::infer_graph_shapes(&at_set, set).is_ok());
        const rknn::graph::Shape& out = at_set.tensors[static_cast<size_t>(at_set.outputs[0])].shape;
        EXPECT_EQ(out, (rknn::graph::Shape{1, 2, set[0][2], set[0][3] / 2, 2}));
    }
}

TEST(ShapeSets, AShapeNoZeroOrMinusOneFormGivesIsRefusedWithTheOpNamed) {
    auto result = convert_onnx(options_for(write_model("width_reshape", Target::kWidthLast)));
    ASSERT_FALSE(result.is_ok());
    EXPECT_EQ(result.status().code(), rknn::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("Reshape \"y_node\""), std::string::npos) << result.status().message();
    // The same graph converts at one shape.
    ConvertOptions one = options_for(write_model("width_reshape", Target::kWidthLast));
    one.input_shapes = {{{1, 2, 4, 8}}};
    EXPECT_TRUE(convert_onnx(one).is_ok());
}

TEST(ShapeSets, SetsOfAnotherRankOrCountAreRefused) {
    ConvertOptions options = options_for(write_model("relu_rank", Target::kNone));
    options.input_shapes.push_back({{1, 2, 8}});
    EXPECT_FALSE(convert_onnx(options).is_ok());
    options = options_for(write_model("relu_count", Target::kNone));
    options.input_shapes.push_back({{1, 2, 8, 8}, {1, 2, 8, 8}});
    EXPECT_FALSE(convert_onnx(options).is_ok());
}

// --dynamic-range: its largest shape becomes a set, the ranges are stored,
// and shapes inside them the sets do not name are checked too.
rknn::graph::ShapeRange even_range() { return {{1, 2, 2, 2}, {1, 2, 8, 16}, {1, 1, 2, 2}}; }

TEST(ShapeSets, ADynamicRangeIsStoredWithItsLargestShapeAsASet) {
    ConvertOptions options = options_for(write_model("height_range", Target::kHeightCopied));
    options.input_shapes = {{{1, 2, 4, 4}}};
    options.dynamic_range = {even_range()};
    auto result = convert_onnx(options);
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    const rknn::graph::Graph& g = result.value().graph;
    ASSERT_EQ(g.input_ranges.size(), 1u);
    EXPECT_EQ(g.input_ranges[0].max, (rknn::graph::Shape{1, 2, 8, 16}));
    ASSERT_EQ(g.shape_sets.size(), 2u);
    EXPECT_EQ(g.shape_sets[1][0], (rknn::graph::Shape{1, 2, 8, 16}));
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.inputs[0])].shape, (rknn::graph::Shape{1, 2, 8, 16}));
    bool logged = false;
    for (const std::string& line : result.value().log)
        logged = logged || line.find("shapes inside the ranges") != std::string::npos;
    EXPECT_TRUE(logged);
    // A shape no set and no probe names re-infers to what the ONNX graph gives.
    rknn::graph::Graph at = g;
    ASSERT_TRUE(rknn::graph::reinfer_graph_shapes(&at, {{1, 2, 6, 10}}).is_ok());
    EXPECT_EQ(at.tensors[static_cast<size_t>(at.outputs[0])].shape, (rknn::graph::Shape{1, 2, 6, 5, 2}));
}

TEST(ShapeSets, ARangeProbeFindsWhatOneSetCannot) {
    // The range alone gives one set (its largest shape), at which the
    // width-dependent target looks fixed; the probes show it changes, and no
    // 0 / -1 form holds.
    ConvertOptions options = options_for(write_model("width_range", Target::kWidthLast));
    options.input_shapes.clear();
    options.dynamic_range = {even_range()};
    auto result = convert_onnx(options);
    ASSERT_FALSE(result.is_ok());
    EXPECT_NE(result.status().message().find("Reshape \"y_node\""), std::string::npos) << result.status().message();
}

// Two inputs that meet in an Add share their dims: the probes move a dim
// position in both at once, so such a model converts.
TEST(ShapeSets, RangedInputsThatShareDimsConvert) {
    onnx::GraphProto g;
    add_float_value(g.add_input(), "x", {"n", "2", "h", "w"});
    add_float_value(g.add_input(), "y", {"n", "2", "h", "w"});
    add_float_value(g.add_output(), "z", {"n", "2", "h", "w"});
    add_node(&g, "Add", {"x", "y"}, "z");
    ConvertOptions options = options_for(rknn::testing::save_model(std::move(g), "add_range"));
    options.input_shapes.clear();
    options.dynamic_range = {even_range(), even_range()};
    auto result = convert_onnx(options);
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    EXPECT_EQ(result.value().graph.input_ranges.size(), 2u);
}

TEST(ShapeSets, BadRangesAreRefused) {
    const std::string path = write_model("relu_range", Target::kNone);
    ConvertOptions options = options_for(path);
    options.input_shapes = {{{1, 2, 4, 4}}};
    options.dynamic_range = {{{1, 2, 6, 6}, {1, 2, 8, 8}, {1, 1, 2, 2}}};
    EXPECT_FALSE(convert_onnx(options).is_ok()) << "a set outside the range";
    options.dynamic_range = {{{1, 2, 2, 2}, {1, 2, 8, 9}, {1, 1, 2, 2}}};
    EXPECT_FALSE(convert_onnx(options).is_ok()) << "max not min plus whole steps";
    options.dynamic_range = {{{1, 2, 2}, {1, 2, 8}, {1, 1, 2}}};
    EXPECT_FALSE(convert_onnx(options).is_ok()) << "wrong rank";
    options.dynamic_range = {even_range(), even_range()};
    EXPECT_FALSE(convert_onnx(options).is_ok()) << "two ranges for one input";
    options.dynamic_range = {even_range()};
    options.input_shapes.clear();
    EXPECT_TRUE(convert_onnx(options).is_ok()) << "the range alone: its largest shape is the set";
}

// --batch: the graph stays batch 1 and the model records B; a model that
// cannot be batched that way is refused with the reason.
TEST(Batch, TheModelRecordsItsBatchAndKeepsTheBatchOneGraph) {
    ConvertOptions options = options_for(write_model("relu_batch", Target::kNone));
    options.input_shapes = {{{1, 2, 4, 4}}};
    options.batch = 3;
    auto result = convert_onnx(options);
    ASSERT_TRUE(result.is_ok()) << result.status().message();
    const rknn::graph::Graph& g = result.value().graph;
    EXPECT_EQ(g.batch, 3u);
    EXPECT_EQ(g.tensors[static_cast<size_t>(g.inputs[0])].shape, (rknn::graph::Shape{1, 2, 4, 4}));
    // With shape sets, or a stored batch other than 1: refused.
    ConvertOptions dynamic = options_for(write_model("relu_batch_sets", Target::kNone));
    dynamic.batch = 2;
    auto refused = convert_onnx(dynamic);
    ASSERT_FALSE(refused.is_ok());
    EXPECT_NE(refused.status().message().find("dynamic-shape"), std::string::npos) << refused.status().message();
    ConvertOptions two = options_for(write_model("relu_batch_two", Target::kNone));
    two.input_shapes = {{{2, 2, 4, 4}}};
    two.batch = 2;
    refused = convert_onnx(two);
    ASSERT_FALSE(refused.is_ok());
    EXPECT_NE(refused.status().message().find("leading batch dim of 1"), std::string::npos) << refused.status().message();
}

}  // namespace
