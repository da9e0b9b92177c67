// The model file: round trips, zero-copy weights, and rejection of bad files
// (truncated, corrupted, wrong magic, vendor .rknn, offsets and indices out of
// range) with a clear error and no crash (this suite also runs under ASan/UBSan).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/test_graphs.h"
#include "cpu/graph_executor.h"
#include "model/model_file.h"
#include "model/rknn_model_generated.h"

namespace {

using rknn::StatusCode;
using rknn::model::BufferOwnership;
using rknn::model::load_model_from_file;
using rknn::model::load_model_from_memory;
using rknn::model::serialize_model;

std::vector<uint8_t> serialized(const rknn::graph::Graph& g) {
    auto bytes = serialize_model(g);
    EXPECT_TRUE(bytes.is_ok()) << bytes.status().message();
    return bytes.value();
}

void expect_same_graph(const rknn::graph::Graph& a, const rknn::graph::Graph& b) {
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    ASSERT_EQ(a.ops.size(), b.ops.size());
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.outputs, b.outputs);
    EXPECT_EQ(a.target_soc, b.target_soc);
    EXPECT_EQ(a.custom_string, b.custom_string);
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
        EXPECT_EQ(a.tensors[i].dtype, b.tensors[i].dtype);
        EXPECT_EQ(a.tensors[i].shape, b.tensors[i].shape);
        EXPECT_EQ(a.tensors[i].quant, b.tensors[i].quant);
        const rknn::graph::Buffer* ba = a.constant_buffer(static_cast<int32_t>(i));
        const rknn::graph::Buffer* bb = b.constant_buffer(static_cast<int32_t>(i));
        ASSERT_EQ(ba == nullptr, bb == nullptr);
        if (ba) {
            ASSERT_EQ(ba->size, bb->size);
            EXPECT_EQ(std::memcmp(ba->data, bb->data, ba->size), 0) << a.tensors[i].name;
            EXPECT_EQ(reinterpret_cast<uintptr_t>(bb->data) % 64, 0u) << "weights are 64-byte aligned";
        }
    }
    for (size_t i = 0; i < a.ops.size(); ++i) {
        EXPECT_EQ(a.ops[i].type, b.ops[i].type);
        EXPECT_EQ(a.ops[i].name, b.ops[i].name);
        EXPECT_EQ(a.ops[i].inputs, b.ops[i].inputs);
        EXPECT_EQ(a.ops[i].outputs, b.ops[i].outputs);
        EXPECT_EQ(a.ops[i].attrs.items().size(), b.ops[i].attrs.items().size());
    }
}

TEST(ModelFile, RoundTripKeepsEverything) {
    rknn::graph::Graph g = rknn::testing::small_cnn();
    g.tensors[g.inputs[0]].quant.scales = {0.5f};
    g.tensors[g.inputs[0]].quant.zero_points = {-3};
    g.preprocess.push_back({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}, true, rknn::graph::Layout::kNHWC,
                            rknn::graph::DType::kUInt8});
    g.shape_sets = {{{1, 3, 8, 8}}};
    g.custom_ops.push_back({"cstThing", {}});
    g.batch = 4;
    const std::vector<uint8_t> bytes = serialized(g);
    auto loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
    ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
    expect_same_graph(g, loaded.value());
    ASSERT_EQ(loaded->preprocess.size(), 1u);
    EXPECT_EQ(loaded->preprocess[0].mean, (std::vector<float>{1, 2, 3}));
    EXPECT_TRUE(loaded->preprocess[0].reverse_channels);
    EXPECT_EQ(loaded->preprocess[0].user_layout, rknn::graph::Layout::kNHWC);
    EXPECT_EQ(loaded->shape_sets, g.shape_sets);
    ASSERT_EQ(loaded->custom_ops.size(), 1u);
    EXPECT_EQ(loaded->custom_ops[0].type, "cstThing");
    EXPECT_EQ(loaded->batch, 4u);
    // A batch outside 1..256 is refused.
    for (uint32_t bad : {0u, 257u}) {
        g.batch = bad;
        const std::vector<uint8_t> hostile = serialized(g);
        auto refused = load_model_from_memory(hostile.data(), hostile.size(), BufferOwnership::kCopy);
        ASSERT_FALSE(refused.is_ok()) << bad;
        EXPECT_NE(refused.status().message().find("batch"), std::string::npos);
    }
}

TEST(ModelFile, LoadedModelComputesTheSameAsTheOriginal) {
    const rknn::graph::Graph g = rknn::testing::small_cnn();
    const std::vector<uint8_t> bytes = serialized(g);
    auto loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
    ASSERT_TRUE(loaded.is_ok());
    rknn::cpu::HostTensor input(rknn::graph::DType::kFloat32, {1, 3, 8, 8});
    for (int64_t i = 0; i < input.numel(); ++i) input.data<float>()[i] = static_cast<float>((i % 17) - 8) / 8.0f;
    std::vector<rknn::cpu::HostTensor> a, b;
    ASSERT_TRUE(rknn::cpu::GraphExecutor::create(g).value()->run({input}, &a).is_ok());
    ASSERT_TRUE(rknn::cpu::GraphExecutor::create(loaded.value()).value()->run({input}, &b).is_ok());
    ASSERT_EQ(a[0].byte_size(), b[0].byte_size());
    EXPECT_EQ(std::memcmp(a[0].raw(), b[0].raw(), a[0].byte_size()), 0);
}

