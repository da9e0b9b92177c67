// Memory the client provides, through the exported functions on the mock
// device (spec 4.3, 5.5): RKNN_FLAG_MEM_ALLOC_OUTSIDE (weights, internal
// tensors and I/O), RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE, one internal region
// shared by two models run in turn (rknn_internal_mem_reuse_demo), I/O the
// NPU reads and writes in place, memory made before any context, and
// RKNN_FLAG_COLLECT_MODEL_INFO_ONLY.
// Every output is compared with a context that allocates everything itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "api/context_handle.h"
#include "model/model_file.h"
#include "rknn_api.h"
#include "runtime/context.h"
#include "runtime/contract_models.h"

namespace {

namespace graph = rknn::graph;
using rknn::testing::conv_pool_model;
using rknn::testing::init_graph;
using rknn::testing::input_of;
using rknn::testing::pixels;
using rknn::testing::quantized_cnn;

constexpr uint32_t kQuiet = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY;


rknn_mem_size mem_size(rknn_context ctx) {
    rknn_mem_size size{};
    EXPECT_EQ(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &size, sizeof(size)), RKNN_SUCC);
    return size;
}

rknn_tensor_attr query_attr(rknn_context ctx, rknn_query_cmd cmd, uint32_t index = 0) {
    rknn_tensor_attr attr{};
    attr.index = index;
    EXPECT_EQ(rknn_query(ctx, cmd, &attr, sizeof(attr)), RKNN_SUCC);
    return attr;
}

// Output 0 as float32 NCHW after running pixels `p` through the general API.
std::vector<float> read_outputs(rknn_context ctx);
std::vector<float> run_general(rknn_context ctx, std::vector<uint8_t> p) {
    rknn_input in = input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    EXPECT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    return read_outputs(ctx);
}

std::vector<float> read_outputs(rknn_context ctx) {
    rknn_output out{};
    out.want_float = 1;
    EXPECT_EQ(rknn_outputs_get(ctx, 1, &out, nullptr), RKNN_SUCC);
    const auto* f = static_cast<const float*>(out.buf);
    std::vector<float> values(f, f + (f != nullptr ? out.size / sizeof(float) : 0));
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    return values;
}

void set_pixels(rknn_context ctx, std::vector<uint8_t> p) {
    rknn_input in = input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
}

size_t in_place_bindings(rknn_context ctx) {
    auto context = rknn::api::runtime_context(ctx);
    return context.is_ok() ? context.value()->in_place_bindings() : 0;
}

class ExternalMemory : public ::testing::Test {
protected:
    rknn_context init(const graph::Graph& g, uint32_t flags) {
        rknn_context ctx = 0;
        EXPECT_EQ(init_graph(g, kQuiet | flags, &ctx), RKNN_SUCC);
        if (ctx != 0) contexts_.push_back(ctx);
        return ctx;
    }
    rknn_tensor_mem* keep(rknn_context ctx, rknn_tensor_mem* mem) {
        if (mem != nullptr) mems_.push_back({ctx, mem});
        return mem;
    }
    // The native input (pass_through) and output bound in memory of the
    // context's own making, which the NPU reads and writes in place.
    struct NativeIo {
        rknn_tensor_attr in_attr{}, out_attr{};
        rknn_tensor_mem* in = nullptr;
        rknn_tensor_mem* out = nullptr;
    };
    NativeIo bind_native_io(rknn_context ctx) {
        NativeIo io;
        io.in_attr = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR);
        io.in_attr.pass_through = 1;
        io.out_attr = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR);
        io.in = keep(ctx, rknn_create_mem(ctx, io.in_attr.size_with_stride));
        io.out = keep(ctx, rknn_create_mem(ctx, io.out_attr.size_with_stride));
        EXPECT_EQ(rknn_set_io_mem(ctx, io.in, &io.in_attr), RKNN_SUCC);
        EXPECT_EQ(rknn_set_io_mem(ctx, io.out, &io.out_attr), RKNN_SUCC);
        EXPECT_EQ(in_place_bindings(ctx), 2u);
        return io;
    }
    void TearDown() override {
        for (auto& [ctx, mem] : mems_) EXPECT_EQ(rknn_destroy_mem(ctx, mem), RKNN_SUCC);
        for (rknn_context ctx : contexts_) EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    }
    std::vector<rknn_context> contexts_;
    std::vector<std::pair<rknn_context, rknn_tensor_mem*>> mems_;
};

