// The costs of dynamic shapes on the mock device, with PP-OCRv4 rec
// converted in fp16 twice: with four shape sets (widths 80, 160, 320, 640)
// and with the largest set alone. Reported, each a median over repeated
// timings with the spread (min..max):
//   - rknn_init + rknn_destroy of each model, in interleaved rounds, and the
//     ratio of the medians;
//   - MEM_SIZE of each (weights, internal, all device memory) and the ratio;
//   - rknn_set_input_shapes with the shapes already set, and a switch
//     between two sets (alternating 80 and 640);
//   - rknn_run at each width (the first run of a set, then the median);
//   - with --dynamic-range 1,3,48,32..640:8 added to the four sets: the
//     first rknn_set_input_shapes of widths no set names (the plan compiled
//     on first use), in fresh contexts over the rounds, then a switch
//     between two such widths once both are kept.
// usage: dynamic_shape_bench [REC.onnx] [REPEATS]; the default model is the
// npm cache's (scripts/fetch_models.sh); exits 77 when it is missing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "converter.h"
#include "model/model_file.h"
#include "rknn_api.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kFlags = RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY;
const int kWidths[] = {80, 160, 320, 640};

struct Spread {
    double median = 0, min = 0, max = 0;
};

Spread spread_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v.back()};
}

double seconds(const std::function<void()>& body, int iterations = 1) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < iterations; ++i) body();
    return std::chrono::duration<double>(Clock::now() - start).count() / iterations;
}

void check(int code, const char* what) {
    if (code != RKNN_SUCC) {
        std::fprintf(stderr, "dynamic_shape_bench: %s failed: %d\n", what, code);
        std::exit(1);
    }
}

std::vector<uint8_t> convert(const std::string& onnx, const std::vector<int>& widths, bool ranged = false) {
    rknn::convert::ConvertOptions options;
    options.onnx_path = onnx;
    options.progress = false;
    options.mean = {{127.5f, 127.5f, 127.5f}};
    options.std = {{127.5f, 127.5f, 127.5f}};
    for (int w : widths) options.input_shapes.push_back({{1, 3, 48, w}});
    if (ranged) options.dynamic_range = {{{1, 3, 48, 32}, {1, 3, 48, 640}, {1, 1, 1, 8}}};
    auto converted = rknn::convert::convert_onnx(options);
    if (!converted.is_ok()) {
        std::fprintf(stderr, "dynamic_shape_bench: conversion failed: %s\n", converted.status().message().c_str());
        std::exit(1);
    }
    auto bytes = rknn::model::serialize_model(converted.value().graph);
    if (!bytes.is_ok()) std::exit(1);
    return bytes.value();
}

rknn_context init(std::vector<uint8_t>& model) {
    rknn_context ctx = 0;
    check(rknn_init(&ctx, model.data(), static_cast<uint32_t>(model.size()), kFlags, nullptr), "rknn_init");
    return ctx;
}

rknn_mem_size mem_size(rknn_context ctx) {
    rknn_mem_size m{};
    check(rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &m, sizeof(m)), "MEM_SIZE");
    return m;
}

rknn_tensor_attr width_attr(rknn_context ctx, int width) {
    rknn_tensor_attr attr{};
    attr.index = 0;
    check(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)), "INPUT_ATTR");
    attr.dims[2] = static_cast<uint32_t>(width);  // NHWC
    return attr;
}

}  // namespace

