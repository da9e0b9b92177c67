// The general API's own costs on the mock device, as ratios against
// baselines measured in the same run (medians of repeated timings):
//   (a) rknn_inputs_set of a 640x640x3 uint8 NHWC image into an int8 model's
//       native input, and rknn_outputs_get of a detector's three int8 heads
//       ([1,255,80,80], [1,255,40,40], [1,255,20,20]) as float32 NCHW, each
//       as throughput relative to memcpy of the same bytes (source bytes and,
//       for outputs, also the float bytes written);
//   (b) rknn_run per call on one-op models: a 1x1 convolution of a
//       one-pixel cube (one NPU submit, negligible emulated compute) and a
//       Reshape (CPU only), against an empty indirect call; the NPU op's
//       time is split into the driver-reported NPU time and the rest.
// The models are built in code and quantised with the converter's
// calibration. usage: runtime_api_bench [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "api/context_handle.h"
#include "graph/graph.h"
#include "model/model_file.h"
#include "quant/calibrate.h"
#include "quant/quantize.h"
#include "rknn_api.h"
#include "runtime/context.h"

namespace {

namespace graph = rknn::graph;
using Clock = std::chrono::steady_clock;

int32_t constant(graph::Graph* g, const std::string& name, const graph::Shape& shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-0.2f, 0.2f);
    std::vector<float> v(static_cast<size_t>(graph::num_elements(shape)));
    for (float& x : v) x = dist(rng);
    return g->add_constant(name, graph::DType::kFloat32, shape, graph::Buffer::copy_of(v.data(), v.size() * 4));
}

int32_t tensor(graph::Graph* g, const std::string& name, const graph::Shape& shape) {
    graph::Tensor t;
    t.name = name;
    t.shape = shape;
    return g->add_tensor(t);
}

// A k x k convolution with stride `stride` (padding k / 2).
int32_t conv(graph::Graph* g, int32_t x, int c_in, int c_out, int k, int stride, int size, const std::string& name) {
    const int32_t y = tensor(g, name, {1, c_out, size, size});
    graph::Op op;
    op.type = graph::OpType::kConv;
    op.name = name;
    op.inputs = {x, constant(g, name + ".w", {c_out, c_in, k, k}, static_cast<uint32_t>(c_out * k)),
                 constant(g, name + ".b", {c_out}, 3)};
    op.outputs = {y};
    op.attrs.set_ints("strides", {stride, stride});
    op.attrs.set_ints("pads", {k / 2, k / 2, k / 2, k / 2});
    g->add_op(op);
    return y;
}

// Calibrates on random inputs, quantises to int8, serialises.
std::vector<uint8_t> finish(graph::Graph g, bool pixels) {
    std::vector<std::vector<rknn::cpu::HostTensor>> samples(1);
    for (int32_t in : g.inputs) {
        rknn::cpu::HostTensor t(graph::DType::kFloat32, g.tensors[static_cast<size_t>(in)].shape);
        std::mt19937 rng(5);
        for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(rng() % 1000) / 250.0f - 2.0f;
        samples[0].push_back(t);
    }
    rknn::convert::CalibrationOptions min_max;
    min_max.progress = false;
    auto calibration = rknn::convert::calibrate(g, samples, min_max);
    if (!calibration.is_ok() || !rknn::convert::quantize_int8(&g, calibration.value().ranges, {}).is_ok()) std::abort();
    if (pixels) {
        graph::InputPreprocess pre;
        pre.mean = {123.675f, 116.28f, 103.53f};
        pre.std = {58.395f, 57.12f, 57.375f};
        pre.user_layout = graph::Layout::kNHWC;
        pre.user_dtype = graph::DType::kUInt8;
        g.preprocess = {pre};
    }
    g.target_soc = "rk3588";
    auto bytes = rknn::model::serialize_model(g);
    if (!bytes.is_ok()) std::abort();
    return bytes.value();
}

