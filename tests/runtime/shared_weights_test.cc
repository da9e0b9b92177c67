// Weights shared between models of different input sizes (spec 5.6): a slave
// converted with --remove-weights --master runs with RKNN_FLAG_SHARE_WEIGHT_MEM
// on its master's weights buffer and gives what a normal conversion at its
// size gives, byte for byte (fp16, and int8 calibrated at the master's
// shapes); MEM_SIZE counts the weights once; a missing, destroyed or
// incompatible master is refused with a log line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "api/context_handle.h"
#include "base/log.h"
#include "base/npy.h"
#include "common/mock_soc.h"
#include "contract_models.h"
#include "convert/onnx_test_models.h"
#include "converter.h"
#include "model/model_file.h"
#include "rknn_api.h"
#include "runtime/context.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using rknn::convert::ConvertOptions;
using rknn::convert::TargetDType;

// Conv 3x3 (3 -> 8) -> Relu -> Conv 3x3 (8 -> 8) -> Relu, any height and width.
// `seed` picks the weights (another seed: an incompatible master).
std::string write_convs(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
    const auto values = [&](size_t n) {
        std::vector<float> v(n);
        for (float& x : v) x = dist(rng);
        return v;
    };
    onnx::GraphProto g;
    rknn::testing::add_float_value(g.add_input(), "x", {"1", "3", "h", "w"});
    rknn::testing::add_float_value(g.add_output(), "y", {"1", "8", "h", "w"});
    rknn::testing::add_floats(&g, "w1", {8, 3, 3, 3}, values(8 * 3 * 3 * 3));
    rknn::testing::add_floats(&g, "b1", {8}, values(8));
    rknn::testing::add_floats(&g, "w2", {8, 8, 3, 3}, values(8 * 8 * 3 * 3));
    rknn::testing::add_floats(&g, "b2", {8}, values(8));
    onnx::NodeProto* c1 = rknn::testing::add_node(&g, "Conv", {"x", "w1", "b1"}, "c1");
    rknn::testing::add_ints_attribute(c1, "pads", {1, 1, 1, 1});
    rknn::testing::add_node(&g, "Relu", {"c1"}, "r1");
    onnx::NodeProto* c2 = rknn::testing::add_node(&g, "Conv", {"r1", "w2", "b2"}, "c2");
    rknn::testing::add_ints_attribute(c2, "pads", {1, 1, 1, 1});
    rknn::testing::add_node(&g, "Relu", {"c2"}, "y");
    return rknn::testing::save_model(std::move(g), "shared_convs_" + std::to_string(seed));
}

// Calibration samples of 1x3xHxW (the master's size unless said otherwise).
std::string write_dataset(int h = 16, int w = 16) {
    const fs::path dir =
        fs::path(::testing::TempDir()) /
        ("shared_convs_data_" + std::to_string(::getpid()) + "_" + std::to_string(h) + "x" + std::to_string(w));
    fs::create_directories(dir);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (int k = 0; k < 4; ++k) {
        std::vector<float> x(static_cast<size_t>(3 * h * w));
        for (float& v : x) v = dist(rng);
        rknn::npy::Array array{"f4", {1, 3, h, w}, Bytes(x.size() * sizeof(float))};
        std::memcpy(array.data.data(), x.data(), array.data.size());
        EXPECT_TRUE(rknn::npy::write_file((dir / ("s" + std::to_string(k) + ".npy")).string(), array).is_ok());
    }
    return dir.string();
}

ConvertOptions options_for(const std::string& onnx, TargetDType dtype, const rknn::graph::Shape& shape) {
    ConvertOptions options;
    options.onnx_path = onnx;
    options.progress = false;
    options.dtype = dtype;
    options.input_shapes = {{shape}};
    if (dtype == TargetDType::kInt8) options.dataset = write_dataset();
    return options;
}

Bytes convert_to_bytes(const ConvertOptions& options) {
    auto converted = rknn::convert::convert_onnx(options);
    EXPECT_TRUE(converted.is_ok()) << converted.status().message();
    if (!converted.is_ok()) return {};
    auto bytes = rknn::model::serialize_model(converted.value().graph);
    return bytes.is_ok() ? bytes.value() : Bytes();
}

std::string write_file(const Bytes& bytes, const std::string& name) {
    // Per process: the test cases run side by side (ctest -j) and share names.
    const std::string path = (fs::path(::testing::TempDir()) / (std::to_string(::getpid()) + "_" + name)).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
}

int init(const Bytes& model, uint32_t flags, rknn_context master, rknn_context* ctx) {
    Bytes copy = model;
    rknn_init_extend extend{};
    extend.ctx = master;
    return rknn_init(ctx, copy.data(), static_cast<uint32_t>(copy.size()), flags | RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY,
                     master != 0 ? &extend : nullptr);
}