int main(int argc, char** argv) {
    const char* home = std::getenv("HOME");
    const std::string onnx = argc > 1 ? argv[1]
                                      : std::string(home ? home : "") +
                                            "/.cache/openrknn/ocr-models-1.4.2/ch_PP-OCRv4_rec_infer.onnx";
    const int repeats = argc > 2 ? std::max(3, std::atoi(argv[2])) : 7;
    if (FILE* f = std::fopen(onnx.c_str(), "rb")) {
        std::fclose(f);
    } else {
        std::printf("SKIP: %s not found (scripts/fetch_models.sh --models-only)\n", onnx.c_str());
        return 77;
    }
    std::vector<uint8_t> four = convert(onnx, {80, 160, 320, 640});
    std::vector<uint8_t> one = convert(onnx, {640});
    std::printf("dynamic_shape_bench: PP-OCRv4 rec fp16, 4 shape sets (48 x 80/160/320/640) against the 640 set "
                "alone; %d rounds\n\n", repeats);

    // rknn_init, interleaved so that both see the same machine.
    std::vector<double> init_one, init_four;
    for (int r = 0; r < repeats; ++r) {
        init_one.push_back(seconds([&] { check(rknn_destroy(init(one)), "rknn_destroy"); }));
        init_four.push_back(seconds([&] { check(rknn_destroy(init(four)), "rknn_destroy"); }));
    }
    const Spread s1 = spread_of(init_one), s4 = spread_of(init_four);
    std::printf("rknn_init + destroy: 1 set %.1f ms (%.1f..%.1f), 4 sets %.1f ms (%.1f..%.1f): ratio %.2f\n",
                s1.median * 1e3, s1.min * 1e3, s1.max * 1e3, s4.median * 1e3, s4.min * 1e3, s4.max * 1e3,
                s4.median / s1.median);

    rknn_context ctx_one = init(one), ctx = init(four);
    const rknn_mem_size m1 = mem_size(ctx_one), m4 = mem_size(ctx);
    const auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
    std::printf("MEM_SIZE: 1 set weights %llu, internal %llu, all device memory %llu bytes; 4 sets %llu, %llu, %llu: "
                "ratio %.3f\n",
                u(m1.total_weight_size), u(m1.total_internal_size), u(m1.total_dma_allocated_size),
                u(m4.total_weight_size), u(m4.total_internal_size), u(m4.total_dma_allocated_size),
                static_cast<double>(m4.total_dma_allocated_size) / static_cast<double>(m1.total_dma_allocated_size));

    // The same shapes again (RKNNLite does this before every run).
    rknn_tensor_attr at80 = width_attr(ctx, 80), at640 = width_attr(ctx, 640);
    check(rknn_set_input_shapes(ctx, 1, &at640), "rknn_set_input_shapes");
    std::vector<double> same, change;
    for (int r = 0; r < repeats; ++r) {
        same.push_back(seconds([&] { check(rknn_set_input_shapes(ctx, 1, &at640), "same shapes"); }, 20000));
        change.push_back(seconds(
            [&] {
                check(rknn_set_input_shapes(ctx, 1, &at80), "switch");
                check(rknn_set_input_shapes(ctx, 1, &at640), "switch");
            },
            2000) / 2);
    }
    const Spread ss = spread_of(same), sc = spread_of(change);
    std::printf("rknn_set_input_shapes, shapes unchanged: %.2f us (%.2f..%.2f); a switch between sets: %.2f us "
                "(%.2f..%.2f)\n",
                ss.median * 1e6, ss.min * 1e6, ss.max * 1e6, sc.median * 1e6, sc.min * 1e6, sc.max * 1e6);

    // rknn_run per width (grey pixels: the time does not depend on them).
    for (int w : kWidths) {
        rknn_tensor_attr attr = width_attr(ctx, w);
        check(rknn_set_input_shapes(ctx, 1, &attr), "rknn_set_input_shapes");
        std::vector<uint8_t> pixels(static_cast<size_t>(48 * w * 3), 128);
        rknn_input in{};
        in.index = 0;
        in.buf = pixels.data();
        in.size = static_cast<uint32_t>(pixels.size());
        in.type = RKNN_TENSOR_UINT8;
        in.fmt = RKNN_TENSOR_NHWC;
        check(rknn_inputs_set(ctx, 1, &in), "rknn_inputs_set");
        const double first = seconds([&] { check(rknn_run(ctx, nullptr), "rknn_run"); });
        std::vector<double> runs;
        for (int r = 0; r < std::min(repeats, 5); ++r)
            runs.push_back(seconds([&] { check(rknn_run(ctx, nullptr), "rknn_run"); }));
        const Spread sr = spread_of(runs);
        std::printf("rknn_run at width %3d: first %.1f ms, then %.1f ms (%.1f..%.1f)\n", w, first * 1e3,
                    sr.median * 1e3, sr.min * 1e3, sr.max * 1e3);
    }
    rknn_destroy(ctx);
    rknn_destroy(ctx_one);

    // Any width in range: the first use of a width compiles its plan.
    std::vector<uint8_t> ranged = convert(onnx, {80, 160, 320, 640}, true);
    const int kNew[] = {104, 200, 312, 456, 632};
    std::vector<std::vector<double>> first_use(std::size(kNew));
    for (int r = 0; r < repeats; ++r) {
        rknn_context c = init(ranged);
        for (size_t k = 0; k < std::size(kNew); ++k) {
            rknn_tensor_attr attr = width_attr(c, kNew[k]);
            first_use[k].push_back(seconds([&] { check(rknn_set_input_shapes(c, 1, &attr), "first use"); }));
        }
        check(rknn_destroy(c), "rknn_destroy");
    }
    std::printf("\nwith --dynamic-range 1,3,48,32..640:8, first rknn_set_input_shapes of a width no set names "
                "(compiles its plan):\n");
    for (size_t k = 0; k < std::size(kNew); ++k) {
        const Spread sf = spread_of(first_use[k]);
        std::printf("  width %3d: %.2f ms (%.2f..%.2f)\n", kNew[k], sf.median * 1e3, sf.min * 1e3, sf.max * 1e3);
    }
    rknn_context c = init(ranged);
    rknn_tensor_attr a104 = width_attr(c, 104), a456 = width_attr(c, 456);
    check(rknn_set_input_shapes(c, 1, &a104), "first use");
    check(rknn_set_input_shapes(c, 1, &a456), "first use");
    std::vector<double> kept;
    for (int r = 0; r < repeats; ++r)
        kept.push_back(seconds(
            [&] {
                check(rknn_set_input_shapes(c, 1, &a104), "switch");
                check(rknn_set_input_shapes(c, 1, &a456), "switch");
            },
            2000) / 2);
    const Spread sk = spread_of(kept);
    std::printf("a switch between two kept in-range widths (104, 456): %.2f us (%.2f..%.2f)\n", sk.median * 1e6,
                sk.min * 1e6, sk.max * 1e6);
    rknn_destroy(c);
    return 0;
}