// Flow C: weights, internal tensors and I/O all in client memory.
TEST_F(ExternalMemory, AllMemoryOutsideGivesTheSameOutputs) {
    const graph::Graph g = quantized_cnn();
    const rknn_context general = init(g, 0);
    const rknn_context ctx = init(g, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
    ASSERT_NE(ctx, 0u);
    const rknn_mem_size own = mem_size(general), outside = mem_size(ctx);
    EXPECT_EQ(outside.total_weight_size, own.total_weight_size);
    EXPECT_GT(outside.total_weight_size, 0u);
    // The I/O staging joins the internal region; the runtime allocates only its command streams.
    EXPECT_GT(outside.total_internal_size, own.total_internal_size);
    EXPECT_LE(uint64_t{outside.total_dma_allocated_size} + own.total_weight_size + own.total_internal_size,
              uint64_t{own.total_dma_allocated_size});

    // Nothing runs before the memory is there.
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_ERR_FAIL);
    std::vector<uint8_t> p = pixels(3);
    rknn_input in = input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    EXPECT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_ERR_FAIL) << "inputs are staged in the internal memory";

    rknn_tensor_mem* weights = keep(ctx, rknn_create_mem(ctx, outside.total_weight_size));
    rknn_tensor_mem* internal = keep(ctx, rknn_create_mem(ctx, outside.total_internal_size));
    ASSERT_NE(weights, nullptr);
    ASSERT_NE(internal, nullptr);
    weights->size -= 1;
    EXPECT_EQ(rknn_set_weight_mem(ctx, weights), RKNN_ERR_PARAM_INVALID) << "one byte short";
    weights->size += 1;
    internal->size -= 1;
    EXPECT_EQ(rknn_set_internal_mem(ctx, internal), RKNN_ERR_PARAM_INVALID) << "one byte short";
    internal->size += 1;
    ASSERT_EQ(rknn_set_weight_mem(ctx, weights), RKNN_SUCC);
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_ERR_FAIL) << "no internal memory yet";
    ASSERT_EQ(rknn_set_internal_mem(ctx, internal), RKNN_SUCC);
    // The runtime copied the model's weights there.
    const auto* w = static_cast<const uint8_t*>(weights->virt_addr);
    EXPECT_TRUE(std::any_of(w, w + weights->size, [](uint8_t b) { return b != 0; }));

    for (uint32_t seed : {11u, 12u, 13u}) {
        const std::vector<uint8_t> q = pixels(seed);
        EXPECT_EQ(run_general(ctx, q), run_general(general, q)) << "seed " << seed;
    }
    // Outputs bound in place after inputs were set with rknn_inputs_set: the
    // binding, not the earlier frame, gives the input.
    {
        const rknn_context zc = init(g, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
        rknn_tensor_mem* zc_weights = keep(zc, rknn_create_mem(zc, outside.total_weight_size));
        rknn_tensor_mem* zc_internal = keep(zc, rknn_create_mem(zc, outside.total_internal_size));
        ASSERT_EQ(rknn_set_weight_mem(zc, zc_weights), RKNN_SUCC);
        ASSERT_EQ(rknn_set_internal_mem(zc, zc_internal), RKNN_SUCC);
        set_pixels(zc, pixels(15));
        ASSERT_EQ(rknn_run(zc, nullptr), RKNN_SUCC);
        rknn_tensor_attr native = query_attr(zc, RKNN_QUERY_NATIVE_INPUT_ATTR);
        native.pass_through = 1;
        rknn_tensor_mem* in_mem = keep(zc, rknn_create_mem(zc, native.size_with_stride));
        ASSERT_EQ(rknn_set_io_mem(zc, in_mem, &native), RKNN_SUCC);
        EXPECT_EQ(in_place_bindings(zc), 1u);
        // The native form of pixels 16, as the general context's pass_through takes it.
        std::vector<uint8_t> bytes(native.size_with_stride);
        std::mt19937 rng(16);
        for (uint8_t& v : bytes) v = static_cast<uint8_t>(rng());
        std::memcpy(in_mem->virt_addr, bytes.data(), bytes.size());
        ASSERT_EQ(rknn_run(zc, nullptr), RKNN_SUCC);
        rknn_input passed = input_of(bytes.data(), static_cast<uint32_t>(bytes.size()), RKNN_TENSOR_INT8, native.fmt);
        passed.pass_through = 1;
        ASSERT_EQ(rknn_inputs_set(general, 1, &passed), RKNN_SUCC);
        ASSERT_EQ(rknn_run(general, nullptr), RKNN_SUCC);
        EXPECT_EQ(read_outputs(zc), read_outputs(general));
    }

    // A duplicate shares the weights and needs internal memory of its own.
    rknn_context dup = 0;
    rknn_context original = ctx;
    ASSERT_EQ(rknn_dup_context(&original, &dup), RKNN_SUCC);
    contexts_.push_back(dup);
    EXPECT_EQ(rknn_run(dup, nullptr), RKNN_ERR_FAIL);
    rknn_tensor_mem* dup_internal = keep(dup, rknn_create_mem(dup, outside.total_internal_size));
    ASSERT_EQ(rknn_set_internal_mem(dup, dup_internal), RKNN_SUCC);
    const std::vector<uint8_t> q = pixels(14);
    EXPECT_EQ(run_general(dup, q), run_general(general, q));
}

