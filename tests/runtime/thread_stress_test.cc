// Eight threads at once on one mock device: each runs its own context, a
// rknn_dup_context copy of a shared one, or a matmul context, many times,
// and every result must equal what one thread got alone beforehand. Under
// ThreadSanitizer in CI (scripts/test.sh, a few dozen runs per thread);
// RKNN_STRESS_RUNS=1000 gives the full-size run.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common/test_graphs.h"
#include "model/model_file.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"

namespace {

using Bytes = std::vector<uint8_t>;

constexpr int kThreads = 8;
constexpr int kM = 4, kK = 64, kN = 32;

int runs_per_thread() {
    const char* text = std::getenv("RKNN_STRESS_RUNS");
    const int runs = text != nullptr ? std::atoi(text) : 0;
    return runs > 0 ? runs : 40;
}

const Bytes& model_bytes() {
    static const Bytes bytes = [] {
        auto serialized = rknn::model::serialize_model(rknn::testing::small_cnn());
        return serialized.is_ok() ? serialized.value() : Bytes();
    }();
    return bytes;
}

std::vector<float> input_for(int seed) {
    std::mt19937 rng(static_cast<uint32_t>(seed));
    std::uniform_real_distribution<float> dist(-2.f, 2.f);
    std::vector<float> v(3 * 8 * 8);
    for (float& x : v) x = dist(rng);
    return v;
}

// One run of input `seed`; the float output, empty on any failure.
std::vector<float> run_model(rknn_context ctx, int seed) {
    std::vector<float> in = input_for(seed);
    rknn_input input{};
    input.index = 0;
    input.buf = in.data();
    input.size = static_cast<uint32_t>(in.size() * sizeof(float));
    input.type = RKNN_TENSOR_FLOAT32;
    input.fmt = RKNN_TENSOR_NCHW;
    if (rknn_inputs_set(ctx, 1, &input) != RKNN_SUCC || rknn_run(ctx, nullptr) != RKNN_SUCC) return {};
    rknn_output out{};
    out.want_float = 1;
    if (rknn_outputs_get(ctx, 1, &out, nullptr) != RKNN_SUCC) return {};
    std::vector<float> v(out.size / sizeof(float));
    std::memcpy(v.data(), out.buf, out.size);
    (void)rknn_outputs_release(ctx, 1, &out);
    return v;
}

struct Matmul {
    rknn_matmul_ctx ctx = 0;
    rknn_tensor_mem* a = nullptr;
    rknn_tensor_mem* b = nullptr;
    rknn_tensor_mem* c = nullptr;
    rknn_matmul_io_attr io{};

    bool create() {
        rknn_matmul_info info;
        std::memset(&info, 0, sizeof(info));
        info.M = kM, info.K = kK, info.N = kN;
        info.type = RKNN_INT8_MM_INT8_TO_INT32;
        if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) return false;
        a = rknn_create_mem(ctx, io.A.size);
        b = rknn_create_mem(ctx, io.B.size);
        c = rknn_create_mem(ctx, io.C.size);
        if (a == nullptr || b == nullptr || c == nullptr) return false;
        for (uint32_t i = 0; i < io.B.size; ++i)
            static_cast<int8_t*>(b->virt_addr)[i] = static_cast<int8_t>(i % 13 - 6);
        return rknn_matmul_set_io_mem(ctx, b, &io.B) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx, c, &io.C) == RKNN_SUCC;
    }
    std::vector<int32_t> run(int seed) {
        for (uint32_t i = 0; i < io.A.size; ++i)
            static_cast<int8_t*>(a->virt_addr)[i] = static_cast<int8_t>((i * 7 + seed) % 17 - 8);
        if (rknn_matmul_set_io_mem(ctx, a, &io.A) != RKNN_SUCC || rknn_matmul_run(ctx) != RKNN_SUCC) return {};
        const auto* p = static_cast<const int32_t*>(c->virt_addr);
        return std::vector<int32_t>(p, p + kM * kN);
    }
    ~Matmul() {
        for (rknn_tensor_mem* m : {a, b, c})
            if (m != nullptr) rknn_destroy_mem(ctx, m);
        if (ctx != 0) rknn_matmul_destroy(ctx);
    }
};

constexpr int kSeeds = 5;  // inputs each thread cycles through

TEST(ThreadStress, OwnDuplicatedAndMatmulContextsAgreeWithOneThread) {
    const int runs = runs_per_thread();
    Bytes copy = model_bytes();
    ASSERT_FALSE(copy.empty());
    rknn_context shared = 0;
    ASSERT_EQ(rknn_init(&shared, copy.data(), static_cast<uint32_t>(copy.size()), 0, nullptr), RKNN_SUCC);
    // What one thread gets alone.
    std::vector<std::vector<float>> model_ref;
    std::vector<std::vector<int32_t>> matmul_ref;
    {
        Matmul mm;
        ASSERT_TRUE(mm.create());
        for (int s = 0; s < kSeeds; ++s) {
            model_ref.push_back(run_model(shared, s));
            ASSERT_FALSE(model_ref.back().empty());
            matmul_ref.push_back(mm.run(s));
            ASSERT_FALSE(matmul_ref.back().empty());
        }
    }

    std::atomic<int> mismatches{0}, failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            if (t % 3 == 2) {
                Matmul mm;
                if (!mm.create()) {
                    ++failures;
                    return;
                }
                for (int r = 0; r < runs; ++r) {
                    const std::vector<int32_t> got = mm.run((r + t) % kSeeds);
                    if (got.empty())
                        ++failures;
                    else if (got != matmul_ref[static_cast<size_t>((r + t) % kSeeds)])
                        ++mismatches;
                }
                return;
            }
            rknn_context ctx = 0;
            Bytes mine = model_bytes();
            const int rc = t % 3 == 0 ? rknn_init(&ctx, mine.data(), static_cast<uint32_t>(mine.size()), 0, nullptr)
                                      : rknn_dup_context(&shared, &ctx);
            if (rc != RKNN_SUCC) {
                ++failures;
                return;
            }
            // The six model threads spread over the three cores, two on each.
            const int model_thread = t - t / 3;
            (void)rknn_set_core_mask(ctx, static_cast<rknn_core_mask>(1u << (model_thread % 3)));
            for (int r = 0; r < runs; ++r) {
                const std::vector<float> got = run_model(ctx, (r + t) % kSeeds);
                if (got.empty())
                    ++failures;
                else if (got != model_ref[static_cast<size_t>((r + t) % kSeeds)])
                    ++mismatches;
            }
            if (rknn_destroy(ctx) != RKNN_SUCC) ++failures;
        });
    }
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0) << "calls that failed";
    EXPECT_EQ(mismatches.load(), 0) << "results that differ from one thread's";
    EXPECT_EQ(rknn_destroy(shared), RKNN_SUCC);
    std::printf("%d threads x %d runs: %d failures, %d mismatches\n", kThreads, runs, failures.load(),
                mismatches.load());
}

}  // namespace
