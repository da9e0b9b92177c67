// Non-blocking runs, the pipelined mode (RKNN_FLAG_ASYNC_MASK), frame ids and
// fences, through the C API on the mock device, against blocking runs of the
// same model; and the misuse each of them must refuse without hanging.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common/test_graphs.h"
#include "model/model_file.h"
#include "rknn_api.h"

namespace {

using Bytes = std::vector<uint8_t>;

// small_cnn (Conv, Relu, MaxPool on the NPU in float16; Reshape and Gemm on
// the CPU) as a model file.
const Bytes& model_bytes() {
    static const Bytes bytes = [] {
        auto serialized = rknn::model::serialize_model(rknn::testing::small_cnn());
        return serialized.is_ok() ? serialized.value() : Bytes();
    }();
    return bytes;
}

// small_cnn with `batch` items per run (a multi-batch model).
const Bytes& batched_model_bytes() {
    static const Bytes bytes = [] {
        rknn::graph::Graph g = rknn::testing::small_cnn();
        g.batch = 3;
        auto serialized = rknn::model::serialize_model(g);
        return serialized.is_ok() ? serialized.value() : Bytes();
    }();
    return bytes;
}

rknn_context init(uint32_t flags, bool batched = false) {
    rknn_context ctx = 0;
    Bytes copy = batched ? batched_model_bytes() : model_bytes();
    EXPECT_FALSE(copy.empty());
    EXPECT_EQ(rknn_init(&ctx, copy.data(), static_cast<uint32_t>(copy.size()), flags | RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY,
                        nullptr),
              RKNN_SUCC);
    return ctx;
}

std::vector<float> frame_input(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> v(3 * 8 * 8);
    for (float& x : v) x = dist(rng);
    return v;
}

int set_frame(rknn_context ctx, uint32_t seed) {
    std::vector<float> v = frame_input(seed);
    rknn_input in{};
    in.index = 0;
    in.buf = v.data();
    in.size = static_cast<uint32_t>(v.size() * sizeof(float));
    in.type = RKNN_TENSOR_FLOAT32;
    in.fmt = RKNN_TENSOR_NCHW;
    return rknn_inputs_set(ctx, 1, &in);
}

// Output 0 as float32 bytes; `frame_id` (may be null) as outputs_get reports it.
Bytes get_output(rknn_context ctx, uint64_t* frame_id, int* code) {
    rknn_output out{};
    out.want_float = 1;
    rknn_output_extend extend{};
    *code = rknn_outputs_get(ctx, 1, &out, &extend);
    if (*code != RKNN_SUCC) return {};
    if (frame_id != nullptr) *frame_id = extend.frame_id;
    Bytes bytes(static_cast<uint8_t*>(out.buf), static_cast<uint8_t*>(out.buf) + out.size);
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    return bytes;
}

// What a blocking run of a fresh context gives for seeds 1..count.
std::vector<Bytes> blocking_outputs(uint32_t count) {
    rknn_context ctx = init(0);
    std::vector<Bytes> outputs(count + 1);
    for (uint32_t seed = 1; seed <= count; ++seed) {
        EXPECT_EQ(set_frame(ctx, seed), RKNN_SUCC);
        EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
        int code = 0;
        outputs[seed] = get_output(ctx, nullptr, &code);
        EXPECT_EQ(code, RKNN_SUCC);
        EXPECT_FALSE(outputs[seed].empty());
    }
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
    return outputs;
}

bool readable(int fd, int timeout_ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

TEST(AsyncRuns, NonBlockingRunsAndWaitGiveTheBlockingOutputs) {
    constexpr uint32_t kFrames = 20;
    const std::vector<Bytes> expected = blocking_outputs(kFrames);
    rknn_context ctx = init(0);
    for (uint32_t seed = 1; seed <= kFrames; ++seed) {
        ASSERT_EQ(set_frame(ctx, seed), RKNN_SUCC);
        rknn_run_extend run{};
        run.non_block = 1;
        ASSERT_EQ(rknn_run(ctx, &run), RKNN_SUCC);
        EXPECT_EQ(run.frame_id, seed);
        rknn_run_extend wait{};
        wait.timeout_ms = 10000;
        ASSERT_EQ(rknn_wait(ctx, &wait), RKNN_SUCC);
        EXPECT_EQ(wait.frame_id, seed);
        uint64_t id = 0;
        int code = 0;
        EXPECT_EQ(get_output(ctx, &id, &code), expected[seed]) << "frame " << seed;
        EXPECT_EQ(id, seed);
    }
    // Blocking runs count on.
    ASSERT_EQ(set_frame(ctx, 3), RKNN_SUCC);
    rknn_run_extend run{};
    ASSERT_EQ(rknn_run(ctx, &run), RKNN_SUCC);
    EXPECT_EQ(run.frame_id, kFrames + 1);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// rknn_outputs_get hands out the frame before the one just started; the
// first frame and a waited one come back themselves.
TEST(AsyncRuns, PipelinedLoopHandsOutThePreviousFrame) {
    constexpr uint32_t kFrames = 100;
    const std::vector<Bytes> expected = blocking_outputs(kFrames);
    rknn_context ctx = init(RKNN_FLAG_ASYNC_MASK);
    for (uint32_t seed = 1; seed <= kFrames; ++seed) {
        ASSERT_EQ(set_frame(ctx, seed), RKNN_SUCC);
        rknn_run_extend run{};
        ASSERT_EQ(rknn_run(ctx, &run), RKNN_SUCC);
        ASSERT_EQ(run.frame_id, seed);
        uint64_t id = 0;
        int code = 0;
        const Bytes got = get_output(ctx, &id, &code);
        ASSERT_EQ(code, RKNN_SUCC);
        ASSERT_EQ(id, seed == 1 ? 1u : seed - 1) << "frame " << seed;
        ASSERT_EQ(got, expected[id]) << "frame " << id;
    }
    rknn_run_extend wait{};
    ASSERT_EQ(rknn_wait(ctx, &wait), RKNN_SUCC);
    EXPECT_EQ(wait.frame_id, kFrames);
    uint64_t id = 0;
    int code = 0;
    EXPECT_EQ(get_output(ctx, &id, &code), expected[kFrames]);
    EXPECT_EQ(id, kFrames);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

// An out-fence of one context's run polls readable when the run is over,
// and holds back another context's run given as its in-fence.
TEST(AsyncRuns, FencesChainRunsOfTwoContexts) {
    const std::vector<Bytes> expected = blocking_outputs(2);
    rknn_context first = init(RKNN_FLAG_FENCE_OUT_OUTSIDE);
    rknn_context second = init(RKNN_FLAG_FENCE_IN_OUTSIDE | RKNN_FLAG_FENCE_OUT_OUTSIDE);
    ASSERT_EQ(set_frame(first, 1), RKNN_SUCC);
    ASSERT_EQ(set_frame(second, 2), RKNN_SUCC);
    rknn_run_extend run1{};
    run1.non_block = 1;
    run1.fence_fd = -1;
    ASSERT_EQ(rknn_run(first, &run1), RKNN_SUCC);
    ASSERT_GE(run1.fence_fd, 0);
    rknn_run_extend run2{};
    run2.non_block = 1;
    run2.fence_fd = run1.fence_fd;
    ASSERT_EQ(rknn_run(second, &run2), RKNN_SUCC);
    ASSERT_GE(run2.fence_fd, 0);
    EXPECT_NE(run2.fence_fd, run1.fence_fd);
    EXPECT_TRUE(readable(run2.fence_fd, 10000));
    EXPECT_TRUE(readable(run1.fence_fd, 0));  // the second ran after the first
    ASSERT_EQ(rknn_wait(first, nullptr), RKNN_SUCC);
    ASSERT_EQ(rknn_wait(second, nullptr), RKNN_SUCC);
    int code = 0;
    EXPECT_EQ(get_output(first, nullptr, &code), expected[1]);
    EXPECT_EQ(get_output(second, nullptr, &code), expected[2]);
    ::close(run1.fence_fd);
    ::close(run2.fence_fd);

    // A fence the test signals: the run waits for it, and a short wait times out meanwhile.
    int gate[2];
    ASSERT_EQ(::pipe(gate), 0);
    rknn_run_extend held{};
    held.non_block = 1;
    held.fence_fd = gate[0];
    ASSERT_EQ(set_frame(second, 1), RKNN_SUCC);
    ASSERT_EQ(rknn_run(second, &held), RKNN_SUCC);
    EXPECT_FALSE(readable(held.fence_fd, 50));
    rknn_run_extend short_wait{};
    short_wait.timeout_ms = 50;
    EXPECT_EQ(rknn_wait(second, &short_wait), RKNN_ERR_TIMEOUT);
    const char go = 1;
    ASSERT_EQ(::write(gate[1], &go, 1), 1);
    ASSERT_EQ(rknn_wait(second, nullptr), RKNN_SUCC);
    EXPECT_TRUE(readable(held.fence_fd, 0));
    EXPECT_EQ(get_output(second, nullptr, &code), expected[1]);
    ::close(held.fence_fd);
    ::close(gate[0]);
    ::close(gate[1]);
    EXPECT_EQ(rknn_destroy(first), RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(second), RKNN_SUCC);
}

TEST(AsyncRuns, MisuseIsRefusedWithoutHanging) {
    rknn_context ctx = init(0);
    ASSERT_EQ(set_frame(ctx, 1), RKNN_SUCC);
    EXPECT_EQ(rknn_wait(ctx, nullptr), RKNN_ERR_FAIL);  // nothing to wait for
    ASSERT_EQ(rknn_run(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(rknn_wait(ctx, nullptr), RKNN_ERR_FAIL);  // a blocking run is not waited for
    rknn_run_extend run{};
    run.non_block = 1;
    ASSERT_EQ(rknn_run(ctx, &run), RKNN_SUCC);
    EXPECT_EQ(rknn_run(ctx, &run), RKNN_ERR_FAIL);  // two non-blocking runs without a wait
    EXPECT_EQ(rknn_run(ctx, nullptr), RKNN_ERR_FAIL);
    int code = 0;
    get_output(ctx, nullptr, &code);
    EXPECT_EQ(code, RKNN_ERR_FAIL);  // not waited for yet
    EXPECT_EQ(rknn_wait(ctx, nullptr), RKNN_SUCC);
    EXPECT_EQ(rknn_wait(ctx, nullptr), RKNN_ERR_FAIL);  // collected already
    get_output(ctx, nullptr, &code);
    EXPECT_EQ(code, RKNN_SUCC);
    EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);

    // Fences: a closed fd, and no extend to return one in.
    rknn_context fenced = init(RKNN_FLAG_FENCE_IN_OUTSIDE | RKNN_FLAG_FENCE_OUT_OUTSIDE);
    ASSERT_EQ(set_frame(fenced, 1), RKNN_SUCC);
    EXPECT_EQ(rknn_run(fenced, nullptr), RKNN_ERR_PARAM_INVALID);
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    ::close(ends[0]);
    ::close(ends[1]);
    rknn_run_extend closed{};
    closed.fence_fd = ends[0];
    EXPECT_EQ(rknn_run(fenced, &closed), RKNN_ERR_PARAM_INVALID);
    // A fence that never signals: a blocking run gives up after its timeout.
    ASSERT_EQ(::pipe(ends), 0);
    rknn_run_extend stuck{};
    stuck.fence_fd = ends[0];
    stuck.timeout_ms = 30;
    EXPECT_EQ(rknn_run(fenced, &stuck), RKNN_ERR_TIMEOUT);
    EXPECT_EQ(stuck.fence_fd, -1);  // no out-fence for a failed run
    // An out-fence the client closes before its frame is over.
    int gate[2];
    ASSERT_EQ(::pipe(gate), 0);
    rknn_run_extend early{};
    early.non_block = 1;
    early.fence_fd = gate[0];
    ASSERT_EQ(rknn_run(fenced, &early), RKNN_SUCC);
    ::close(early.fence_fd);
    const char go = 1;
    ASSERT_EQ(::write(gate[1], &go, 1), 1);
    EXPECT_EQ(rknn_wait(fenced, nullptr), RKNN_SUCC);
    ::close(gate[0]);
    ::close(gate[1]);
    // Destroyed while a non-blocking run waits for that fence: the wait ends.
    rknn_run_extend pending{};
    pending.non_block = 1;
    pending.fence_fd = ends[0];
    ASSERT_EQ(rknn_run(fenced, &pending), RKNN_SUCC);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(rknn_destroy(fenced), RKNN_SUCC);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    EXPECT_TRUE(readable(pending.fence_fd, 0));  // signalled, not left hanging
    ::close(pending.fence_fd);
    ::close(ends[0]);
    ::close(ends[1]);

    // Pipelined: outputs before any run.
    rknn_context pipelined = init(RKNN_FLAG_ASYNC_MASK);
    get_output(pipelined, nullptr, &code);
    EXPECT_EQ(code, RKNN_ERR_FAIL);
    EXPECT_EQ(rknn_wait(pipelined, nullptr), RKNN_ERR_FAIL);
    EXPECT_EQ(rknn_destroy(pipelined), RKNN_SUCC);
}

// Duplicates of one context on 8 threads, each on its own core mask, give
// what one thread gets alone.
TEST(AsyncRuns, DuplicatesOnEightThreadsMatchOneThread) {
    constexpr uint32_t kSeeds = 4;
    const int runs = std::getenv("RKNN_STRESS_RUNS") != nullptr ? std::atoi(std::getenv("RKNN_STRESS_RUNS")) : 200;
    const std::vector<Bytes> expected = blocking_outputs(kSeeds);
    rknn_context original = init(0);
    const rknn_core_mask masks[] = {RKNN_NPU_CORE_AUTO, RKNN_NPU_CORE_0, RKNN_NPU_CORE_1,   RKNN_NPU_CORE_2,
                                    RKNN_NPU_CORE_0_1, RKNN_NPU_CORE_AUTO, RKNN_NPU_CORE_0_1_2, RKNN_NPU_CORE_2};
    std::vector<rknn_context> dups(8);
    for (size_t t = 0; t < dups.size(); ++t) {
        ASSERT_EQ(rknn_dup_context(&original, &dups[t]), RKNN_SUCC);
        ASSERT_EQ(rknn_set_core_mask(dups[t], masks[t]), RKNN_SUCC);
    }
    std::vector<int> mismatches(dups.size(), 0);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < dups.size(); ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < runs; ++i) {
                const uint32_t seed = 1 + static_cast<uint32_t>((t + static_cast<size_t>(i)) % kSeeds);
                rknn_run_extend run{};
                run.non_block = i % 2;  // half of them through the worker
                int code = set_frame(dups[t], seed);
                if (code == RKNN_SUCC) code = rknn_run(dups[t], &run);
                if (code == RKNN_SUCC && run.non_block) code = rknn_wait(dups[t], nullptr);
                const Bytes got = code == RKNN_SUCC ? get_output(dups[t], nullptr, &code) : Bytes();
                if (code != RKNN_SUCC || got != expected[seed]) ++mismatches[t];
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (size_t t = 0; t < dups.size(); ++t) {
        EXPECT_EQ(mismatches[t], 0) << "thread " << t << " (core mask " << masks[t] << ")";
        EXPECT_EQ(rknn_destroy(dups[t]), RKNN_SUCC);
    }
    EXPECT_EQ(rknn_destroy(original), RKNN_SUCC);
}

// A batch-3 model, its items run side by side on three contexts from the
// caller's thread and the fan-out's pool, pipelined (RKNN_FLAG_ASYNC_MASK)
// and blocking, on two threads with a duplicate each: every item gives what
// the batch-1 model gives for it.
TEST(AsyncRuns, BatchItemsOnThePoolMatchTheBatchOneModel) {
    constexpr uint32_t kSeeds = 6, kBatch = 3;
    const std::vector<Bytes> expected = blocking_outputs(kSeeds);
    auto set_items = [](rknn_context ctx, uint32_t first_seed) {
        std::vector<float> all;
        for (uint32_t i = 0; i < kBatch; ++i) {
            const std::vector<float> item = frame_input(1 + (first_seed + i - 1) % kSeeds);
            all.insert(all.end(), item.begin(), item.end());
        }
        rknn_input in{};
        in.buf = all.data();
        in.size = static_cast<uint32_t>(all.size() * sizeof(float));
        in.type = RKNN_TENSOR_FLOAT32;
        in.fmt = RKNN_TENSOR_NCHW;
        return rknn_inputs_set(ctx, 1, &in);
    };
    auto items_match = [&](const Bytes& got, uint32_t first_seed) {
        const size_t item = expected[1].size();
        if (got.size() != kBatch * item) return false;
        for (uint32_t i = 0; i < kBatch; ++i)
            if (!std::equal(expected[1 + (first_seed + i - 1) % kSeeds].begin(),
                            expected[1 + (first_seed + i - 1) % kSeeds].end(), got.begin() + i * item))
                return false;
        return true;
    };
    rknn_context pipelined = init(RKNN_FLAG_ASYNC_MASK, true), blocking = init(0, true), copy = 0;
    ASSERT_EQ(rknn_dup_context(&blocking, &copy), RKNN_SUCC);
    const int frames = 30;
    std::vector<int> mismatches(3, 0);
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
        for (int f = 1; f <= frames; ++f) {
            int code = set_items(pipelined, static_cast<uint32_t>(f));
            if (code == RKNN_SUCC) code = rknn_run(pipelined, nullptr);
            uint64_t id = 0;
            const Bytes got = code == RKNN_SUCC ? get_output(pipelined, &id, &code) : Bytes();
            if (code != RKNN_SUCC || !items_match(got, static_cast<uint32_t>(id))) ++mismatches[0];
        }
    });
    for (size_t t = 1; t <= 2; ++t) {
        threads.emplace_back([&, t] {
            const rknn_context ctx = t == 1 ? blocking : copy;
            if (t == 2) rknn_set_core_mask(ctx, RKNN_NPU_CORE_0_1);
            for (int f = 1; f <= frames; ++f) {
                int code = set_items(ctx, static_cast<uint32_t>(f + static_cast<int>(t)));
                if (code == RKNN_SUCC) code = rknn_run(ctx, nullptr);
                const Bytes got = code == RKNN_SUCC ? get_output(ctx, nullptr, &code) : Bytes();
                if (code != RKNN_SUCC || !items_match(got, static_cast<uint32_t>(f + static_cast<int>(t)))) ++mismatches[t];
            }
        });
    }
    for (std::thread& thread : threads) thread.join();
    for (size_t t = 0; t < mismatches.size(); ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
    for (rknn_context ctx : {pipelined, blocking, copy}) EXPECT_EQ(rknn_destroy(ctx), RKNN_SUCC);
}

}  // namespace