// rknn_internal_mem_reuse_demo: two models, one internal region (the larger
// size) wrapped once per context from the same fd, run in turn.
TEST_F(ExternalMemory, TwoModelsShareOneInternalRegion) {
    const graph::Graph big = quantized_cnn(), small = conv_pool_model();
    const rknn_context ref_a = init(big, 0), ref_b = init(small, 0);
    const rknn_context a = init(big, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
    const rknn_context b = init(small, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
    ASSERT_NE(b, 0u);
    const rknn_mem_size size_a = mem_size(a), size_b = mem_size(b);
    const uint32_t shared = std::max(size_a.total_internal_size, size_b.total_internal_size);
    rknn_tensor_mem* pool = keep(a, rknn_create_mem(a, shared));
    ASSERT_NE(pool, nullptr);
    rknn_tensor_mem* for_a = keep(a, rknn_create_mem_from_fd(a, pool->fd, pool->virt_addr, size_a.total_internal_size, 0));
    rknn_tensor_mem* for_b = keep(b, rknn_create_mem_from_fd(b, pool->fd, pool->virt_addr, size_b.total_internal_size, 0));
    ASSERT_NE(for_a, nullptr);
    ASSERT_NE(for_b, nullptr);
    ASSERT_EQ(rknn_set_internal_mem(a, for_a), RKNN_SUCC);
    ASSERT_EQ(rknn_set_internal_mem(b, for_b), RKNN_SUCC) << "B imports A's buffer";
    for (rknn_context ctx : {a, b}) {
        rknn_tensor_mem* weights = keep(ctx, rknn_create_mem(ctx, mem_size(ctx).total_weight_size));
        ASSERT_EQ(rknn_set_weight_mem(ctx, weights), RKNN_SUCC);
    }
    for (uint32_t seed : {21u, 22u, 23u}) {
        const std::vector<uint8_t> p = pixels(seed);
        EXPECT_EQ(run_general(a, p), run_general(ref_a, p)) << "seed " << seed;
        EXPECT_EQ(run_general(b, p), run_general(ref_b, p)) << "seed " << seed;
    }
    // Inputs set on A stay A's while B runs over the same memory, and so do
    // A's outputs after its run.
    set_pixels(a, pixels(31));
    (void)run_general(b, pixels(32));
    ASSERT_EQ(rknn_run(a, nullptr), RKNN_SUCC);
    set_pixels(b, pixels(33));
    ASSERT_EQ(rknn_run(b, nullptr), RKNN_SUCC);
    EXPECT_EQ(read_outputs(a), run_general(ref_a, pixels(31)));
    EXPECT_EQ(read_outputs(b), run_general(ref_b, pixels(33)));
}

// RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE: only the internal tensors are the client's.
TEST_F(ExternalMemory, InternalMemoryOutsideOnly) {
    const graph::Graph g = quantized_cnn();
    const rknn_context general = init(g, 0);
    const rknn_context ctx = init(g, RKNN_FLAG_INTERNAL_ALLOC_OUTSIDE);
    ASSERT_NE(ctx, 0u);
    const rknn_mem_size size = mem_size(ctx);
    EXPECT_EQ(size.total_internal_size, mem_size(general).total_internal_size) << "I/O keep buffers of their own";
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_ERR_FAIL);
    set_pixels(ctx, pixels(41));  // inputs have their own buffers here

    rknn_tensor_mem* pool = keep(ctx, rknn_create_mem(ctx, size.total_internal_size + 256));
    ASSERT_NE(pool, nullptr);
    rknn_tensor_mem* misaligned = keep(ctx, rknn_create_mem_from_fd(ctx, pool->fd, nullptr, size.total_internal_size, 64));
    EXPECT_EQ(rknn_set_internal_mem(ctx, misaligned), RKNN_ERR_PARAM_INVALID) << "NPU addresses start on 128 bytes";
    rknn_tensor_mem* region = keep(ctx, rknn_create_mem_from_fd(ctx, pool->fd, nullptr, size.total_internal_size, 128));
    ASSERT_EQ(rknn_set_internal_mem(ctx, region), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(read_outputs(ctx), run_general(general, pixels(41)));
    // The same (cacheable) buffer given by its physical address and mapping:
    // recognised as the runtime's, so its caches are still kept.
    rknn_tensor_mem* by_phys = keep(ctx, rknn_create_mem_from_phys(ctx, pool->phys_addr + 256, static_cast<uint8_t*>(pool->virt_addr) + 256,
                                                                   size.total_internal_size));
    ASSERT_EQ(rknn_set_internal_mem(ctx, by_phys), RKNN_SUCC);
    set_pixels(ctx, pixels(42));
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(read_outputs(ctx), run_general(general, pixels(42)));
    // The weights are the runtime's here.
    rknn_tensor_mem* weights = keep(ctx, rknn_create_mem(ctx, size.total_weight_size));
    EXPECT_EQ(rknn_set_weight_mem(ctx, weights), RKNN_ERR_FAIL);
    // And a context holding all its memory takes none from the client.
    rknn_tensor_mem* other = keep(general, rknn_create_mem(general, size.total_internal_size));
    EXPECT_EQ(rknn_set_internal_mem(general, other), RKNN_ERR_FAIL);
    EXPECT_EQ(rknn_set_internal_mem(ctx, nullptr), RKNN_ERR_PARAM_INVALID);
}

// rknn_set_io_mem in the native layout, of memory the NPU reaches: the NPU
// reads the input and writes the output in the client's buffers.
TEST_F(ExternalMemory, NativeBindingsAreUsedInPlace) {
    const graph::Graph g = conv_pool_model();
    const rknn_context reference = init(g, 0);
    const rknn_context ctx = init(g, RKNN_FLAG_DISABLE_FLUSH_INPUT_MEM_CACHE);
    ASSERT_NE(ctx, 0u);
    NativeIo io = bind_native_io(ctx);
    ASSERT_FALSE(HasFailure());
    rknn_tensor_attr& in_attr = io.in_attr;
    rknn_tensor_attr& out_attr = io.out_attr;
    ASSERT_EQ(out_attr.fmt, RKNN_TENSOR_NC1HWC2);
    rknn_tensor_mem* in_mem = io.in;
    rknn_tensor_mem* out_mem = io.out;

    // The reference binds the same layouts in memory the NPU cannot reach
    // (no fd, no physical address): copied at every run.
    std::vector<uint8_t> ref_in(in_attr.size_with_stride), ref_out(out_attr.size_with_stride);
    rknn_tensor_mem* ref_in_mem = keep(reference, rknn_create_mem_from_phys(reference, 0, ref_in.data(), static_cast<uint32_t>(ref_in.size())));
    rknn_tensor_mem* ref_out_mem = keep(reference, rknn_create_mem_from_phys(reference, 0, ref_out.data(), static_cast<uint32_t>(ref_out.size())));
    ASSERT_EQ(rknn_set_io_mem(reference, ref_in_mem, &in_attr), RKNN_SUCC);
    ASSERT_EQ(rknn_set_io_mem(reference, ref_out_mem, &out_attr), RKNN_SUCC);
    EXPECT_EQ(in_place_bindings(reference), 0u);

    std::mt19937 rng(5);
    const auto native_input = [&] {
        std::vector<uint8_t> bytes(in_attr.size_with_stride);
        for (uint8_t& v : bytes) v = static_cast<uint8_t>(rng());
        return bytes;
    };
    const auto expected_for = [&](const std::vector<uint8_t>& bytes) {
        std::memcpy(ref_in.data(), bytes.data(), bytes.size());
        EXPECT_EQ(rknn_run(reference, nullptr), RKNN_SUCC);
        return ref_out;
    };
    const auto output = [&] {
        const auto* o = static_cast<const uint8_t*>(out_mem->virt_addr);
        return std::vector<uint8_t>(o, o + out_mem->size);
    };
    const std::vector<uint8_t> first = native_input(), second = native_input();
    std::memcpy(in_mem->virt_addr, first.data(), first.size());
    ASSERT_EQ(rknn_mem_sync(ctx, in_mem, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    const std::vector<uint8_t> expected_first = expected_for(first);
    EXPECT_EQ(output(), expected_first);
    // With DISABLE_FLUSH_INPUT_MEM_CACHE the CPU's writes reach the NPU only
    // through the client's sync: the NPU reads the client's buffer itself.
    std::memcpy(in_mem->virt_addr, second.data(), second.size());
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(output(), expected_first) << "the mock NPU still sees the synced bytes";
    ASSERT_EQ(rknn_mem_sync(ctx, in_mem, RKNN_MEMORY_SYNC_TO_DEVICE), RKNN_SUCC);
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(output(), expected_for(second));
    EXPECT_NE(expected_for(second), expected_first);

    // Bound again in another layout: copied again, the runtime's buffer back in place.
    rknn_tensor_attr pixel_attr = query_attr(ctx, RKNN_QUERY_INPUT_ATTR);
    pixel_attr.type = RKNN_TENSOR_UINT8;
    pixel_attr.fmt = RKNN_TENSOR_NHWC;
    rknn_tensor_mem* pixel_mem = keep(ctx, rknn_create_mem(ctx, pixel_attr.n_elems));
    ASSERT_EQ(rknn_set_io_mem(ctx, pixel_mem, &pixel_attr), RKNN_SUCC);
    EXPECT_EQ(in_place_bindings(ctx), 1u);
    const std::vector<uint8_t> p = pixels(51);
    std::memcpy(pixel_mem->virt_addr, p.data(), p.size());
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    const std::vector<uint8_t> in_place_out = output();
    std::vector<uint8_t> copy = p;
    rknn_input in = input_of(copy.data(), static_cast<uint32_t>(copy.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    const rknn_context general = init(g, 0);
    ASSERT_EQ(rknn_inputs_set(general, 1, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(general, nullptr), RKNN_SUCC);
    rknn_output raw{};
    ASSERT_EQ(rknn_outputs_get(general, 1, &raw, nullptr), RKNN_SUCC);
    // The native cube against the general API's NCHW int8: C2 channels per atom.
    const rknn_tensor_attr nchw = query_attr(general, RKNN_QUERY_OUTPUT_ATTR);
    const uint32_t c = nchw.dims[1], h = nchw.dims[2], w = nchw.dims[3], c2 = out_attr.dims[4];
    size_t differ = 0;
    for (uint32_t ch = 0; ch < c; ++ch)
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) {
                const size_t cube = ((static_cast<size_t>(ch / c2) * h + y) * w + x) * c2 + ch % c2;
                if (in_place_out[cube] != static_cast<const uint8_t*>(raw.buf)[(static_cast<size_t>(ch) * h + y) * w + x]) ++differ;
            }
    EXPECT_EQ(differ, 0u);
    EXPECT_EQ(rknn_outputs_release(general, 1, &raw), RKNN_SUCC);
}

// RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE: an output the NPU writes in the
// client's buffer is not invalidated; the client's rknn_mem_sync brings it in.
TEST_F(ExternalMemory, InPlaceOutputsAreTheClientsToSync) {
    const graph::Graph g = conv_pool_model();
    const rknn_context reference = init(g, 0);
    const rknn_context ctx = init(g, RKNN_FLAG_DISABLE_FLUSH_OUTPUT_MEM_CACHE);
    ASSERT_NE(ctx, 0u);
    std::mt19937 rng(9);
    std::vector<uint8_t> input;
    std::vector<std::vector<uint8_t>> outputs;
    for (const rknn_context c : {reference, ctx}) {
        const NativeIo io = bind_native_io(c);
        ASSERT_FALSE(HasFailure());
        if (input.empty()) {
            input.resize(io.in_attr.size_with_stride);
            for (uint8_t& v : input) v = static_cast<uint8_t>(rng());
        }
        std::memcpy(io.in->virt_addr, input.data(), input.size());
        ASSERT_EQ(rknn_run(c, nullptr), RKNN_SUCC);
        const auto* o = static_cast<const uint8_t*>(io.out->virt_addr);
        outputs.emplace_back(o, o + io.out->size);
        ASSERT_EQ(rknn_mem_sync(c, io.out, RKNN_MEMORY_SYNC_FROM_DEVICE), RKNN_SUCC);
        outputs.emplace_back(o, o + io.out->size);
    }
    const std::vector<uint8_t> zeros(outputs[0].size(), 0);
    ASSERT_NE(outputs[0], zeros) << "the reference's output, invalidated by the runtime";
    EXPECT_EQ(outputs[1], outputs[0]);
    EXPECT_EQ(outputs[2], zeros) << "not invalidated: the CPU still sees what it saw before the run";
    EXPECT_EQ(outputs[3], outputs[0]) << "after the client's sync";
}

// An input that is also an output would have two bindings for one buffer:
// its name names both, and rknn_set_io_mem refuses it either way.
TEST_F(ExternalMemory, ATensorListedTwiceIsNotBound) {
    graph::Graph g = quantized_cnn();
    g.outputs.push_back(g.inputs[0]);
    const rknn_context ctx = init(g, 0);
    ASSERT_NE(ctx, 0u);
    rknn_tensor_attr in_attr = query_attr(ctx, RKNN_QUERY_NATIVE_INPUT_ATTR);
    in_attr.pass_through = 1;
    rknn_tensor_attr echo_attr = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR, 1);
    ASSERT_STREQ(in_attr.name, echo_attr.name);
    rknn_tensor_mem* mem = keep(ctx, rknn_create_mem(ctx, in_attr.size_with_stride));
    ASSERT_NE(mem, nullptr);
    EXPECT_EQ(rknn_set_io_mem(ctx, mem, &in_attr), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_set_io_mem(ctx, mem, &echo_attr), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(in_place_bindings(ctx), 0u);
    // The general API still runs it.
    std::vector<uint8_t> p = pixels(3);
    rknn_input in = input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
}

// RKNN_MEM_FLAG_ALLOC_NO_CONTEXT: memory made before any context, then
// given to one as its weights and internal memory (imported there).
TEST_F(ExternalMemory, MemoryMadeWithoutAContext) {
    const graph::Graph g = quantized_cnn();
    const rknn_context general = init(g, 0);
    const rknn_mem_size size = mem_size(general);
    rknn_tensor_mem* weights = rknn_create_mem2(0, size.total_weight_size, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
    rknn_tensor_mem* internal = rknn_create_mem2(0, size.total_internal_size + 4096,
                                                 RKNN_MEM_FLAG_ALLOC_NO_CONTEXT | RKNN_FLAG_MEMORY_NON_CACHEABLE);
    ASSERT_NE(weights, nullptr);
    ASSERT_NE(internal, nullptr);
    EXPECT_GE(weights->fd, 0);
    EXPECT_NE(weights->phys_addr, 0u);
    EXPECT_EQ(rknn_create_mem2(0, 64, 0), nullptr) << "no context and no flag";
    const rknn_context ctx = init(g, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
    ASSERT_NE(ctx, 0u);
    ASSERT_EQ(rknn_set_weight_mem(ctx, weights), RKNN_SUCC);
    ASSERT_EQ(rknn_set_internal_mem(ctx, internal), RKNN_SUCC);
    for (uint32_t seed : {61u, 62u}) EXPECT_EQ(run_general(ctx, pixels(seed)), run_general(general, pixels(seed)));
    // Freed with context 0 while the context still holds it: it lives on until the context goes.
    EXPECT_EQ(rknn_destroy_mem(0, weights), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy_mem(0, internal), RKNN_SUCC);
    EXPECT_EQ(run_general(ctx, pixels(63)), run_general(general, pixels(63)));
}

// RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: the model read in place from NPU memory
// at extend->real_model_offset; the buffer lives until rknn_destroy.
TEST_F(ExternalMemory, ModelBufferUsedInPlace) {
    const graph::Graph g = quantized_cnn();
    const rknn_context general = init(g, 0);
    auto bytes = rknn::model::serialize_model(g);
    ASSERT_TRUE(bytes.is_ok());
    const uint32_t model_size = static_cast<uint32_t>(bytes.value().size());
    rknn_tensor_mem* mem = rknn_create_mem2(0, model_size + 256, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
    ASSERT_NE(mem, nullptr);
    std::memcpy(static_cast<uint8_t*>(mem->virt_addr) + 256, bytes.value().data(), model_size);
    rknn_init_extend extend{};
    extend.real_model_offset = 256;
    extend.real_model_size = model_size;
    extend.model_buffer_fd = mem->fd;
    rknn_context ctx = 0;
    const uint32_t flags = kQuiet | RKNN_FLAG_MODEL_BUFFER_ZERO_COPY;
    ASSERT_EQ(rknn_init(&ctx, mem->virt_addr, mem->size, flags, &extend), RKNN_SUCC);
    contexts_.push_back(ctx);
    EXPECT_EQ(run_general(ctx, pixels(81)), run_general(general, pixels(81)));
    // The graph's constants are the buffer's bytes, not a copy.
    auto context = rknn::api::runtime_context(ctx);
    ASSERT_TRUE(context.is_ok());
    const uint8_t* model_start = static_cast<const uint8_t*>(mem->virt_addr) + 256;
    const uint8_t* constant = nullptr;
    for (const graph::Buffer& buffer : context.value()->graph().buffers)
        if (buffer.size > 0) constant = buffer.data;
    ASSERT_NE(constant, nullptr);
    EXPECT_TRUE(constant >= model_start && constant < model_start + model_size) << "borrowed in place";

    rknn_context refused = 0;
    EXPECT_EQ(rknn_init(&refused, mem->virt_addr, mem->size, flags, nullptr), RKNN_ERR_PARAM_INVALID) << "no extend";
    extend.real_model_offset = static_cast<int32_t>(mem->size);
    EXPECT_EQ(rknn_init(&refused, mem->virt_addr, mem->size, flags, &extend), RKNN_ERR_PARAM_INVALID);
    extend.real_model_offset = 256;
    extend.real_model_size = model_size + 1;
    EXPECT_EQ(rknn_init(&refused, mem->virt_addr, mem->size, flags, &extend), RKNN_ERR_PARAM_INVALID);
    extend.real_model_size = 0;  // to the end of the buffer: the model and 0 bytes after it
    EXPECT_EQ(rknn_init(&refused, mem->virt_addr, 0, flags, &extend), RKNN_ERR_PARAM_INVALID) << "a path, not a buffer";
    EXPECT_EQ(refused, 0u);
    extend.real_model_offset = -1;
    EXPECT_EQ(rknn_init(&refused, mem->virt_addr, mem->size, flags, &extend), RKNN_ERR_PARAM_INVALID);
    // Freed while the context still reads the model from it: the context
    // keeps the mapping (a read of a constant would fault otherwise).
    const uint8_t first = *constant;
    EXPECT_EQ(rknn_destroy_mem(0, mem), RKNN_SUCC);
    EXPECT_EQ(*constant, first);
    EXPECT_EQ(run_general(ctx, pixels(82)), run_general(general, pixels(82)));
}

// A dummy init: the sizes can be queried, nothing runs.
TEST_F(ExternalMemory, CollectModelInfoOnly) {
    const graph::Graph g = quantized_cnn();
    const rknn_context outside = init(g, RKNN_FLAG_MEM_ALLOC_OUTSIDE);
    const rknn_context info = init(g, RKNN_FLAG_COLLECT_MODEL_INFO_ONLY);
    ASSERT_NE(info, 0u);
    const rknn_mem_size expected = mem_size(outside), got = mem_size(info);
    EXPECT_EQ(got.total_weight_size, expected.total_weight_size);
    EXPECT_EQ(got.total_internal_size, expected.total_internal_size);
    rknn_input_output_num num{};
    EXPECT_EQ(rknn_query(info, RKNN_QUERY_IN_OUT_NUM, &num, sizeof(num)), RKNN_SUCC);
    EXPECT_EQ(num.n_input, 1u);
    EXPECT_EQ(rknn_run(info, nullptr), RKNN_ERR_FAIL);
    std::vector<uint8_t> p = pixels(1);
    rknn_input in = input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    EXPECT_EQ(rknn_inputs_set(info, 1, &in), RKNN_ERR_FAIL);
    rknn_tensor_mem* mem = keep(info, rknn_create_mem(info, got.total_internal_size));
    ASSERT_NE(mem, nullptr);
    EXPECT_EQ(rknn_set_internal_mem(info, mem), RKNN_ERR_FAIL);
    EXPECT_EQ(rknn_set_weight_mem(info, mem), RKNN_ERR_FAIL);
}

}  // namespace