TEST(ModelFile, BorrowedAlignedBuffersAreUsedInPlace) {
    const std::vector<uint8_t> bytes = serialized(rknn::testing::small_cnn());
    rknn::AlignedBytes aligned(bytes.size());
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    auto loaded = load_model_from_memory(aligned.data(), aligned.size(), BufferOwnership::kBorrow);
    ASSERT_TRUE(loaded.is_ok());
    for (const rknn::graph::Buffer& b : loaded->buffers) {
        EXPECT_GE(b.data, aligned.data());
        EXPECT_LE(b.data + b.size, aligned.data() + aligned.size()) << "no copy of the weights";
    }
}

TEST(ModelFile, FilesAreMappedNotCopied) {
    const std::vector<uint8_t> bytes = serialized(rknn::testing::small_cnn());
    const std::string path = ::testing::TempDir() + "/model_file_test.rknn";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto loaded = load_model_from_file(path);
    ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
    expect_same_graph(rknn::testing::small_cnn(), loaded.value());
    ASSERT_FALSE(loaded->buffers.empty());
    EXPECT_NE(loaded->buffers[0].keep_alive, nullptr) << "the mapping stays alive with the graph";
    std::remove(path.c_str());
    auto missing = load_model_from_file(path);
    EXPECT_FALSE(missing.is_ok());
}

TEST(ModelFile, VendorModelsAreRecognisedWithAHelpfulMessage) {
    std::vector<uint8_t> vendor(4096, 0);
    std::memcpy(vendor.data(), "RKNN", 4);
    vendor[8] = 6;
    auto loaded = load_model_from_memory(vendor.data(), vendor.size(), BufferOwnership::kCopy);
    ASSERT_FALSE(loaded.is_ok());
    EXPECT_EQ(loaded.status().code(), StatusCode::kModelInvalid);
    EXPECT_NE(loaded.status().message().find("vendor-compiled"), std::string::npos);
    EXPECT_NE(loaded.status().message().find("rknn_convert"), std::string::npos);
}

TEST(ModelFile, WrongMagicAndTinyFilesAreRejected) {
    std::vector<uint8_t> bytes = serialized(rknn::testing::small_cnn());
    bytes[8] = 'X';  // the file identifier follows the 4-byte size prefix
    auto loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
    ASSERT_FALSE(loaded.is_ok());
    EXPECT_NE(loaded.status().message().find("ORKN"), std::string::npos);
    const uint8_t tiny[3] = {1, 2, 3};
    EXPECT_FALSE(load_model_from_memory(tiny, sizeof(tiny), BufferOwnership::kCopy).is_ok());
    EXPECT_FALSE(load_model_from_memory(nullptr, 100, BufferOwnership::kCopy).is_ok());
}

TEST(ModelFile, EveryTruncationIsRejected) {
    const std::vector<uint8_t> bytes = serialized(rknn::testing::small_cnn());
    for (size_t length = 0; length < bytes.size(); ++length) {
        auto loaded = load_model_from_memory(bytes.data(), length, BufferOwnership::kCopy);
        EXPECT_FALSE(loaded.is_ok()) << "accepted a file cut at " << length << " of " << bytes.size();
    }
}

TEST(ModelFile, RandomCorruptionNeverCrashes) {
    const std::vector<uint8_t> clean = serialized(rknn::testing::small_cnn());
    std::mt19937 rng(20261121);
    int rejected = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        std::vector<uint8_t> bytes = clean;
        const int flips = 1 + static_cast<int>(rng() % 8);
        for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
        auto loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
        if (!loaded.is_ok()) {
            ++rejected;
            EXPECT_FALSE(loaded.status().message().empty());
            continue;
        }
        // Whatever loads must be safe to run.
        rknn::cpu::HostTensor input(loaded->tensors[loaded->inputs[0]].dtype, {1, 3, 8, 8});
        std::vector<rknn::cpu::HostTensor> out;
        auto exec = rknn::cpu::GraphExecutor::create(loaded.value());
        if (exec.is_ok() && loaded->tensors[loaded->inputs[0]].shape == rknn::graph::Shape{1, 3, 8, 8}) {
            (void)exec.value()->run({input}, &out);
        }
    }
    std::printf("random corruption: %d of 3000 corrupted files rejected\n", rejected);
    EXPECT_GT(rejected, 0);
}

// Builds a model whose graph is structurally wrong in a chosen way.
std::vector<uint8_t> with_defect(void (*damage)(rknn::graph::Graph*)) {
    rknn::graph::Graph g = rknn::testing::small_cnn();
    damage(&g);
    return serialized(g);
}

