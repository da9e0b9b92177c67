// The matmul API's throughput on the mock device against XNNPACK's fully
// connected operators on the same shapes, in the same run (issue 22).
//
// Matmul: rknn_matmul_run through the C API, on LLM shapes (M = 1, 16, 64,
// 256; K = N = 1024, 2048, 4096; and M = 1, 16 with K = 11008, N = 4096, a
// down-projection split over K): float16 -> float32 and int8 -> int32,
// which run as NPU tasks (the emulator computes them), with A copied in and
// C copied out as a client sees it. XNNPACK (Debian libxnnpack, a baseline
// only): its f32 and qs8 fully connected operators, single-threaded.
// GOPS = 2 * M * K * N / time; the table at the end gives matmul / XNNPACK
// per shape. MatmulOverhead: M = K = N = 32, the fixed cost of one run.
// Wall-clock time throughout: the mock device computes on its own threads.
//
// OpenBLAS is not among the packages this project installs; XNNPACK's f32
// operator stands in as the float baseline.
#include <benchmark/benchmark.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "base/log.h"
#include "xnnpack_loop.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"

namespace {

struct Shape {
    int m, k, n;
};

double gops(const Shape& s, double iterations) { return 2.0 * s.m * s.k * s.n * iterations / 1e9; }

void set_gops(benchmark::State& state, const Shape& s) {
    state.counters["GOPS"] = benchmark::Counter(gops(s, static_cast<double>(state.iterations())),
                                                benchmark::Counter::kIsRate);
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, bool halves) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(rng());
    if (halves)  // finite float16 values in [-1, 1): exponent below 15
        for (size_t i = 1; i < n; i += 2) v[i] = static_cast<uint8_t>((v[i] & 0x83) | 0x34);
    return v;
}

void BM_Matmul(benchmark::State& state, rknn_matmul_type type, Shape s) {
    rknn::log::set_level(0);
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.M = s.m, info.K = s.k, info.N = s.n;
    info.type = type;
    info.B_layout = RKNN_MM_LAYOUT_TP_NORM;
    rknn_matmul_io_attr io;
    rknn_matmul_ctx ctx = 0;
    if (rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC) {
        state.SkipWithError("rknn_matmul_create failed");
        return;
    }
    rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* b = rknn_create_mem(ctx, io.B.size);
    rknn_tensor_mem* c = rknn_create_mem(ctx, io.C.size);
    const bool halves = type == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
    const auto a_data = random_bytes(io.A.size, 1, halves), b_data = random_bytes(io.B.size, 2, halves);
    std::memcpy(a->virt_addr, a_data.data(), a_data.size());
    std::memcpy(b->virt_addr, b_data.data(), b_data.size());
    if (rknn_matmul_set_io_mem(ctx, a, &io.A) != RKNN_SUCC || rknn_matmul_set_io_mem(ctx, b, &io.B) != RKNN_SUCC ||
        rknn_matmul_set_io_mem(ctx, c, &io.C) != RKNN_SUCC) {
        state.SkipWithError("rknn_matmul_set_io_mem failed");
    } else if (rknn_matmul_run(ctx) != RKNN_SUCC) {
        // Untimed: the first run packs B's kernels into the emulator's cache.
        state.SkipWithError("rknn_matmul_run failed");
    } else {
        for (auto _ : state) {
            if (rknn_matmul_run(ctx) != RKNN_SUCC) {
                state.SkipWithError("rknn_matmul_run failed");
                break;
            }
        }
        set_gops(state, s);
    }
    for (rknn_tensor_mem* mem : {a, b, c}) rknn_destroy_mem(ctx, mem);
    rknn_matmul_destroy(ctx);
}

void BM_XnnpackF32(benchmark::State& state, Shape s) {
    if (xnn_initialize(nullptr) != xnn_status_success) {
        state.SkipWithError("xnn_initialize failed");
        return;
    }
    std::vector<float> input(static_cast<size_t>(s.m) * s.k, 0.5f), kernel(static_cast<size_t>(s.n) * s.k, 0.25f),
        output(static_cast<size_t>(s.m) * s.n);
    xnn_operator_t op = nullptr;
    xnn_status status = xnn_create_fully_connected_nc_f32(static_cast<size_t>(s.k), static_cast<size_t>(s.n),
                                                          static_cast<size_t>(s.k), static_cast<size_t>(s.n),
                                                          kernel.data(), nullptr, -1e30f, 1e30f, 0, &op);
    if (status == xnn_status_success)
        status = xnn_setup_fully_connected_nc_f32(op, static_cast<size_t>(s.m), input.data(), output.data(), nullptr);
    run_xnnpack_operator(state, op, status, "the f32 operator", output.data());
    set_gops(state, s);
}

