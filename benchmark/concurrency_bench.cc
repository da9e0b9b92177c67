// Whether the mock kernel runs jobs of different cores at the same time:
// throughput of two contexts pinned to cores 0 and 1 (and of two on the
// AUTO mask), and items per second of a batch-2 model on cores 0 and 1 (its
// two items side by side), against one context on core 0, in interleaved
// rounds of the same run. Each emulated core gets one host thread (RKNN_HOST_THREADS=1 unless
// set), so on a 2-core host two busy cores can give up to 2x.
// The model is NPU-only (float16 3x3 convolutions and ReLUs) and built here.
// usage: concurrency_bench [ROUNDS] [RUNS_PER_CONTEXT]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "graph/graph.h"
#include "model/model_file.h"
#include "rknn_api.h"

namespace {

namespace graph = rknn::graph;
using Clock = std::chrono::steady_clock;

int32_t add_tensor(graph::Graph* g, const std::string& name, const graph::Shape& shape) {
    graph::Tensor t;
    t.name = name;
    t.shape = shape;
    return g->add_tensor(t);
}

int32_t add_constant(graph::Graph* g, const std::string& name, const graph::Shape& shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
    std::vector<float> v(static_cast<size_t>(graph::num_elements(shape)));
    for (float& x : v) x = dist(rng);
    return g->add_constant(name, graph::DType::kFloat32, shape, graph::Buffer::copy_of(v.data(), v.size() * 4));
}

// `layers` 3x3 convolutions of `channels` at size x size, each with a ReLU.
graph::Graph conv_stack(int layers, int channels, int size) {
    graph::Graph g;
    int32_t x = add_tensor(&g, "input", {1, channels, size, size});
    g.inputs = {x};
    for (int i = 0; i < layers; ++i) {
        const std::string name = "conv" + std::to_string(i);
        const int32_t y = add_tensor(&g, name, {1, channels, size, size});
        graph::Op conv;
        conv.type = graph::OpType::kConv;
        conv.name = name;
        conv.inputs = {x, add_constant(&g, name + ".w", {channels, channels, 3, 3}, static_cast<uint32_t>(2 * i + 1)),
                       add_constant(&g, name + ".b", {channels}, static_cast<uint32_t>(2 * i + 2))};
        conv.outputs = {y};
        conv.attrs.set_ints("pads", {1, 1, 1, 1});
        g.add_op(conv);
        const int32_t z = add_tensor(&g, name + ".relu", {1, channels, size, size});
        g.add_op({graph::OpType::kRelu, name + ".relu", "", {y}, {z}, {}});
        x = z;
    }
    g.outputs = {x};
    return g;
}

rknn_context make_context(std::vector<uint8_t>& model, rknn_core_mask mask, uint32_t batch = 1) {
    rknn_context ctx = 0;
    if (rknn_init(&ctx, model.data(), static_cast<uint32_t>(model.size()), RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY,
                  nullptr) != RKNN_SUCC ||
        rknn_set_core_mask(ctx, mask) != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_init / rknn_set_core_mask failed\n");
        std::exit(1);
    }
    std::vector<float> input(static_cast<size_t>(graph::num_elements({batch, 32, 64, 64})), 0.5f);
    rknn_input in{};
    in.buf = input.data();
    in.size = static_cast<uint32_t>(input.size() * sizeof(float));
    in.type = RKNN_TENSOR_FLOAT32;
    in.fmt = RKNN_TENSOR_NCHW;
    if (rknn_inputs_set(ctx, 1, &in) != RKNN_SUCC || rknn_run(ctx, nullptr) != RKNN_SUCC) std::exit(1);
    return ctx;
}

// Runs per second of `contexts`, each run `runs` times on its own thread.
double throughput(const std::vector<rknn_context>& contexts, int runs) {
    const Clock::time_point start = Clock::now();
    std::vector<std::thread> threads;
    for (rknn_context ctx : contexts)
        threads.emplace_back([ctx, runs] {
            for (int i = 0; i < runs; ++i)
                if (rknn_run(ctx, nullptr) != RKNN_SUCC) std::exit(1);
        });
    for (std::thread& t : threads) t.join();
    return static_cast<double>(runs) * static_cast<double>(contexts.size()) /
           std::chrono::duration<double>(Clock::now() - start).count();
}

struct Summary {
    double median, low, high;
};

Summary summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v.back()};
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
    const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 10;
    setenv("RKNN_HOST_THREADS", "1", 0);
    auto serialized = rknn::model::serialize_model(conv_stack(6, 32, 64));
    if (!serialized.is_ok()) return 1;
    std::vector<uint8_t> model = serialized.value();
    graph::Graph two_items = conv_stack(6, 32, 64);
    two_items.batch = 2;
    auto serialized_batch = rknn::model::serialize_model(two_items);
    if (!serialized_batch.is_ok()) return 1;
    std::vector<uint8_t> batch_model = serialized_batch.value();
    const rknn_context batch2 = make_context(batch_model, RKNN_NPU_CORE_0_1, 2);
    const rknn_context core0 = make_context(model, RKNN_NPU_CORE_0);
    const rknn_context core1 = make_context(model, RKNN_NPU_CORE_1);
    const rknn_context auto_a = make_context(model, RKNN_NPU_CORE_AUTO);
    const rknn_context auto_b = make_context(model, RKNN_NPU_CORE_AUTO);
    std::vector<double> pinned_ratio, auto_ratio, batch_ratio, one_rate;
    for (int round = 0; round < rounds; ++round) {
        // The baseline before and after the others: the host's speed drifts.
        const double one_before = throughput({core0}, runs);
        const double pinned = throughput({core0, core1}, runs);
        const double automatic = throughput({auto_a, auto_b}, runs);
        const double items = 2 * throughput({batch2}, runs);
        const double one = (one_before + throughput({core0}, runs)) / 2;
        one_rate.push_back(one);
        pinned_ratio.push_back(pinned / one);
        auto_ratio.push_back(automatic / one);
        batch_ratio.push_back(items / one);
        std::printf("round %d: one context %.1f runs/s; two on cores 0+1 %.2fx; two on AUTO %.2fx; B=2 %.2fx\n",
                    round + 1, one, pinned / one, automatic / one, items / one);
    }
    const Summary one = summarize(one_rate), pinned = summarize(pinned_ratio), automatic = summarize(auto_ratio),
                  batched = summarize(batch_ratio);
    std::printf("one context on core 0: median %.1f runs/s (%.1f..%.1f)\n", one.median, one.low, one.high);
    std::printf("two contexts on cores 0 and 1: median %.2fx one context (%.2f..%.2f)\n", pinned.median, pinned.low,
                pinned.high);
    std::printf("two contexts on AUTO:          median %.2fx one context (%.2f..%.2f)\n", automatic.median,
                automatic.low, automatic.high);
    std::printf("B=2 on cores 0 and 1 (items/s): median %.2fx B=1 (%.2f..%.2f)\n", batched.median, batched.low,
                batched.high);
    for (rknn_context ctx : {core0, core1, auto_a, auto_b, batch2}) rknn_destroy(ctx);
    return 0;
}