TEST(ModelFile, StructuralDefectsAreRejected) {
    struct Case {
        const char* what;
        void (*damage)(rknn::graph::Graph*);
    };
    const Case cases[] = {
        {"op input index past the tensor list", [](rknn::graph::Graph* g) { g->ops[1].inputs[0] = 999; }},
        {"negative op output", [](rknn::graph::Graph* g) { g->ops[0].outputs[0] = -5; }},
        {"graph output out of range", [](rknn::graph::Graph* g) { g->outputs[0] = 12345; }},
        {"tensor written twice", [](rknn::graph::Graph* g) { g->ops[1].outputs[0] = g->ops[0].outputs[0]; }},
        {"a cycle", [](rknn::graph::Graph* g) { g->ops[0].inputs[0] = g->ops[1].outputs[0]; }},
        {"buffer index out of range", [](rknn::graph::Graph* g) { g->tensors[1].buffer = 77; }},
        {"constant of the wrong size", [](rknn::graph::Graph* g) { g->tensors[1].shape = {8, 3, 3, 4}; }},
        {"shape that contradicts the op", [](rknn::graph::Graph* g) { g->tensors[g->ops[0].outputs[0]].shape = {1, 9, 8, 8}; }},
        {"op with too many inputs", [](rknn::graph::Graph* g) { g->ops[1].inputs.push_back(0); }},
        {"per-channel scales that do not match the axis",
         [](rknn::graph::Graph* g) {
             g->tensors[1].quant.scales = {1.0f, 2.0f};
             g->tensors[1].quant.axis = 0;
         }},
        {"zero scale", [](rknn::graph::Graph* g) { g->tensors[0].quant.scales = {0.0f}; }},
        {"int8 zero point outside int8",
         [](rknn::graph::Graph* g) {
             g->tensors[0].dtype = rknn::graph::DType::kInt8;
             g->tensors[0].quant.scales = {0.5f};
             g->tensors[0].quant.zero_points = {-2147483647 - 1};
         }},
        {"pre-processing for a missing input",
         [](rknn::graph::Graph* g) { g->preprocess.resize(3); }},
        {"shape set of the wrong size", [](rknn::graph::Graph* g) { g->shape_sets = {{{1, 3, 8, 8}, {1}}}; }},
        {"too many shape sets", [](rknn::graph::Graph* g) { g->shape_sets.assign(513, {{1, 3, 8, 8}}); }},
        {"std of zero",
         [](rknn::graph::Graph* g) {
             g->preprocess.resize(1);
             g->preprocess[0].std = {0.0f, 1.0f, 1.0f};
         }},
    };
    for (const Case& c : cases) {
        const std::vector<uint8_t> bytes = with_defect(c.damage);
        auto loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
        ASSERT_FALSE(loaded.is_ok()) << "accepted: " << c.what;
        EXPECT_EQ(loaded.status().code(), StatusCode::kModelInvalid) << c.what << ": " << loaded.status().message();
    }
}

TEST(ModelFile, BufferOffsetsPastTheDataSectionAreRejected) {
    // Rewrite one buffer's offset inside an otherwise valid file.
    std::vector<uint8_t> bytes = serialized(rknn::testing::small_cnn());
    auto* model = flatbuffers::GetMutableSizePrefixedRoot<openrknn::fb::Model>(bytes.data());
    auto* buffer = model->mutable_buffers()->GetMutableObject(0);
    ASSERT_TRUE(buffer->mutate_offset(1u << 30));
    auto loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
    ASSERT_FALSE(loaded.is_ok());
    EXPECT_NE(loaded.status().message().find("outside the data section"), std::string::npos) << loaded.status().message();
    ASSERT_TRUE(buffer->mutate_offset(64 + 1));
    loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
    ASSERT_FALSE(loaded.is_ok());
    EXPECT_NE(loaded.status().message().find("aligned"), std::string::npos);
}

// Inputs the fuzzer once tripped on (tests/fuzz/corpus) must load or fail cleanly.
TEST(ModelFile, FuzzerFindingsStayFixed) {
    int replayed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(RKNN_FUZZ_CORPUS_DIR)) {
        std::ifstream in(entry.path(), std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        (void)load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
        ++replayed;
    }
    EXPECT_GT(replayed, 0);
}

TEST(ModelFile, NewerSchemaMajorVersionIsRejected) {
    std::vector<uint8_t> bytes = serialized(rknn::testing::small_cnn());
    auto* model = flatbuffers::GetMutableSizePrefixedRoot<openrknn::fb::Model>(bytes.data());
    ASSERT_TRUE(model->mutate_schema_version_major(2));
    auto loaded = load_model_from_memory(bytes.data(), bytes.size(), BufferOwnership::kCopy);
    ASSERT_FALSE(loaded.is_ok());
    EXPECT_NE(loaded.status().message().find("schema version 2"), std::string::npos);
}

}  // namespace