// Output 0 as float32 for seeded inputs of `h` x `w`.
Bytes run(rknn_context ctx, int h, int w, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> x(static_cast<size_t>(3 * h * w));
    for (float& v : x) v = dist(rng);
    rknn_input in = rknn::testing::input_of(x.data(), static_cast<uint32_t>(x.size() * sizeof(float)),
                                            RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW);
    rknn_output out{};
    out.want_float = 1;
    if (rknn_inputs_set(ctx, 1, &in) != RKNN_SUCC || rknn_run(ctx, nullptr) != RKNN_SUCC ||
        rknn_outputs_get(ctx, 1, &out, nullptr) != RKNN_SUCC) {
        ADD_FAILURE() << "run failed";
        return {};
    }
    Bytes bytes(static_cast<uint8_t*>(out.buf), static_cast<uint8_t*>(out.buf) + out.size);
    rknn_outputs_release(ctx, 1, &out);
    return bytes;
}

class SharedWeights : public ::testing::TestWithParam<TargetDType> {};

TEST_P(SharedWeights, ASlaveAtAnotherSizeGivesTheNormalConversionsOutputs) {
    const rknn::testing::MockSoc mock("rk3588");
    const TargetDType dtype = GetParam();
    const std::string onnx = write_convs(7);
    const Bytes master_model = convert_to_bytes(options_for(onnx, dtype, {1, 3, 16, 16}));
    const std::string master_path = write_file(master_model, "shared_master.rknn");
    ConvertOptions slave_options = options_for(onnx, dtype, {1, 3, 24, 32});
    slave_options.remove_weights = true;
    slave_options.master_path = master_path;
    const Bytes slave_model = convert_to_bytes(slave_options);
    // The normal conversion at the slave's size (int8: calibrated where the master was).
    ConvertOptions normal_options = options_for(onnx, dtype, {1, 3, 24, 32});
    if (dtype == TargetDType::kInt8) normal_options.calib_shapes = {{1, 3, 16, 16}};
    const Bytes normal_model = convert_to_bytes(normal_options);
    ASSERT_FALSE(master_model.empty() || slave_model.empty() || normal_model.empty());
    EXPECT_LT(slave_model.size() + 500, normal_model.size()) << "the slave file holds no weights";

    rknn_context master = 0, slave = 0, normal = 0;
    ASSERT_EQ(init(master_model, 0, 0, &master), RKNN_SUCC);
    ASSERT_EQ(init(slave_model, RKNN_FLAG_SHARE_WEIGHT_MEM, master, &slave), RKNN_SUCC);
    ASSERT_EQ(init(normal_model, 0, 0, &normal), RKNN_SUCC);
    auto m = rknn::api::runtime_context(master), s = rknn::api::runtime_context(slave);
    ASSERT_TRUE(m.is_ok() && s.is_ok());
    EXPECT_TRUE(s.value()->shares_weights_with(*m.value()));
    for (uint32_t seed = 1; seed <= 3; ++seed) {
        const Bytes expected = run(normal, 24, 32, seed);
        ASSERT_FALSE(expected.empty());
        EXPECT_EQ(run(slave, 24, 32, seed), expected) << "seed " << seed;
        EXPECT_FALSE(run(master, 16, 16, seed).empty());
    }
    // The weights counted once: by the master.
    rknn_mem_size mm{}, sm{}, nm{};
    ASSERT_EQ(rknn_query(master, RKNN_QUERY_MEM_SIZE, &mm, sizeof(mm)), RKNN_SUCC);
    ASSERT_EQ(rknn_query(slave, RKNN_QUERY_MEM_SIZE, &sm, sizeof(sm)), RKNN_SUCC);
    ASSERT_EQ(rknn_query(normal, RKNN_QUERY_MEM_SIZE, &nm, sizeof(nm)), RKNN_SUCC);
    EXPECT_GT(mm.total_weight_size, 0u);
    EXPECT_EQ(sm.total_weight_size, 0u);
    EXPECT_LT(sm.total_dma_allocated_size + mm.total_weight_size / 2, nm.total_dma_allocated_size);
    // The master destroyed first: the slave keeps its weights.
    const Bytes before = run(slave, 24, 32, 9);
    EXPECT_EQ(rknn_destroy(master), RKNN_SUCC);
    EXPECT_EQ(run(slave, 24, 32, 9), before);
    EXPECT_EQ(rknn_destroy(slave), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(normal), RKNN_SUCC);
}

INSTANTIATE_TEST_SUITE_P(Fp16AndInt8, SharedWeights, ::testing::Values(TargetDType::kFloat16, TargetDType::kInt8),
                         [](const auto& param_info) {
                             return param_info.param == TargetDType::kInt8 ? std::string("int8") : std::string("fp16");
                         });

