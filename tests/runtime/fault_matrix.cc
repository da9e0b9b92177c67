// The fault matrix on a real model: mobilenet_v2 (tests/models/export_models.py)
// converted to int8 and run through the public C API on the mock device.
//   1. every injected fault (submit timeout, IOMMU fault, device reset) at
//      every submit of a run: the run fails with the fault's code, and the
//      next run gives the clean run's bytes;
//   2. an allocation failure at each allocation rknn_init makes: the init
//      fails with RKNN_ERR_MALLOC_FAIL and frees what it had;
//   3. CYCLES fault cycles (default 1000) on one context: fds, mock buffers
//      and mock files end where they started, RSS within RSS_SLACK_KIB.
// Prints the figures; exits 1 on any failure, 77 when no model was exported.
//
// usage: fault_matrix MODELS_DIR [CYCLES]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/npy.h"
#include "converter.h"
#include "exported_models.h"
#include "model/model_file.h"
#include "rknn_api.h"
#include "runtime/fault_cycles.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using rknn::testing::Resources;
using rknn::testing::RunOnce;

constexpr long kRssSlackKib = 1024;

int failures = 0;
void fail(const std::string& what) {
    ++failures;
    std::printf("FAIL: %s\n", what.c_str());
}

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

struct LoadedModel {
    std::vector<uint8_t> bytes;
    rknn::npy::Array pixels;
};

bool load_model(const fs::path& dir, const char* name, LoadedModel* loaded) {
    rknn::convert::ConvertOptions options =
        rknn::testing::exported_model_options(dir, name, rknn::convert::TargetDType::kInt8);
    auto converted = rknn::convert::convert_onnx(options);
    if (!converted.is_ok()) {
        fail(std::string("converting ") + name + ": " + converted.status().message());
        return false;
    }
    auto bytes = rknn::model::serialize_model(converted.value().graph);
    auto pixels = rknn::npy::read_file((dir / (std::string(name) + "_input.npy")).string());
    if (!bytes.is_ok() || !pixels.is_ok()) {
        fail(std::string("serialising ") + name + " or reading its input");
        return false;
    }
    loaded->bytes = std::move(bytes.value());
    loaded->pixels = std::move(pixels.value());
    return true;
}

int init_model(const LoadedModel& m, uint32_t flags, rknn_context* ctx) {
    return rknn_init(ctx, const_cast<uint8_t*>(m.bytes.data()), static_cast<uint32_t>(m.bytes.size()), flags, nullptr);
}

// Parts 1 and 2 on one model and core mask.
void matrix_and_init_failures(const char* name, const LoadedModel& m, rknn_core_mask mask, const char* mask_name) {
    rknn_context ctx = 0;
    if (init_model(m, 0, &ctx) != RKNN_SUCC || rknn_set_core_mask(ctx, mask) != RKNN_SUCC) {
        fail(std::string(name) + ": rknn_init or rknn_set_core_mask");
        return;
    }
    std::shared_ptr<rknn::driver::mock::MockKernel> kernel = rknn::testing::live_default_mock();
    const RunOnce run = rknn::testing::pixels_run(ctx, m.pixels.data);
    std::vector<uint8_t> baseline;
    std::string problem;
    const int submits = kernel == nullptr || run(&baseline) != RKNN_SUCC
                            ? 0
                            : rknn::testing::submits_per_run(*kernel, run, baseline, &problem);
    if (submits < 1) {
        fail(std::string(name) + ": no mock kernel or no clean run " + problem);
        (void)rknn_destroy(ctx);
        return;
    }
    const Clock::time_point start = Clock::now();
    const rknn::testing::MatrixReport report = rknn::testing::run_fault_matrix(*kernel, run, baseline, submits);
    for (const std::string& p : report.problems) fail(std::string(name) + ": " + p);
    std::printf("%-14s %-6s fault matrix: %d submits per run x %zu faults = %d cells, %zu failed (%.1f s)\n", name,
                mask_name, submits, rknn::testing::submit_faults().size(), report.cells, report.problems.size(),
                seconds_since(start));

    const uint64_t allocations_before = kernel->faults().allocations_seen();
    rknn_context probe = 0;
    if (init_model(m, 0, &probe) != RKNN_SUCC) fail("second init");
    const int allocations = static_cast<int>(kernel->faults().allocations_seen() - allocations_before);
    (void)rknn_destroy(probe);
    const Resources before = rknn::testing::resources_now(kernel.get());
    int refused = 0;
    for (int k = 0; k < allocations; ++k) {
        kernel->faults().fail_allocations(1, k);
        rknn_context failed = 0;
        const int rc = init_model(m, 0, &failed);
        kernel->faults().clear();
        if (rc == RKNN_ERR_MALLOC_FAIL && failed == 0)
            ++refused;
        else
            fail("allocation " + std::to_string(k) + " of rknn_init failed: rknn_init returned " + std::to_string(rc));
        if (rc == RKNN_SUCC) (void)rknn_destroy(failed);
    }
    const Resources after = rknn::testing::resources_now(kernel.get());
    if (after.fds != before.fds || after.mock_objects != before.mock_objects)
        fail("failed inits left fds or mock buffers behind");
    std::printf("%-14s %-6s init allocation failures: %d allocations, %d refused with RKNN_ERR_MALLOC_FAIL\n", name,
                mask_name, allocations, refused);
    (void)rknn_destroy(ctx);
}

}  // namespace

