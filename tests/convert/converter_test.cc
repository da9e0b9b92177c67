// The converter: graph passes (each checked for numerical equivalence),
// ONNX import of unsupported content (listed, nothing written), and bad ONNX
// bytes (an error, never a crash; this suite also runs under ASan/UBSan).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/test_graphs.h"
#include "converter.h"
#include "cpu/graph_executor.h"
#include "onnx_import.h"
#include "passes/passes.h"

namespace {

using rknn::cpu::HostTensor;
using rknn::graph::DType;
using rknn::graph::Graph;
using rknn::graph::Op;
using rknn::graph::OpType;
using rknn::graph::Shape;

int32_t tensor(Graph* g, const std::string& name, const Shape& shape) {
    rknn::graph::Tensor t;
    t.name = name;
    t.shape = shape;
    return g->add_tensor(t);
}

HostTensor random_input(const Shape& shape, uint32_t seed) { return rknn::testing::random_floats(shape, seed, -2.0f, 2.0f); }

std::vector<HostTensor> run(const Graph& g, const std::vector<HostTensor>& inputs) {
    auto out = rknn::testing::run_reference(g, inputs);
    EXPECT_TRUE(out.is_ok()) << out.status().message();
    return out.is_ok() ? out.value() : std::vector<HostTensor>{};
}

float max_difference(const HostTensor& a, const HostTensor& b) { return rknn::testing::max_abs_difference(a, b); }

int count(const Graph& g, OpType type) { return rknn::testing::count_ops(g, type); }

TEST(Passes, BatchNormFoldsIntoTheConvolution) {
    Graph g;
    const int32_t x = tensor(&g, "x", {1, 4, 6, 6});
    const int32_t w = rknn::testing::random_constant(&g, "w", {5, 4, 3, 3}, 1);
    const int32_t c = tensor(&g, "c", {1, 5, 6, 6});
    Op conv{OpType::kConv, "conv", "", {x, w}, {c}, {}};
    conv.attrs.set_ints("pads", {1, 1, 1, 1});
    g.add_op(conv);
    const int32_t scale = rknn::testing::random_constant(&g, "scale", {5}, 2, 0.5f, 1.5f);
    const int32_t bias = rknn::testing::random_constant(&g, "bias", {5}, 3);
    const int32_t mean = rknn::testing::random_constant(&g, "mean", {5}, 4);
    const int32_t var = rknn::testing::random_constant(&g, "var", {5}, 5, 0.5f, 2.0f);
    const int32_t y = tensor(&g, "y", {1, 5, 6, 6});
    g.add_op({OpType::kBatchNormalization, "bn", "", {c, scale, bias, mean, var}, {y}, {}});
    g.inputs = {x};
    g.outputs = {y};
    const HostTensor in = random_input({1, 4, 6, 6}, 6);
    const std::vector<HostTensor> before = run(g, {in});
    auto folded = rknn::convert::fold_batch_norm(&g);
    ASSERT_TRUE(folded.is_ok()) << folded.status().message();
    ASSERT_EQ(folded.value(), 1);
    EXPECT_EQ(count(g, OpType::kBatchNormalization), 0);
    EXPECT_EQ(g.tensors[g.outputs[0]].name, "y") << "the output keeps its name";
    EXPECT_LT(max_difference(before[0], run(g, {in})[0]), 1e-4f);
}

TEST(Passes, SiluAndGeluPatternsBecomeOneOp) {
    Graph g;
    const int32_t x = tensor(&g, "x", {1, 8});
    const int32_t s = tensor(&g, "s", {1, 8});
    const int32_t y = tensor(&g, "y", {1, 8});
    g.add_op({OpType::kSigmoid, "sig", "", {x}, {s}, {}});
    g.add_op({OpType::kMul, "mul", "", {x, s}, {y}, {}});
    // GELU form A: ((x * (erf(x / sqrt2) + 1)) * 0.5), on y.
    const float sqrt2 = std::sqrt(2.0f), one = 1.0f, half = 0.5f;
    const int32_t c_sqrt2 = g.add_constant("sqrt2", DType::kFloat32, {}, rknn::graph::Buffer::copy_of(&sqrt2, 4));
    const int32_t c_one = g.add_constant("one", DType::kFloat32, {}, rknn::graph::Buffer::copy_of(&one, 4));
    const int32_t c_half = g.add_constant("half", DType::kFloat32, {}, rknn::graph::Buffer::copy_of(&half, 4));
    const int32_t t1 = tensor(&g, "t1", {1, 8}), t2 = tensor(&g, "t2", {1, 8}), t3 = tensor(&g, "t3", {1, 8});
    const int32_t t4 = tensor(&g, "t4", {1, 8}), out = tensor(&g, "out", {1, 8});
    g.add_op({OpType::kDiv, "div", "", {y, c_sqrt2}, {t1}, {}});
    g.add_op({OpType::kErf, "erf", "", {t1}, {t2}, {}});
    g.add_op({OpType::kAdd, "add", "", {t2, c_one}, {t3}, {}});
    g.add_op({OpType::kMul, "mul1", "", {y, t3}, {t4}, {}});
    g.add_op({OpType::kMul, "mul2", "", {t4, c_half}, {out}, {}});
    g.inputs = {x};
    g.outputs = {out};
    const HostTensor in = random_input({1, 8}, 9);
    const std::vector<HostTensor> before = run(g, {in});
    EXPECT_EQ(rknn::convert::fuse_silu(&g), 1);
    EXPECT_EQ(rknn::convert::fuse_gelu(&g), 1);
    ASSERT_EQ(g.ops.size(), 2u);
    EXPECT_EQ(g.ops[0].type, OpType::kSilu);
    EXPECT_EQ(g.ops[1].type, OpType::kGelu);
    EXPECT_LT(max_difference(before[0], run(g, {in})[0]), 1e-5f);
}

TEST(Passes, ResidualAddAndActivationFuseIntoTheConvolution) {
    Graph g;
    const int32_t x = tensor(&g, "x", {1, 4, 5, 5});
    const int32_t r = tensor(&g, "r", {1, 4, 5, 5});
    const int32_t w = rknn::testing::random_constant(&g, "w", {4, 4, 1, 1}, 11);
    const int32_t c = tensor(&g, "c", {1, 4, 5, 5});
    const int32_t a = tensor(&g, "a", {1, 4, 5, 5});
    const int32_t y = tensor(&g, "y", {1, 4, 5, 5});
    g.add_op({OpType::kConv, "conv", "", {x, w}, {c}, {}});
    g.add_op({OpType::kAdd, "add", "", {c, r}, {a}, {}});
    g.add_op({OpType::kRelu, "relu", "", {a}, {y}, {}});
    g.inputs = {x, r};
    g.outputs = {y};
    const std::vector<HostTensor> in = {random_input({1, 4, 5, 5}, 12), random_input({1, 4, 5, 5}, 13)};
    const std::vector<HostTensor> before = run(g, in);
    EXPECT_EQ(rknn::convert::fuse_residual_adds(&g), 1);
    EXPECT_EQ(rknn::convert::fuse_activations(&g), 1);
    ASSERT_EQ(g.ops.size(), 1u);
    EXPECT_EQ(g.ops[0].attrs.get_int("fused_add", 0), 1);
    EXPECT_EQ(g.ops[0].attrs.get_string("activation", ""), "Relu");
    EXPECT_LT(max_difference(before[0], run(g, in)[0]), 1e-5f);
}

// PRelu after a Conv or Gemm: one slope per output channel fuses (the
// float result unchanged), one slope for all becomes a fused leaky ReLU, and
// a slope that varies along the width does not fuse.
TEST(Passes, PReluFusesIntoTheProducerWhenItsSlopesArePerChannel) {
    auto build = [](const Shape& slope_shape, bool gemm) {
        Graph g;
        const Shape in_shape = gemm ? Shape{2, 6} : Shape{1, 3, 5, 5};
        const Shape out_shape = gemm ? Shape{2, 4} : Shape{1, 4, 5, 5};
        const int32_t x = tensor(&g, "x", in_shape);
        const int32_t w = rknn::testing::random_constant(&g, "w", gemm ? Shape{6, 4} : Shape{4, 3, 1, 1}, 21);
        const int32_t c = tensor(&g, "c", out_shape);
        const int32_t slope = rknn::testing::random_constant(&g, "slope", slope_shape, 22, -0.5f, 1.5f);
        const int32_t y = tensor(&g, "y", out_shape);
        g.add_op({gemm ? OpType::kGemm : OpType::kConv, "producer", "", {x, w}, {c}, {}});
        g.add_op({OpType::kPRelu, "prelu", "", {c, slope}, {y}, {}});
        g.inputs = {x};
        g.outputs = {y};
        return g;
    };
    struct Case {
        Shape slope;
        bool gemm;
        const char* fused;  // the activation recorded, "" when not fused
    };
    const Case cases[] = {{{4, 1, 1}, false, "PRelu"}, {{1, 4, 1, 1}, false, "PRelu"}, {{4}, true, "PRelu"},
                          {{1, 4}, true, "PRelu"},     {{1}, false, "LeakyRelu"},     {{5}, false, ""}};
    for (const Case& c : cases) {
        Graph g = build(c.slope, c.gemm);
        const std::vector<HostTensor> in = {random_input(g.tensors[static_cast<size_t>(g.inputs[0])].shape, 23)};
        const std::vector<HostTensor> before = run(g, in);
        const int fused = rknn::convert::fuse_activations(&g);
        EXPECT_EQ(fused, *c.fused ? 1 : 0) << rknn::graph::shape_to_string(c.slope);
        EXPECT_EQ(g.ops[0].attrs.get_string("activation", ""), c.fused) << rknn::graph::shape_to_string(c.slope);
        EXPECT_LT(max_difference(before[0], run(g, in)[0]), 1e-5f) << rknn::graph::shape_to_string(c.slope);
    }
}

TEST(Passes, ShapeComputationsFoldToConstants) {
    Graph g;
    const int32_t x = tensor(&g, "x", {2, 3, 4});
    g.inputs = {x};
    const int32_t shape = tensor(&g, "shape", {3});
    g.tensors[shape].dtype = DType::kInt64;
    g.add_op({OpType::kShape, "shape_op", "", {x}, {shape}, {}});
    const int64_t zero = 0;
    const int32_t index = g.add_constant("index", DType::kInt64, {}, rknn::graph::Buffer::copy_of(&zero, 8));
    const int32_t first = tensor(&g, "first", {});
    g.tensors[first].dtype = DType::kInt64;
    g.add_op({OpType::kGather, "gather", "", {shape, index}, {first}, {}});
    const int32_t first1 = tensor(&g, "first1", {1});
    g.tensors[first1].dtype = DType::kInt64;
    Op unsq{OpType::kUnsqueeze, "unsqueeze", "", {first}, {first1}, {}};
    unsq.attrs.set_ints("axes", {0});
    g.add_op(unsq);
    const int64_t minus_one = -1;
    const int32_t rest = g.add_constant("rest", DType::kInt64, {1}, rknn::graph::Buffer::copy_of(&minus_one, 8));
    const int32_t target = tensor(&g, "target", {2});
    g.tensors[target].dtype = DType::kInt64;
    Op cat{OpType::kConcat, "concat", "", {first1, rest}, {target}, {}};
    cat.attrs.set_int("axis", 0);
    g.add_op(cat);
    const int32_t y = tensor(&g, "y", {2, 12});
    g.add_op({OpType::kReshape, "reshape", "", {x, target}, {y}, {}});
    g.outputs = {y};
    auto folded = rknn::convert::fold_constants(&g);
    ASSERT_TRUE(folded.is_ok()) << folded.status().message();
    EXPECT_EQ(folded.value(), 4);
    ASSERT_EQ(g.ops.size(), 1u);
    EXPECT_EQ(g.ops[0].type, OpType::kReshape);
    EXPECT_TRUE(g.is_constant(g.ops[0].inputs[1]));
}

// ---- ONNX import ------------------------------------------------------------

// A minimal ONNX model: input "x" [1,2,4,4] -> node -> output "y".
std::string onnx_model(const std::string& op_type, const std::vector<std::pair<std::string, std::string>>& attrs = {}) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("t");
    for (const char* name : {"x", "y"}) {
        onnx::ValueInfoProto* v = std::string(name) == "x" ? g->add_input() : g->add_output();
        v->set_name(name);
        auto* tt = v->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        for (int d : {1, 2, 4, 4}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op_type);
    n->set_name("the_node");
    n->add_input("x");
    n->add_output("y");
    for (const auto& [name, value] : attrs) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(value);
    }
    return m.SerializeAsString();
}

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(OnnxImport, UnsupportedOpsAreListedByNode) {
    const std::string onnx_path = temp_path("unsupported.onnx");
    std::ofstream(onnx_path, std::ios::binary) << onnx_model("NonMaxSuppression");
    rknn::convert::ConvertOptions options;
    options.onnx_path = onnx_path;
    auto result = rknn::convert::convert_onnx(options);
    ASSERT_FALSE(result.is_ok());
    const std::string& message = result.status().message();
    EXPECT_NE(message.find("node 0 \"the_node\""), std::string::npos) << message;
    EXPECT_NE(message.find("NonMaxSuppression"), std::string::npos) << message;
}