TEST(SharedWeightsErrors, MissingDestroyedAndIncompatibleMastersAreRefused) {
    const rknn::testing::MockSoc mock("rk3588");
    std::vector<std::string> lines;
    rknn::log::set_sink([&lines](const std::string& line) { lines.push_back(line); });
    auto logged = [&](const char* text) {
        for (const std::string& line : lines)
            if (line.find(text) != std::string::npos) return true;
        return false;
    };
    const std::string onnx = write_convs(7);
    const Bytes master_model = convert_to_bytes(options_for(onnx, TargetDType::kFloat16, {1, 3, 16, 16}));
    ConvertOptions slave_options = options_for(onnx, TargetDType::kFloat16, {1, 3, 24, 32});
    slave_options.remove_weights = true;
    slave_options.master_path = write_file(master_model, "errors_master.rknn");
    const Bytes slave_model = convert_to_bytes(slave_options);
    const Bytes other_model = convert_to_bytes(options_for(write_convs(8), TargetDType::kFloat16, {1, 3, 16, 16}));
    rknn_context master = 0, other = 0, ctx = 0;
    ASSERT_EQ(init(master_model, 0, 0, &master), RKNN_SUCC);
    ASSERT_EQ(init(other_model, 0, 0, &other), RKNN_SUCC);

    // No master: the flag is missing, or extend->ctx is.
    EXPECT_EQ(init(slave_model, 0, 0, &ctx), RKNN_ERR_MODEL_INVALID);
    EXPECT_TRUE(logged("RKNN_FLAG_SHARE_WEIGHT_MEM"));
    EXPECT_EQ(init(slave_model, RKNN_FLAG_SHARE_WEIGHT_MEM, 0, &ctx), RKNN_ERR_PARAM_INVALID);
    // Another model's weights.
    lines.clear();
    EXPECT_EQ(init(slave_model, RKNN_FLAG_SHARE_WEIGHT_MEM, other, &ctx), RKNN_ERR_MODEL_INVALID);
    EXPECT_TRUE(logged("incompatible master"));
    // A model with all its weights, on a master: nothing to share.
    EXPECT_EQ(init(master_model, RKNN_FLAG_SHARE_WEIGHT_MEM, master, &ctx), RKNN_ERR_MODEL_INVALID);
    // A destroyed master.
    EXPECT_EQ(rknn_destroy(master), RKNN_SUCC);
    lines.clear();
    EXPECT_EQ(init(slave_model, RKNN_FLAG_SHARE_WEIGHT_MEM, master, &ctx), RKNN_ERR_CTX_INVALID);
    EXPECT_TRUE(logged("master"));
    EXPECT_EQ(ctx, 0u);
    EXPECT_EQ(rknn_destroy(other), RKNN_SUCC);

    // The converter: --remove-weights needs --master, and a master of other weights shares nothing.
    ConvertOptions no_master = options_for(onnx, TargetDType::kFloat16, {1, 3, 24, 32});
    no_master.remove_weights = true;
    EXPECT_FALSE(rknn::convert::convert_onnx(no_master).is_ok());
    ConvertOptions unrelated = options_for(write_convs(8), TargetDType::kFloat16, {1, 3, 24, 32});
    unrelated.remove_weights = true;
    unrelated.master_path = slave_options.master_path;
    auto refused = rknn::convert::convert_onnx(unrelated);
    ASSERT_FALSE(refused.is_ok());
    EXPECT_NE(refused.status().message().find("no constant is the master's"), std::string::npos);
    rknn::log::set_sink(nullptr);
}

// An int8 slave calibrated at its own shapes (--calib-shapes wins over the
// master's): its weights are the master's, its biases and requantisation
// are not, so the runtime cannot run it on the master's weights and says
// which op.
TEST(SharedWeightsErrors, ASlaveQuantisedElsewhereIsRefusedNamingTheOp) {
    const rknn::testing::MockSoc mock("rk3588");
    std::vector<std::string> lines;
    rknn::log::set_sink([&lines](const std::string& line) { lines.push_back(line); });
    const std::string onnx = write_convs(7);
    const Bytes master_model = convert_to_bytes(options_for(onnx, TargetDType::kInt8, {1, 3, 16, 16}));
    ConvertOptions slave_options = options_for(onnx, TargetDType::kInt8, {1, 3, 24, 32});
    slave_options.remove_weights = true;
    slave_options.master_path = write_file(master_model, "requant_master.rknn");
    slave_options.calib_shapes = {{1, 3, 24, 32}};
    slave_options.dataset = write_dataset(24, 32);
    auto converted = rknn::convert::convert_onnx(slave_options);
    ASSERT_TRUE(converted.is_ok()) << converted.status().message();
    bool named_kept = false;
    for (const std::string& line : converted.value().log)
        named_kept = named_kept || line.find("kept, as the master") != std::string::npos;
    EXPECT_TRUE(named_kept) << "the converter names the constants it could not leave to the master";
    const Bytes slave_model = rknn::model::serialize_model(converted.value().graph).value();
    rknn_context master = 0, slave = 0;
    ASSERT_EQ(init(master_model, 0, 0, &master), RKNN_SUCC);
    EXPECT_EQ(init(slave_model, RKNN_FLAG_SHARE_WEIGHT_MEM, master, &slave), RKNN_ERR_MODEL_INVALID);
    bool named_op = false;
    for (const std::string& line : lines) named_op = named_op || line.find("packed weights of op") != std::string::npos;
    EXPECT_TRUE(named_op);
    EXPECT_EQ(rknn_destroy(master), RKNN_SUCC);
    rknn::log::set_sink(nullptr);
}

}  // namespace