// A 640x640x3 image through stride-2 convolutions into three detector-shaped
// int8 heads (1x1 convolutions at strides 8, 16 and 32).
std::vector<uint8_t> detector_io_model() {
    graph::Graph g;
    const int32_t x = tensor(&g, "images", {1, 3, 640, 640});
    g.inputs = {x};
    const int32_t s2 = conv(&g, x, 3, 8, 3, 2, 320, "down2");
    const int32_t s4 = conv(&g, s2, 8, 16, 3, 2, 160, "down4");
    const int32_t s8 = conv(&g, s4, 16, 16, 3, 2, 80, "down8");
    const int32_t s16 = conv(&g, s8, 16, 16, 3, 2, 40, "down16");
    const int32_t s32 = conv(&g, s16, 16, 16, 3, 2, 20, "down32");
    g.outputs = {conv(&g, s8, 16, 255, 1, 1, 80, "head8"), conv(&g, s16, 16, 255, 1, 1, 40, "head16"),
                 conv(&g, s32, 16, 255, 1, 1, 20, "head32")};
    return finish(g, true);
}

std::vector<uint8_t> one_conv_model() {
    graph::Graph g;
    const int32_t x = tensor(&g, "x", {1, 16, 1, 1});
    g.inputs = {x};
    g.outputs = {conv(&g, x, 16, 16, 1, 1, 1, "conv")};
    return finish(g, false);
}

std::vector<uint8_t> one_reshape_model() {
    graph::Graph g;
    const int32_t x = tensor(&g, "x", {1, 16, 2, 2});
    g.inputs = {x};
    const std::vector<int64_t> shape = {1, 64};
    const int32_t s = g.add_constant("shape", graph::DType::kInt64, {2}, graph::Buffer::copy_of(shape.data(), 16));
    const int32_t y = tensor(&g, "y", {1, 64});
    g.add_op({graph::OpType::kReshape, "reshape", "", {x, s}, {y}, {}});
    g.outputs = {y};
    return finish(g, false);
}

// Median seconds of `repeats` timings of `iterations` calls.
double median_seconds(int repeats, int iterations, const std::function<void()>& body) {
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        const Clock::time_point start = Clock::now();
        for (int i = 0; i < iterations; ++i) body();
        times.push_back(std::chrono::duration<double>(Clock::now() - start).count() / iterations);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

rknn_context init(std::vector<uint8_t>& model) {
    rknn_context ctx = 0;
    if (rknn_init(&ctx, model.data(), static_cast<uint32_t>(model.size()), RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY,
                  nullptr) != RKNN_SUCC)
        std::abort();
    return ctx;
}

void check(int code, const char* what) {
    if (code != RKNN_SUCC) {
        std::fprintf(stderr, "%s failed: %d\n", what, code);
        std::exit(1);
    }
}

int empty_call(rknn_context, rknn_run_extend*) { return 0; }

}  // namespace