void BM_XnnpackQs8(benchmark::State& state, Shape s) {
    if (xnn_initialize(nullptr) != xnn_status_success) {
        state.SkipWithError("xnn_initialize failed");
        return;
    }
    const auto input = random_bytes(static_cast<size_t>(s.m) * s.k, 1, false);
    const auto kernel = random_bytes(static_cast<size_t>(s.n) * s.k, 2, false);
    std::vector<int8_t> output(static_cast<size_t>(s.m) * s.n);
    xnn_operator_t op = nullptr;
    xnn_status status = xnn_create_fully_connected_nc_qs8(
        static_cast<size_t>(s.k), static_cast<size_t>(s.n), static_cast<size_t>(s.k), static_cast<size_t>(s.n), 0, 0.05f,
        0.01f, reinterpret_cast<const int8_t*>(kernel.data()), nullptr, 0, 2.0f, -128, 127, 0, &op);
    if (status == xnn_status_success)
        status = xnn_setup_fully_connected_nc_qs8(op, static_cast<size_t>(s.m), reinterpret_cast<const int8_t*>(input.data()),
                                                  output.data(), nullptr);
    run_xnnpack_operator(state, op, status, "the qs8 operator", output.data());
    set_gops(state, s);
}

std::string shape_name(const Shape& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
}

// Prints matmul / XNNPACK per dtype and shape after the usual output.
class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            const auto it = r.counters.find("GOPS");
            if (r.error_occurred || it == r.counters.end()) continue;
            gops_[r.benchmark_name()] = it->second.value;
        }
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\nmatmul / XNNPACK (GOPS ratio; >= 0.5 is the aim for M >= 16)\n");
        for (const auto& [name, value] : gops_) {
            for (const auto& [ours, theirs] : {std::pair<std::string, std::string>{"Matmul_fp16/", "XnnpackF32/"},
                                               std::pair<std::string, std::string>{"Matmul_int8/", "XnnpackQs8/"}}) {
                if (name.rfind(ours, 0) != 0) continue;
                const std::string shape = name.substr(ours.size());
                const auto base = gops_.find(theirs + shape);
                if (base == gops_.end() || base->second <= 0) continue;
                std::printf("  %-26s %8.2f GOPS vs %8.2f: %.2f\n", name.c_str(), value, base->second, value / base->second);
            }
        }
    }

private:
    std::map<std::string, double> gops_;
};

}  // namespace

int main(int argc, char** argv) {
    std::vector<Shape> shapes;
    for (int m : {1, 16, 64, 256})
        for (int kn : {1024, 2048, 4096}) shapes.push_back({m, kn, kn});
    // An FFN down-projection (K = 11008 > 8192): the NPU runs it in K parts.
    for (int m : {1, 16}) shapes.push_back({m, 11008, 4096});
    for (const Shape& s : shapes) {
        const std::string name = shape_name(s);
        benchmark::RegisterBenchmark(("Matmul_fp16/" + name).c_str(), BM_Matmul, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, s)
            ->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("XnnpackF32/" + name).c_str(), BM_XnnpackF32, s)->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("Matmul_int8/" + name).c_str(), BM_Matmul, RKNN_INT8_MM_INT8_TO_INT32, s)
            ->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("XnnpackQs8/" + name).c_str(), BM_XnnpackQs8, s)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
    const Shape small{32, 32, 32};
    benchmark::RegisterBenchmark("MatmulOverhead_int8/32x32x32", BM_Matmul, RKNN_INT8_MM_INT8_TO_INT32, small)
        ->Unit(benchmark::kMicrosecond)->UseRealTime();
    benchmark::RegisterBenchmark("MatmulOverhead_fp16/32x32x32", BM_Matmul, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, small)
        ->Unit(benchmark::kMicrosecond)->UseRealTime();
    benchmark::Initialize(&argc, argv);
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
