// rknn_convert with several --input-shapes sets: the graph is stored at the
// largest set and the runtime infers the others from it. A Reshape target
// computed from the input's shape is folded at the largest set; the
// converter writes it with 0 / -1 where that holds for every set, and
// refuses (naming the op) where it cannot.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "converter.h"
#include "graph/shape_check.h"

namespace {

using rknn::convert::ConvertOptions;
using rknn::convert::convert_onnx;

void add_value(onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (const char* dim : {"n", "c", "h", "w"}) {
        auto* d = tt->mutable_shape()->add_dim();
        if (std::string(dim) == "c") {
            d->set_dim_value(2);
        } else {
            d->set_dim_param(dim);
        }
    }
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& type, const std::vector<std::string>& in,
                          const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(type);
    n->set_name(out + "_node");
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
    return n;
}

void add_int64s(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
}

enum class Target {
    kNone,         // x [n, 2, h, w] -> Relu -> y
    kWidthLast,    // ... -> Reshape to [1, -1, w] (w from Shape(x)): two dims change, neither a copy
    kHeightCopied  // ... -> Reshape to [n, 2, h, -1, 2] (n, h from Shape(x)): h is a copy of the input's
};

std::string write_model(const std::string& name, Target target) {
    const bool width_reshape = target != Target::kNone;
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name(name);
    add_value(g->add_input(), "x");
    add_node(g, "Relu", {"x"}, width_reshape ? "r" : "y");
    onnx::ValueInfoProto* out = g->add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    if (width_reshape) {
        const bool width = target == Target::kWidthLast;
        add_int64s(g, "picked", width ? std::vector<int64_t>{3} : std::vector<int64_t>{0, 1, 2});
        add_int64s(g, "fixed", width ? std::vector<int64_t>{1, -1} : std::vector<int64_t>{-1, 2});
        add_node(g, "Shape", {"x"}, "shape");
        add_node(g, "Gather", {"shape", "picked"}, "dims");
        onnx::NodeProto* cat =
            add_node(g, "Concat", width ? std::vector<std::string>{"fixed", "dims"} : std::vector<std::string>{"dims", "fixed"},
                     "target");
        onnx::AttributeProto* axis = cat->add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto::INT);
        axis->set_i(0);
        add_node(g, "Reshape", {"r", "target"}, "y");
    }
    const std::string path = ::testing::TempDir() + "/" + name + ".onnx";
    std::ofstream(path, std::ios::binary) << m.SerializeAsString();
    return path;
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

}  // namespace