int main(int argc, char** argv) {
    const int repeats = argc > 1 ? std::max(3, std::atoi(argv[1])) : 9;
    std::printf("runtime_api_bench: medians of %d timings, single thread\n\n", repeats);

    // (a) inputs_set and outputs_get.
    std::vector<uint8_t> model = detector_io_model();
    rknn_context ctx = init(model);
    std::vector<uint8_t> image(640 * 640 * 3);
    std::mt19937 rng(1);
    for (uint8_t& p : image) p = static_cast<uint8_t>(rng());
    std::vector<uint8_t> copy(image.size());
    rknn_input in{};
    in.buf = image.data();
    in.size = static_cast<uint32_t>(image.size());
    in.type = RKNN_TENSOR_UINT8;
    in.fmt = RKNN_TENSOR_NHWC;
    const double memcpy_in = median_seconds(repeats, 20, [&] { std::memcpy(copy.data(), image.data(), image.size()); });
    const double set_in = median_seconds(repeats, 20, [&] { check(rknn_inputs_set(ctx, 1, &in), "rknn_inputs_set"); });
    check(rknn_run(ctx, nullptr), "rknn_run");
    const size_t head_elems = 255 * (80 * 80 + 40 * 40 + 20 * 20);
    std::vector<float> f0(255 * 6400), f1(255 * 1600), f2(255 * 400);
    rknn_output outs[3] = {};
    float* bufs[3] = {f0.data(), f1.data(), f2.data()};
    const size_t sizes[3] = {f0.size(), f1.size(), f2.size()};
    for (int k = 0; k < 3; ++k) {
        outs[k].want_float = 1;
        outs[k].is_prealloc = 1;
        outs[k].buf = bufs[k];
        outs[k].size = static_cast<uint32_t>(sizes[k] * sizeof(float));
    }
    std::vector<uint8_t> int8_src(head_elems), int8_dst(head_elems);
    std::vector<float> float_src(head_elems), float_dst(head_elems);
    const double get_out = median_seconds(repeats, 10, [&] { check(rknn_outputs_get(ctx, 3, outs, nullptr), "rknn_outputs_get"); });
    const double memcpy_int8 = median_seconds(repeats, 10, [&] { std::memcpy(int8_dst.data(), int8_src.data(), head_elems); });
    const double memcpy_float = median_seconds(repeats, 10, [&] {
        std::memcpy(float_dst.data(), float_src.data(), head_elems * sizeof(float));
    });
    rknn_destroy(ctx);
    std::printf("(a) rknn_inputs_set 640x640x3 uint8 NHWC -> the int8 native input (NHWC, w_stride 640): %.3f ms, "
                "memcpy of the %zu bytes %.3f ms: "
                "throughput ratio %.2f\n",
                set_in * 1e3, image.size(), memcpy_in * 1e3, memcpy_in / set_in);
    std::printf("    rknn_outputs_get 3 int8 heads -> float32 NCHW: %.3f ms; memcpy of the %zu int8 bytes %.3f ms "
                "(ratio %.2f), of the %zu float bytes %.3f ms (ratio %.2f)\n",
                get_out * 1e3, head_elems, memcpy_int8 * 1e3, memcpy_int8 / get_out, head_elems * 4,
                memcpy_float * 1e3, memcpy_float / get_out);

    // (b) run overhead.
    int (*volatile function)(rknn_context, rknn_run_extend*) = empty_call;
    const double baseline = median_seconds(repeats, 100000, [&] { (void)function(1, nullptr); });
    std::vector<uint8_t> conv_model = one_conv_model();
    ctx = init(conv_model);
    check(rknn_run(ctx, nullptr), "rknn_run");
    // The kernel driver reports each submit's NPU time (on the mock: from the
    // job's start to its completion interrupt, i.e. the emulated task and the
    // mock kernel's own dispatch); the rest of a call is the runtime's.
    std::shared_ptr<rknn::runtime::Context> runtime = rknn::api::runtime_context(ctx).value();
    int64_t npu_ns = 0;
    int runs = 0;
    const double run_conv = median_seconds(repeats, 200, [&] {
        check(rknn_run(ctx, nullptr), "rknn_run");
        npu_ns += runtime->last_run_npu_ns();
        ++runs;
    });
    const double npu_per_run = static_cast<double>(npu_ns) * 1e-9 / runs;
    runtime.reset();
    rknn_destroy(ctx);
    std::vector<uint8_t> reshape_model = one_reshape_model();
    ctx = init(reshape_model);
    const double run_reshape = median_seconds(repeats, 2000, [&] { check(rknn_run(ctx, nullptr), "rknn_run"); });
    rknn_destroy(ctx);
    std::printf("(b) rknn_run per call: one NPU op (1x1 conv, one pixel, one submit) %.1f us, of which the driver "
                "reports %.1f us NPU time (mean): runtime overhead %.1f us; one CPU op (Reshape) %.2f us; empty "
                "indirect call %.4f us (ratios %.0fx, %.0fx)\n",
                run_conv * 1e6, npu_per_run * 1e6, (run_conv - npu_per_run) * 1e6, run_reshape * 1e6,
                baseline * 1e6, run_conv / baseline, run_reshape / baseline);
    return 0;
}
