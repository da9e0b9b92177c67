// Multi-batch models (rknn_convert --batch, spec 5.3) through the C API on
// the mock device: each of the B items gives the bytes the batch-1 model
// gives for it, through rknn_inputs_set / rknn_outputs_get and through
// zero-copy buffers (h_stride too), for B = 1, 2, 3, 4 and 6 on RK3588 and
// B = 2 on single-core RK3568, with every core count and mask; and the
// errors bad batch arguments get.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "api/context_handle.h"
#include "base/log.h"
#include "common/mock_soc.h"
#include "common/test_graphs.h"
#include "contract_models.h"
#include "rknn_api.h"
#include "runtime/context.h"

namespace {

using rknn::testing::MockSoc;
using Bytes = std::vector<uint8_t>;

constexpr size_t kPixels = 8 * 8 * 3;  // one item's NHWC uint8 input

const rknn::graph::Graph& cnn() {
    static const rknn::graph::Graph g = rknn::testing::quantized_cnn();
    return g;
}

const rknn::graph::Graph& conv_pool() {
    static const rknn::graph::Graph g = rknn::testing::conv_pool_model();
    return g;
}

rknn_context init_batched(const rknn::graph::Graph& model, uint32_t batch) {
    rknn::graph::Graph g = model;
    g.batch = batch;
    if (const char* soc = std::getenv("RKNN_MOCK_SOC")) g.target_soc = soc;
    rknn_context ctx = 0;
    EXPECT_EQ(rknn::testing::init_graph(g, 0, &ctx), RKNN_SUCC) << "batch " << batch;
    return ctx;
}

rknn_tensor_attr query_attr(rknn_context ctx, rknn_query_cmd cmd, uint32_t index = 0) {
    rknn_tensor_attr attr{};
    attr.index = index;
    EXPECT_EQ(rknn_query(ctx, cmd, &attr, sizeof(attr)), RKNN_SUCC);
    return attr;
}

// The batch-1 model's output 0 for item `seed`'s pixels.
Bytes single(rknn_context one, uint32_t seed, bool want_float) {
    return rknn::testing::run_pixels(one, seed, want_float);
}

Bytes batch_pixels(uint32_t batch, uint32_t first_seed) {
    Bytes all;
    for (uint32_t i = 0; i < batch; ++i) {
        const Bytes p = rknn::testing::pixels(first_seed + i);
        all.insert(all.end(), p.begin(), p.end());
    }
    return all;
}

// Output 0 of the last run, raw or float.
Bytes get_output(rknn_context ctx, bool want_float) {
    rknn_output out{};
    out.want_float = want_float ? 1 : 0;
    if (rknn_outputs_get(ctx, 1, &out, nullptr) != RKNN_SUCC) {
        ADD_FAILURE() << "rknn_outputs_get failed";
        return {};
    }
    Bytes bytes(static_cast<const uint8_t*>(out.buf), static_cast<const uint8_t*>(out.buf) + out.size);
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    return bytes;
}

// Item i of `all` (B equal items) against the batch-1 bytes for seed first + i.
void expect_items(rknn_context one, const Bytes& all, uint32_t batch, uint32_t first_seed, bool want_float,
                  const std::string& what) {
    ASSERT_FALSE(all.empty());
    ASSERT_EQ(all.size() % batch, 0u);
    const size_t item = all.size() / batch;
    for (uint32_t i = 0; i < batch; ++i) {
        const Bytes expected = single(one, first_seed + i, want_float);
        ASSERT_EQ(expected.size(), item) << what;
        EXPECT_EQ(std::memcmp(all.data() + i * item, expected.data(), item), 0) << what << ": item " << i;
    }
}

class BatchItems : public ::testing::TestWithParam<std::tuple<const char*, uint32_t>> {};

TEST_P(BatchItems, GeneralApiGivesEachItemTheBatchOneBytes) {
    const auto [soc, batch] = GetParam();
    const MockSoc mock(soc);
    const rknn_context one = init_batched(cnn(), 1), many = init_batched(cnn(), batch);
    const rknn_tensor_attr in1 = query_attr(one, RKNN_QUERY_INPUT_ATTR), in = query_attr(many, RKNN_QUERY_INPUT_ATTR);
    const rknn_tensor_attr out1 = query_attr(one, RKNN_QUERY_OUTPUT_ATTR),
                           out = query_attr(many, RKNN_QUERY_OUTPUT_ATTR);
    EXPECT_EQ(in.dims[0], batch);
    EXPECT_EQ(in.size, in1.size * batch);
    EXPECT_EQ(in.size_with_stride, in1.size_with_stride * batch);
    EXPECT_EQ(in.n_elems, in1.n_elems * batch);
    EXPECT_EQ(out.dims[0], batch);
    EXPECT_EQ(out.size, out1.size * batch);
    const rknn_tensor_attr native = query_attr(many, RKNN_QUERY_NATIVE_INPUT_ATTR);
    EXPECT_EQ(native.size_with_stride, query_attr(one, RKNN_QUERY_NATIVE_INPUT_ATTR).size_with_stride * batch);
    // Two runs with different items: nothing of the first stays in the second.
    for (uint32_t first_seed : {100u, 200u}) {
        Bytes pixels = batch_pixels(batch, first_seed);
        rknn_input input = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size()),
                                                   RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
        ASSERT_EQ(rknn_inputs_set(many, 1, &input), RKNN_SUCC);
        std::fill(pixels.begin(), pixels.end(), 0);  // the runtime keeps its own copy
        ASSERT_EQ(rknn_run(many, nullptr), RKNN_SUCC);
        expect_items(one, get_output(many, false), batch, first_seed, false, std::string(soc) + " raw");
        expect_items(one, get_output(many, true), batch, first_seed, true, std::string(soc) + " float");
    }
    rknn_perf_run perf{};
    EXPECT_EQ(rknn_query(many, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)), RKNN_SUCC);
    EXPECT_GT(perf.run_duration, 0);
    EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(one), RKNN_SUCC);
}

