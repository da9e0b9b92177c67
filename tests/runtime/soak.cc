// Soak: CYCLES rounds of rknn_init, rknn_inputs_set, rknn_run,
// rknn_outputs_get/release and rknn_destroy of the small contract model (and
// of a matmul context every tenth round), on the mock device. Prints the
// curve of open fds and RSS every CYCLES/10 rounds, then checks the end
// against the start (after WARMUP rounds that fill the allocator's caches):
// fd delta 0, RSS growth under 1 MiB (not under sanitizers), no mock kernel
// left alive, and every round's output the first round's bytes.
//
// usage: soak [CYCLES] [WARMUP]   (ctest runs a short soak; 10000 for the figure)
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "model/model_file.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"
#include "runtime/contract_models.h"
#include "runtime/fault_cycles.h"

namespace {

constexpr long kRssLimitKib = 1024;

// Sanitizers keep freed memory resident (ASan's quarantine), so RSS says
// nothing about leaks there; ASan's leak checker covers them instead.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

bool one_model_round(const std::vector<uint8_t>& model, std::vector<uint8_t>* out) {
    rknn_context ctx = 0;
    if (rknn_init(&ctx, const_cast<uint8_t*>(model.data()), static_cast<uint32_t>(model.size()), 0, nullptr) !=
        RKNN_SUCC)
        return false;
    std::vector<uint8_t> p = rknn::testing::pixels(5);
    rknn_input in =
        rknn::testing::input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    bool ok = rknn_inputs_set(ctx, 1, &in) == RKNN_SUCC && rknn_run(ctx, nullptr) == RKNN_SUCC;
    rknn_output o{};
    if (ok) ok = rknn_outputs_get(ctx, 1, &o, nullptr) == RKNN_SUCC;
    if (ok) {
        out->assign(static_cast<const uint8_t*>(o.buf), static_cast<const uint8_t*>(o.buf) + o.size);
        ok = rknn_outputs_release(ctx, 1, &o) == RKNN_SUCC;
    }
    return rknn_destroy(ctx) == RKNN_SUCC && ok;
}

bool one_matmul_round() {
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.M = 2, info.K = 32, info.N = 32;
    info.type = RKNN_INT8_MM_INT8_TO_INT32;
    rknn_matmul_io_attr io{};
    rknn_matmul_ctx ctx = 0;
    if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) return false;
    rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* b = rknn_create_mem(ctx, io.B.size);
    rknn_tensor_mem* c = rknn_create_mem(ctx, io.C.size);
    bool ok = a != nullptr && b != nullptr && c != nullptr;
    if (ok) {
        std::memset(a->virt_addr, 1, io.A.size);
        std::memset(b->virt_addr, 2, io.B.size);
        ok = rknn_matmul_set_io_mem(ctx, a, &io.A) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx, b, &io.B) == RKNN_SUCC &&
             rknn_matmul_set_io_mem(ctx, c, &io.C) == RKNN_SUCC && rknn_matmul_run(ctx) == RKNN_SUCC &&
             static_cast<const int32_t*>(c->virt_addr)[0] == 2 * 32;
    }
    for (rknn_tensor_mem* m : {a, b, c})
        if (m != nullptr) rknn_destroy_mem(ctx, m);
    return rknn_matmul_destroy(ctx) == RKNN_SUCC && ok;
}

int cycles_arg = 300;
int warmup_arg = 50;

TEST(Soak, InitRunDestroyLeavesNothingBehind) {
    rknn::log::set_sink([](const std::string&) {});
    auto serialized = rknn::model::serialize_model(rknn::testing::quantized_cnn());
    ASSERT_TRUE(serialized.is_ok());
    const std::vector<uint8_t> model = std::move(serialized.value());
    std::vector<uint8_t> first, out;
    ASSERT_TRUE(one_model_round(model, &first));
    for (int i = 0; i < warmup_arg; ++i) {
        ASSERT_TRUE(one_model_round(model, &out));
        if (i % 10 == 0) {
            ASSERT_TRUE(one_matmul_round());
        }
    }
    const rknn::testing::Resources start = rknn::testing::resources_now(nullptr);
    const auto t0 = std::chrono::steady_clock::now();
    int failures = 0;
    for (int i = 0; i < cycles_arg; ++i) {
        if (!one_model_round(model, &out) || out != first) ++failures;
        if (i % 10 == 0 && !one_matmul_round()) ++failures;
        if (cycles_arg >= 10 && (i + 1) % (cycles_arg / 10) == 0) {
            const rknn::testing::Resources now = rknn::testing::resources_now(nullptr);
            std::printf("  cycle %6d: fds %+ld, RSS %+ld KiB (%.1f s)\n", i + 1,
                        static_cast<long>(now.fds) - static_cast<long>(start.fds),
                        static_cast<long>(now.rss_kib) - static_cast<long>(start.rss_kib),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            std::fflush(stdout);
        }
    }
    rknn::log::set_sink(nullptr);
    EXPECT_EQ(failures, 0) << "rounds that failed or gave other bytes";
    const rknn::testing::Resources end = rknn::testing::resources_now(nullptr);
    const long rss_delta = static_cast<long>(end.rss_kib) - static_cast<long>(start.rss_kib);
    std::printf("%d cycles: fd delta %+ld, RSS delta %+ld KiB\n", cycles_arg,
                static_cast<long>(end.fds) - static_cast<long>(start.fds), rss_delta);
    EXPECT_EQ(end.fds, start.fds);
    if (kSanitized)
        std::printf("RSS not checked: the sanitizer's quarantine keeps freed memory resident\n");
    else
        EXPECT_LT(rss_delta, kRssLimitKib);
    EXPECT_EQ(rknn::testing::live_default_mock(), nullptr) << "the last context's destroy ends the mock kernel";
}

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    if (argc > 1) cycles_arg = std::atoi(argv[1]);
    if (argc > 2) warmup_arg = std::atoi(argv[2]);
    return RUN_ALL_TESTS();
}