TEST(OnnxImport, UnsupportedAttributeValuesAreListed) {
    auto imported = rknn::convert::import_onnx_bytes(
        onnx_model("DepthToSpace", {{"mode", "XYZ"}}).data(), onnx_model("DepthToSpace", {{"mode", "XYZ"}}).size(), ".",
        {});
    ASSERT_TRUE(imported.is_ok());
    ASSERT_EQ(imported->problems.size(), 1u);
    EXPECT_NE(imported->problems[0].find("mode=\"XYZ\""), std::string::npos) << imported->problems[0];
}

// A node reading a value nothing provides (a renamed graph input, say), or
// two nodes writing one value: named problems, not a malformed graph.
TEST(OnnxImport, DanglingAndDoublyWrittenValuesAreListed) {
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(onnx_model("Relu")));
    m.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
    std::string bytes = m.SerializeAsString();
    auto dangling = rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), ".", {});
    ASSERT_TRUE(dangling.is_ok());
    ASSERT_EQ(dangling->problems.size(), 1u);
    EXPECT_NE(dangling->problems[0].find("reads \"ghost\""), std::string::npos) << dangling->problems[0];

    // A rejected node's readers are not reported again.
    ASSERT_TRUE(m.ParseFromString(onnx_model("NonMaxSuppression")));
    onnx::NodeProto* reader = m.mutable_graph()->add_node();
    reader->set_op_type("Relu");
    reader->add_input("y");
    reader->add_output("z");
    bytes = m.SerializeAsString();
    auto after_rejected = rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), ".", {});
    ASSERT_TRUE(after_rejected.is_ok());
    EXPECT_EQ(after_rejected->problems.size(), 1u);

    ASSERT_TRUE(m.ParseFromString(onnx_model("Relu")));
    *m.mutable_graph()->add_node() = m.graph().node(0);
    bytes = m.SerializeAsString();
    auto twice = rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), ".", {});
    ASSERT_TRUE(twice.is_ok());
    ASSERT_EQ(twice->problems.size(), 1u);
    EXPECT_NE(twice->problems[0].find("writes \"y\""), std::string::npos) << twice->problems[0];
}