// Input bound as uint8 NHWC pixels, output as the native int8 cube (which
// the NPU may write in place) and as float32: each item's slice is what the
// batch-1 model gives for it bound the same way.
TEST_P(BatchItems, ZeroCopyGivesEachItemTheBatchOneBytes) {
    const auto [soc, batch] = GetParam();
    const MockSoc mock(soc);
    const rknn_context one = init_batched(conv_pool(), 1), many = init_batched(conv_pool(), batch);
    for (rknn_query_cmd out_cmd : {RKNN_QUERY_NATIVE_OUTPUT_ATTR, RKNN_QUERY_OUTPUT_ATTR}) {
        const bool as_float = out_cmd == RKNN_QUERY_OUTPUT_ATTR;
        std::vector<rknn_tensor_mem*> mems;
        auto bind = [&](rknn_context ctx, Bytes* out_bytes, const Bytes& pixels) {
            rknn_tensor_attr in = query_attr(ctx, RKNN_QUERY_INPUT_ATTR);
            in.type = RKNN_TENSOR_UINT8;
            in.fmt = RKNN_TENSOR_NHWC;
            in.w_stride = 8;  // dense rows, as the pixels are
            rknn_tensor_attr out = query_attr(ctx, out_cmd);
            if (as_float) out.type = RKNN_TENSOR_FLOAT32;
            const uint32_t out_bytes_needed = as_float ? out.n_elems * 4 : out.size_with_stride;
            rknn_tensor_mem* in_mem = rknn_create_mem(ctx, static_cast<uint32_t>(pixels.size()));
            rknn_tensor_mem* out_mem = rknn_create_mem(ctx, out_bytes_needed);
            EXPECT_TRUE(in_mem != nullptr && out_mem != nullptr);
            std::memcpy(in_mem->virt_addr, pixels.data(), pixels.size());
            EXPECT_EQ(rknn_set_io_mem(ctx, in_mem, &in), RKNN_SUCC);
            EXPECT_EQ(rknn_set_io_mem(ctx, out_mem, &out), RKNN_SUCC);
            EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
            out_bytes->assign(static_cast<uint8_t*>(out_mem->virt_addr),
                              static_cast<uint8_t*>(out_mem->virt_addr) + out_mem->size);
            mems.push_back(in_mem);
            mems.push_back(out_mem);
            return std::make_pair(in_mem, out_mem);
        };
        Bytes all;
        auto [in_mem, out_mem] = bind(many, &all, batch_pixels(batch, 300));
        const size_t item = all.size() / batch;
        for (uint32_t i = 0; i < batch; ++i) {
            Bytes expected;
            const rknn_context fresh = init_batched(conv_pool(), 1);
            bind(fresh, &expected, rknn::testing::pixels(300 + i));
            ASSERT_EQ(expected.size(), item);
            EXPECT_EQ(std::memcmp(all.data() + i * item, expected.data(), item), 0)
                << soc << (as_float ? " float32" : " native") << " item " << i;
            for (size_t m = mems.size() - 2; m < mems.size(); ++m)
                EXPECT_EQ(rknn_destroy_mem(fresh, mems[m]), RKNN_SUCC);
            mems.resize(mems.size() - 2);
            EXPECT_EQ(rknn_destroy(fresh), RKNN_SUCC);
        }
        // A second run over new pixels in the same buffers.
        const Bytes next = batch_pixels(batch, 400);
        std::memcpy(in_mem->virt_addr, next.data(), next.size());
        ASSERT_EQ(rknn_run(many, nullptr), RKNN_SUCC);
        const Bytes again(static_cast<uint8_t*>(out_mem->virt_addr),
                          static_cast<uint8_t*>(out_mem->virt_addr) + out_mem->size);
        if (!as_float) {
            // The native cube against the general API's NCHW bytes would need
            // the layout; the second run must differ from the first at least.
            EXPECT_NE(again, all);
        } else {
            expect_items(one, again, batch, 400, true, std::string(soc) + " zero-copy float, second run");
        }
        for (rknn_tensor_mem* m : mems) EXPECT_EQ(rknn_destroy_mem(many, m), RKNN_SUCC);
    }
    EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(one), RKNN_SUCC);
}