int main(int argc, char** argv) {
    fs::path dir;
    if (const int code = rknn::testing::exported_models_dir(argc > 2 ? 2 : argc, argv, &dir); code != 0) return code;
    const int cycles = argc > 2 ? std::atoi(argv[2]) : 1000;
    // What one hung submit costs here: far above a clean run of these models
    // (a few ms) even on a loaded machine, far below the 20 s default.
    ::setenv("RKNN_NPU_TIMEOUT_MS", "150", 1);

    LoadedModel mobilenet, squeezenet;
    if (!load_model(dir, "mobilenet_v2", &mobilenet) || !load_model(dir, "squeezenet1_1", &squeezenet)) return 1;
    rknn::log::set_sink([](const std::string&) {});  // thousands of expected error lines
    // mobilenet_v2 is one submit with the automatic mask and one per layer
    // group on three cores; squeezenet1_1 is one submit.
    matrix_and_init_failures("mobilenet_v2", mobilenet, RKNN_NPU_CORE_AUTO, "auto");
    matrix_and_init_failures("mobilenet_v2", mobilenet, RKNN_NPU_CORE_0_1_2, "0_1_2");
    matrix_and_init_failures("squeezenet1_1", squeezenet, RKNN_NPU_CORE_AUTO, "auto");

    // 3. Cycles on one context: the first few warm every path up.
    rknn_context ctx = 0;
    if (init_model(mobilenet, 0, &ctx) != RKNN_SUCC) {
        std::printf("FAIL: rknn_init\n");
        return 1;
    }
    std::shared_ptr<rknn::driver::mock::MockKernel> kernel = rknn::testing::live_default_mock();
    if (kernel == nullptr) {
        std::printf("SKIP: no mock kernel behind the context (RKNN_DEVICE names a real NPU)\n");
        (void)rknn_destroy(ctx);
        return 77;
    }
    const RunOnce run = rknn::testing::pixels_run(ctx, mobilenet.pixels.data);
    std::vector<uint8_t> baseline;
    std::string problem;
    const int submits =
        run(&baseline) == RKNN_SUCC ? rknn::testing::submits_per_run(*kernel, run, baseline, &problem) : 0;
    if (submits < 1) {
        std::printf("FAIL: the clean run %s\n", problem.c_str());
        return 1;
    }
    for (int c = 0; c < 6; ++c) (void)rknn::testing::fault_cycle(*kernel, run, baseline, submits, c);
    const Resources first = rknn::testing::resources_now(kernel.get());
    const Clock::time_point start = Clock::now();
    int cycle_failures = 0;
    for (int c = 0; c < cycles; ++c) {
        const std::string p = rknn::testing::fault_cycle(*kernel, run, baseline, submits, c);
        if (!p.empty() && ++cycle_failures <= 5) fail("cycle " + std::to_string(c) + ": " + p);
        if (cycles >= 10 && (c + 1) % (cycles / 10) == 0) {
            const Resources now = rknn::testing::resources_now(kernel.get());
            std::printf("  cycle %5d: fds %+ld, RSS %+ld KiB, mock buffers %+ld\n", c + 1,
                        static_cast<long>(now.fds) - static_cast<long>(first.fds),
                        static_cast<long>(now.rss_kib) - static_cast<long>(first.rss_kib),
                        static_cast<long>(now.mock_objects) - static_cast<long>(first.mock_objects));
            std::fflush(stdout);
        }
    }
    if (cycle_failures > 5) fail(std::to_string(cycle_failures) + " cycles failed in all");
    const Resources last = rknn::testing::resources_now(kernel.get());
    const long rss_delta = static_cast<long>(last.rss_kib) - static_cast<long>(first.rss_kib);
    std::printf(
        "%d fault cycles (%.1f s): fd delta %+ld, mock buffer delta %+ld, mock file delta %+ld, RSS delta %+ld KiB\n",
        cycles, seconds_since(start), static_cast<long>(last.fds) - static_cast<long>(first.fds),
        static_cast<long>(last.mock_objects) - static_cast<long>(first.mock_objects),
        static_cast<long>(last.mock_files) - static_cast<long>(first.mock_files), rss_delta);
    if (last.fds != first.fds) fail("fds leaked across the cycles");
    if (last.mock_objects != first.mock_objects || last.mock_files != first.mock_files)
        fail("mock buffers or files leaked across the cycles");
    if (rss_delta > kRssSlackKib) fail("RSS grew by more than " + std::to_string(kRssSlackKib) + " KiB");
    (void)rknn_destroy(ctx);
    std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}