// Every input the ONNX importer fuzzer found a crash with (tests/fuzz/onnx-corpus):
// imported and, when accepted, through the passes, without crashing.
TEST(OnnxImport, FuzzerFindingsImportWithoutCrashing) {
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(RKNN_ONNX_FUZZ_CORPUS)) {
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto imported = rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), "/nonexistent", {});
        ++files;
        if (!imported.is_ok() || !imported->problems.empty()) continue;
        std::vector<rknn::graph::Shape> shapes;
        for (int32_t t : imported->graph.inputs) {
            rknn::graph::Shape s = imported->graph.tensors[t].shape;
            for (int64_t& d : s) d = d < 0 ? 2 : d;
            shapes.push_back(s);
        }
        std::vector<std::string> log;
        (void)rknn::convert::run_graph_passes(&imported->graph, shapes, &log);
    }
    EXPECT_GE(files, 3);
}

TEST(OnnxImport, CustomOpsAreKeptWhenDeclared) {
    const std::string bytes = onnx_model("cstSigmoid");
    auto plain = rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), ".", {});
    ASSERT_TRUE(plain.is_ok());
    EXPECT_FALSE(plain->problems.empty()) << "an unknown op is a problem unless declared custom";
    rknn::convert::ImportOptions options;
    options.custom_op_types = {"cstSigmoid"};
    auto custom = rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), ".", options);
    ASSERT_TRUE(custom.is_ok());
    EXPECT_TRUE(custom->problems.empty());
    ASSERT_EQ(custom->graph.ops.size(), 1u);
    EXPECT_EQ(custom->graph.ops[0].type, OpType::kCustom);
    EXPECT_EQ(custom->graph.ops[0].custom_type, "cstSigmoid");
    ASSERT_EQ(custom->graph.custom_ops.size(), 1u);
}