INSTANTIATE_TEST_SUITE_P(Rk3588AndRk3568, BatchItems,
                         ::testing::Values(std::make_tuple("rk3588", 1u), std::make_tuple("rk3588", 2u),
                                           std::make_tuple("rk3588", 3u), std::make_tuple("rk3588", 4u),
                                           std::make_tuple("rk3588", 6u), std::make_tuple("rk3568", 2u)),
                         [](const auto& param_info) {
                             return std::string(std::get<0>(param_info.param)) + "_B" +
                                    std::to_string(std::get<1>(param_info.param));
                         });

// Items `h_stride` rows apart in the input buffer; the padding rows hold
// garbage that no item may read.
TEST(Batch, HStridePlacesItemsThatManyRowsApart) {
    const MockSoc mock("rk3588");
    constexpr uint32_t kBatch = 3, kHeight = 8, kPitchRows = 11, kRow = 8 * 3;
    const rknn_context one = init_batched(cnn(), 1), many = init_batched(cnn(), kBatch);
    rknn_tensor_attr in = query_attr(many, RKNN_QUERY_INPUT_ATTR);
    in.type = RKNN_TENSOR_UINT8;
    in.fmt = RKNN_TENSOR_NHWC;
    in.h_stride = kPitchRows;
    rknn_tensor_mem* in_mem = rknn_create_mem(many, kBatch * kPitchRows * kRow);
    ASSERT_NE(in_mem, nullptr);
    std::memset(in_mem->virt_addr, 0xA5, in_mem->size);
    for (uint32_t i = 0; i < kBatch; ++i) {
        const Bytes p = rknn::testing::pixels(500 + i);
        std::memcpy(static_cast<uint8_t*>(in_mem->virt_addr) + i * kPitchRows * kRow, p.data(), p.size());
    }
    ASSERT_EQ(rknn_set_io_mem(many, in_mem, &in), RKNN_SUCC);
    ASSERT_EQ(rknn_run(many, nullptr), RKNN_SUCC);
    expect_items(one, get_output(many, false), kBatch, 500, false, "h_stride");
    // Below the height, or more rows than the buffer holds: refused.
    in.h_stride = kHeight - 1;
    EXPECT_EQ(rknn_set_io_mem(many, in_mem, &in), RKNN_ERR_PARAM_INVALID);
    in.h_stride = kPitchRows + 2;
    EXPECT_EQ(rknn_set_io_mem(many, in_mem, &in), RKNN_ERR_PARAM_INVALID);
    EXPECT_EQ(rknn_destroy_mem(many, in_mem), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(one), RKNN_SUCC);
}

