// The emulator's int8 convolution throughput against XNNPACK's, on the same
// ResNet-style 3x3 layers, in the same run. Both single-threaded.
//
// Emulator: one convolution task (register stream decode, weight fetch and
// unpacking, the MAC array model, the DPU epilogue and the output write) run
// through the program controller, as a submit would. XNNPACK (Debian
// libxnnpack, a baseline only): its per-channel int8 convolution operator.
// GOPS = 2 * MACs / time. The table at the end gives emulator / XNNPACK.
#include <benchmark/benchmark.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "emulator/kernels/gemm_s8.h"
#include "npu_harness.h"
#include "xnnpack_loop.h"

namespace {

namespace et = rknn::emutest;

struct Layer {
    const char* name;
    int channels;  // in = out
    int size;      // H = W
};
constexpr Layer kLayers[] = {
    {"3x3_64ch_56x56", 64, 56},
    {"3x3_128ch_28x28", 128, 28},
    {"3x3_256ch_14x14", 256, 14},
    {"3x3_128ch_56x56", 128, 56},
};

double macs(const Layer& l) { return 9.0 * l.channels * l.channels * l.size * l.size; }

std::vector<int8_t> random_int8(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int8_t> v(n);
    for (int8_t& x : v) x = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    return v;
}

void set_gops(benchmark::State& state, const Layer& l) {
    state.counters["GOPS"] = benchmark::Counter(2.0 * macs(l) * static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
}

void BM_Emulator(benchmark::State& state, Layer l) {
    constexpr uint32_t kStream = 0x10000, kIn = 0x1000000, kW = 0x2000000, kRec = 0x3000000, kOut = 0x4000000;
    et::ConvGeometry g;
    g.in_c = g.out_c = l.channels;
    g.in_h = g.in_w = l.size;
    g.kh = g.kw = 3;
    g.pad_top = g.pad_left = g.pad_bottom = g.pad_right = 1;
    et::EpilogueRegs e;
    for (int c = 0; c < l.channels; ++c) {
        e.bias.push_back(c * 37 - 1000);
        e.mult.push_back(static_cast<int16_t>(12000 + c));
    }
    e.shift = 24;
    e.relu = true;
    e.out_zp = -5;
    const auto input = random_int8(static_cast<size_t>(l.channels) * l.size * l.size, 1);
    const auto weights = random_int8(static_cast<size_t>(l.channels) * l.channels * 9, 2);
    et::Device dev;
    const auto in = et::pack_int8_cube(input.data(), l.channels, l.size, l.size, l.channels, 0);
    dev.put(kIn, in.data(), in.size());
    const auto w = et::pack_conv_weights_int8(weights.data(), l.channels, l.channels, 3, 3, l.channels);
    dev.put(kW, w.data(), w.size());
    const auto rec = et::bs_records(e, l.channels);
    dev.put(kRec, rec.data(), rec.size());
    dev.zeros(kOut, in.size());
    et::TaskEmitter b;
    et::emit_conv_int8(&b, g, {kIn, kW, kRec, kOut}, e, 2);
    b.tail(0, 0, 0x1d);
    if (!b.finish().is_ok()) {
        state.SkipWithError(b.finish().message().c_str());
        return;
    }
    dev.words(kStream, b.words());
    for (auto _ : state) {
        const auto result = dev.run(kStream, static_cast<uint32_t>(b.body_words()));
        if (!result.completed) {
            state.SkipWithError(result.message.c_str());
            return;
        }
    }
    set_gops(state, l);
    state.SetLabel(rknn::emulator::gemm_u8s8_isa());
}

void BM_Xnnpack(benchmark::State& state, Layer l) {
    if (xnn_initialize(nullptr) != xnn_status_success) {
        state.SkipWithError("xnn_initialize failed");
        return;
    }
    const auto input = random_int8(static_cast<size_t>(l.channels) * l.size * l.size, 1);
    const auto weights = random_int8(static_cast<size_t>(l.channels) * l.channels * 9, 2);  // OHWI for XNNPACK
    std::vector<int32_t> bias(static_cast<size_t>(l.channels), 100);
    std::vector<float> kernel_scale(static_cast<size_t>(l.channels), 0.002f);
    std::vector<int8_t> output(input.size());
    xnn_operator_t op = nullptr;
    xnn_status s = xnn_create_convolution2d_nhwc_qc8(
        1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, static_cast<size_t>(l.channels), static_cast<size_t>(l.channels),
        static_cast<size_t>(l.channels), static_cast<size_t>(l.channels), 2, 0.05f, kernel_scale.data(), weights.data(),
        bias.data(), -5, 0.1f, -128, 127, 0, &op);
    if (s == xnn_status_success) {
        s = xnn_setup_convolution2d_nhwc_qc8(op, 1, static_cast<size_t>(l.size), static_cast<size_t>(l.size),
                                             input.data(), output.data(), nullptr);
    }
    run_xnnpack_operator(state, op, s, "the convolution", output.data());
    set_gops(state, l);
}

// Prints emulator / XNNPACK per layer after the usual console output.
class RatioReporter : public benchmark::ConsoleReporter {
public:
    void ReportRuns(const std::vector<Run>& runs) override {
        ConsoleReporter::ReportRuns(runs);
        for (const Run& r : runs) {
            if (r.error_occurred) continue;
            const std::string name = r.benchmark_name();
            const auto it = r.counters.find("GOPS");
            if (it == r.counters.end()) continue;
            const size_t slash = name.find('/');
            if (slash == std::string::npos) continue;
            gops_[name.substr(slash + 1)][name.substr(0, slash)] = it->second.value;
        }
    }
    void Finalize() override {
        ConsoleReporter::Finalize();
        std::printf("\n%-20s %14s %14s %10s\n", "layer", "emulator GOPS", "XNNPACK GOPS", "ratio");
        for (const auto& [layer, by] : gops_) {
            const auto e = by.find("BM_Emulator"), x = by.find("BM_Xnnpack");
            if (e == by.end() || x == by.end() || x->second <= 0) continue;
            std::printf("%-20s %14.1f %14.1f %10.2f\n", layer.c_str(), e->second, x->second, e->second / x->second);
        }
    }

private:
    std::map<std::string, std::map<std::string, double>> gops_;
};

}  // namespace

int main(int argc, char** argv) {
    for (const Layer& l : kLayers) {
        benchmark::RegisterBenchmark((std::string("BM_Emulator/") + l.name).c_str(), BM_Emulator, l)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
        benchmark::RegisterBenchmark((std::string("BM_Xnnpack/") + l.name).c_str(), BM_Xnnpack, l)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
    }
    benchmark::Initialize(&argc, argv);
    RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::Shutdown();
    return 0;
}