TEST(OnnxImport, TruncatedAndCorruptedFilesFailCleanly) {
    const std::string good = onnx_model("Relu");
    ASSERT_TRUE(rknn::convert::import_onnx_bytes(good.data(), good.size(), ".", {}).is_ok());
    for (size_t length = 1; length < good.size(); ++length) {
        auto r = rknn::convert::import_onnx_bytes(good.data(), length, ".", {});
        // A prefix may still parse as a (smaller) protobuf; it must never crash,
        // and an accepted one must not carry the node's full structure.
        if (r.is_ok()) {
            EXPECT_TRUE(!r->problems.empty() || r->graph.ops.size() <= 1u);
        }
    }
    std::mt19937 rng(3);
    for (int trial = 0; trial < 2000; ++trial) {
        std::string bytes = good;
        for (int f = 0; f < 4; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
        (void)rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), ".", {});
    }
    const std::string garbage(100, '\xff');
    auto r = rknn::convert::import_onnx_bytes(garbage.data(), garbage.size(), ".", {});
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().message().find("not a valid ONNX model"), std::string::npos);
}

TEST(OnnxImport, ExternalDataCannotEscapeTheModelFolder) {
    onnx::ModelProto m;
    m.add_opset_import()->set_version(13);
    onnx::TensorProto* init = m.mutable_graph()->add_initializer();
    init->set_name("w");
    init->set_data_type(onnx::TensorProto::FLOAT);
    init->add_dims(4);
    init->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = init->add_external_data();
    entry->set_key("location");
    entry->set_value("../../etc/passwd");
    const std::string bytes = m.SerializeAsString();
    auto r = rknn::convert::import_onnx_bytes(bytes.data(), bytes.size(), "/tmp", {});
    ASSERT_TRUE(r.is_ok());
    ASSERT_FALSE(r->problems.empty());
    EXPECT_NE(r->problems[0].find("relative path inside the model folder"), std::string::npos) << r->problems[0];
}

}  // namespace