// Any number of cores, and any core mask, runs the same items.
TEST(Batch, CoreNumbersAndMasksKeepTheItems) {
    const MockSoc mock("rk3588");
    constexpr uint32_t kBatch = 4;
    const rknn_context one = init_batched(cnn(), 1);
    rknn_context many = init_batched(cnn(), kBatch);
    auto check = [&](const std::string& what) {
        Bytes pixels = batch_pixels(kBatch, 600);
        rknn_input input = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size()),
                                                   RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
        ASSERT_EQ(rknn_inputs_set(many, 1, &input), RKNN_SUCC);
        ASSERT_EQ(rknn_run(many, nullptr), RKNN_SUCC) << what;
        expect_items(one, get_output(many, false), kBatch, 600, false, what);
    };
    auto in_use = [&] {
        auto context = rknn::api::runtime_context(many);
        return context.is_ok() ? context.value()->batch_contexts_in_use() : 0;
    };
    EXPECT_EQ(in_use(), 3u);  // one per core by default
    for (int n : {1, 2, 3}) {
        ASSERT_EQ(rknn_set_batch_core_num(many, n), RKNN_SUCC);
        EXPECT_EQ(in_use(), static_cast<size_t>(n));
        check("core_num " + std::to_string(n));
    }
    const std::pair<rknn_core_mask, size_t> masks[] = {{RKNN_NPU_CORE_1, 1},
                                                       {RKNN_NPU_CORE_0_1, 2},
                                                       {RKNN_NPU_CORE_0_1_2, 3},
                                                       {RKNN_NPU_CORE_ALL, 3},
                                                       {RKNN_NPU_CORE_AUTO, 3}};
    ASSERT_EQ(rknn_set_batch_core_num(many, 1), RKNN_SUCC);
    for (const auto& [mask, contexts] : masks) {
        ASSERT_EQ(rknn_set_core_mask(many, mask), RKNN_SUCC);
        EXPECT_EQ(in_use(), contexts) << "mask " << mask;  // AUTO after a core number: every context again
        check("mask " + std::to_string(static_cast<int>(mask)));
    }
    // A duplicate runs the batch on its own contexts.
    rknn_context copy = 0;
    ASSERT_EQ(rknn_dup_context(&many, &copy), RKNN_SUCC);
    EXPECT_EQ(query_attr(copy, RKNN_QUERY_INPUT_ATTR).dims[0], kBatch);
    auto context = rknn::api::runtime_context(many), dup = rknn::api::runtime_context(copy);
    ASSERT_TRUE(context.is_ok() && dup.is_ok());
    EXPECT_TRUE(context.value()->shares_weights_with(*dup.value()));
    EXPECT_EQ(context.value()->batch(), kBatch);
    EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    many = copy;
    check("duplicate");
    EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(one), RKNN_SUCC);
}

// A 3x3 stride-3 convolution on 8x8: each item's native output is 64 bytes,
// so item 1 starts half-way through a cache line. No item is then bound in
// place (the NPU writing one item while the CPU copies its neighbour would
// share that line); the items still come out as the batch-1 model's.
TEST(Batch, ItemsSharingCacheLinesAreNotBoundInPlace) {
    const MockSoc mock("rk3588");
    rknn::graph::Graph g = rknn::testing::small_cnn();
    g.ops.resize(1);
    g.ops[0].attrs.set_ints("pads", {0, 0, 0, 0});
    g.ops[0].attrs.set_ints("strides", {3, 3});
    const int32_t out = g.ops[0].outputs[0];
    g.tensors[static_cast<size_t>(out)].shape = {1, 8, 2, 2};
    g.outputs = {out};
    rknn::testing::quantize_8x8(&g, 5, 2);
    const rknn_context one = init_batched(g, 1), many = init_batched(g, 2);
    std::vector<std::vector<uint8_t>> outputs;
    for (rknn_context ctx : {one, many}) {
        const uint32_t items = ctx == one ? 1 : 2;
        rknn_tensor_attr native = query_attr(ctx, RKNN_QUERY_NATIVE_OUTPUT_ATTR);
        ASSERT_EQ(native.size_with_stride, 64u * items);
        rknn_tensor_mem* mem = rknn_create_mem(ctx, native.size_with_stride);
        ASSERT_NE(mem, nullptr);
        ASSERT_EQ(rknn_set_io_mem(ctx, mem, &native), RKNN_SUCC);
        auto context = rknn::api::runtime_context(ctx);
        ASSERT_TRUE(context.is_ok());
        EXPECT_EQ(context.value()->in_place_bindings(), ctx == one ? 1u : 0u);
        std::vector<float> x;
        for (uint32_t i = 0; i < items; ++i)
            for (int k = 0; k < 3 * 8 * 8; ++k)
                x.push_back(static_cast<float>((k * 7 + static_cast<int>(i) * 13) % 17) / 8.f - 1.f);
        rknn_input in = rknn::testing::input_of(x.data(), static_cast<uint32_t>(x.size() * sizeof(float)),
                                                RKNN_TENSOR_FLOAT32, RKNN_TENSOR_NCHW);
        ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
        ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
        outputs.emplace_back(static_cast<uint8_t*>(mem->virt_addr), static_cast<uint8_t*>(mem->virt_addr) + mem->size);
        if (ctx == one) {  // item 1 of the batch: its own input in the batch-1 model
            for (size_t k = 0; k < x.size(); ++k)
                x[k] = static_cast<float>((static_cast<int>(k) * 7 + 13) % 17) / 8.f - 1.f;
            ASSERT_EQ(rknn_inputs_set(ctx, 1, &in), RKNN_SUCC);
            ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
            outputs.emplace_back(static_cast<uint8_t*>(mem->virt_addr),
                                 static_cast<uint8_t*>(mem->virt_addr) + mem->size);
        }
        EXPECT_EQ(rknn_destroy_mem(ctx, mem), RKNN_SUCC);
    }
    ASSERT_EQ(outputs.size(), 3u);
    std::vector<uint8_t> expected = outputs[0];
    expected.insert(expected.end(), outputs[1].begin(), outputs[1].end());
    EXPECT_EQ(outputs[2], expected);
    EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(one), RKNN_SUCC);
}

// The weights once, the internal memory per context.
TEST(Batch, MemSizeCountsWeightsOnce) {
    const MockSoc mock("rk3588");
    const rknn_context one = init_batched(cnn(), 1), many = init_batched(cnn(), 3);
    rknn_mem_size m1{}, m3{};
    ASSERT_EQ(rknn_query(one, RKNN_QUERY_MEM_SIZE, &m1, sizeof(m1)), RKNN_SUCC);
    ASSERT_EQ(rknn_query(many, RKNN_QUERY_MEM_SIZE, &m3, sizeof(m3)), RKNN_SUCC);
    EXPECT_EQ(m3.total_weight_size, m1.total_weight_size);
    EXPECT_EQ(m3.total_internal_size, 3 * m1.total_internal_size);
    EXPECT_EQ(m3.total_dma_allocated_size,
              m1.total_dma_allocated_size + 2 * (m1.total_dma_allocated_size - m1.total_weight_size));
    EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(one), RKNN_SUCC);
}

TEST(Batch, BadArgumentsAreRefusedWithALogLine) {
    std::vector<std::string> lines;
    rknn::log::set_sink([&lines](const std::string& line) { lines.push_back(line); });
    auto logged = [&](const char* text) {
        for (const std::string& line : lines)
            if (line.find(text) != std::string::npos) return true;
        return false;
    };
    {
        const MockSoc mock("rk3588");
        const rknn_context many = init_batched(cnn(), 2);
        for (int n : {0, -1, 4, 100}) EXPECT_EQ(rknn_set_batch_core_num(many, n), RKNN_ERR_PARAM_INVALID) << n;
        EXPECT_TRUE(logged("core_num"));
        Bytes pixels = batch_pixels(2, 1);
        // Not a whole number of items, and one item only.
        rknn_input odd = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size() - 1),
                                                 RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
        EXPECT_EQ(rknn_inputs_set(many, 1, &odd), RKNN_ERR_PARAM_INVALID);
        EXPECT_TRUE(logged("items of one size"));
        rknn_input half =
            rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(kPixels), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
        EXPECT_NE(rknn_inputs_set(many, 1, &half), RKNN_SUCC);
        // A zero-copy buffer for one item only.
        rknn_tensor_attr in = query_attr(many, RKNN_QUERY_INPUT_ATTR);
        in.type = RKNN_TENSOR_UINT8;
        in.fmt = RKNN_TENSOR_NHWC;
        rknn_tensor_mem* small = rknn_create_mem(many, kPixels);
        ASSERT_NE(small, nullptr);
        EXPECT_EQ(rknn_set_io_mem(many, small, &in), RKNN_ERR_PARAM_INVALID);
        EXPECT_TRUE(logged("items"));
        EXPECT_EQ(rknn_destroy_mem(many, small), RKNN_SUCC);
        // rknn_outputs_get before any run.
        rknn_output out{};
        EXPECT_NE(rknn_outputs_get(many, 1, &out, nullptr), RKNN_SUCC);
        // The refused binding left nothing behind: the general API still runs.
        rknn_input whole = rknn::testing::input_of(pixels.data(), static_cast<uint32_t>(pixels.size()),
                                                   RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
        EXPECT_EQ(rknn_inputs_set(many, 1, &whole), RKNN_SUCC);
        EXPECT_EQ(rknn_run(many, nullptr), RKNN_SUCC);
        rknn_tensor_attr shape = query_attr(many, RKNN_QUERY_INPUT_ATTR);
        EXPECT_NE(rknn_set_input_shapes(many, 1, &shape), RKNN_SUCC);
        EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    }
    {
        const MockSoc mock("rk3568");
        const rknn_context many = init_batched(cnn(), 2);
        EXPECT_EQ(rknn_set_batch_core_num(many, 1), RKNN_ERR_PARAM_INVALID);
        EXPECT_TRUE(logged("one NPU core"));
        EXPECT_EQ(rknn_destroy(many), RKNN_SUCC);
    }
    rknn::log::set_sink(nullptr);
}

}  // namespace
