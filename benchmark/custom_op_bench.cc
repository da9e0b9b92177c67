// What the runtime spends around a CPU custom op, against memcpy of the same
// tensor's float32 bytes, measured in the same run (issue 21: at most 2x).
//
// The model: an int8 1x1 convolution on the NPU writes [1, 256, 64, 64]; a
// custom op whose compute does nothing reads it and writes an int8 tensor of
// the same shape, which an NPU MaxPool reads. The custom op's rows of the
// per-layer table (RKNN_QUERY_PERF_DETAIL: its exDataConvert rows and its
// own) are then the runtime's work alone: reading the NPU's cube,
// dequantising to float32 NCHW, the callback's dispatch, quantising the
// result and packing it for the next NPU op.
// A second context registers the op with an init that asks for its tensors
// in the model's own dtype (pass_through, OpenRKNN only): int8 NCHW codes,
// no float32. Each context is measured in rounds interleaved with memcpy
// (one context after the other, so that neither evicts the other's
// buffers); the medians and their spread are printed.
// usage: custom_op_bench [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "model/model_file.h"
#include "quant/calibrate.h"
#include "quant/quantize.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"

namespace {

namespace graph = rknn::graph;
using Clock = std::chrono::steady_clock;

constexpr int kChannels = 256, kSize = 64;

int32_t tensor(graph::Graph* g, const std::string& name, const graph::Shape& shape) {
    graph::Tensor t;
    t.name = name;
    t.shape = shape;
    return g->add_tensor(t);
}

std::vector<uint8_t> model_bytes() {
    graph::Graph g;
    const graph::Shape shape = {1, kChannels, kSize, kSize};
    const int32_t x = tensor(&g, "x", shape);
    g.inputs = {x};
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> dist(-0.1f, 0.1f);
    std::vector<float> w(static_cast<size_t>(kChannels) * kChannels);
    for (float& v : w) v = dist(rng);
    const int32_t weights = g.add_constant("w", graph::DType::kFloat32, {kChannels, kChannels, 1, 1},
                                           graph::Buffer::copy_of(w.data(), w.size() * sizeof(float)));
    const int32_t y = tensor(&g, "y", shape);
    g.add_op({graph::OpType::kConv, "conv", "", {x, weights}, {y}, {}});
    g.outputs = {y};
    std::vector<std::vector<rknn::cpu::HostTensor>> samples(1);
    rknn::cpu::HostTensor sample(graph::DType::kFloat32, shape);
    for (int64_t i = 0; i < sample.numel(); ++i) sample.data<float>()[i] = dist(rng) * 20.0f;
    samples[0].push_back(sample);
    rknn::convert::CalibrationOptions min_max;
    min_max.progress = false;
    auto calibration = rknn::convert::calibrate(g, samples, min_max);
    if (!calibration.is_ok() || !rknn::convert::quantize_int8(&g, calibration.value().ranges, {}).is_ok()) std::abort();
    // The custom op and the NPU op after it, in the convolution's quantisation.
    graph::Tensor custom_out = g.tensors[static_cast<size_t>(g.outputs[0])];
    custom_out.name = "custom_out";
    const int32_t c = g.add_tensor(custom_out);
    g.add_op({graph::OpType::kCustom, "pass", "cstPass", {g.outputs[0]}, {c}, {}});
    g.custom_ops.push_back({"cstPass", {}});
    graph::Tensor pooled = custom_out;
    pooled.name = "pooled";
    pooled.shape = {1, kChannels, kSize / 2, kSize / 2};
    const int32_t p = g.add_tensor(pooled);
    graph::Op pool{graph::OpType::kMaxPool, "pool", "", {c}, {p}, {}};
    pool.attrs.set_ints("kernel_shape", {2, 2});
    pool.attrs.set_ints("strides", {2, 2});
    g.add_op(pool);
    g.outputs = {p};
    g.target_soc = "rk3588";
    auto bytes = rknn::model::serialize_model(g);
    if (!bytes.is_ok()) std::abort();
    return bytes.value();
}

int do_nothing(rknn_custom_op_context*, rknn_custom_op_tensor*, uint32_t, rknn_custom_op_tensor*, uint32_t) {
    return 0;
}

int own_dtype_init(rknn_custom_op_context*, rknn_custom_op_tensor* inputs, uint32_t, rknn_custom_op_tensor* outputs,
                   uint32_t) {
    inputs[0].attr.pass_through = 1;
    outputs[0].attr.pass_through = 1;
    return 0;
}

void check(int code, const char* what) {
    if (code != RKNN_SUCC) {
        std::fprintf(stderr, "%s failed: %d\n", what, code);
        std::exit(1);
    }
}

// The custom op's rows of the per-layer table: its conversions (the
// exDataConvert rows named after it) and its callbacks' row.
struct OpRows {
    double in_us = -1, call_us = -1, out_us = -1;
    double total() const { return in_us + call_us + out_us; }
};

OpRows rows_of(rknn_context ctx, const std::string& name) {
    rknn_perf_detail detail{};
    check(rknn_query(ctx, RKNN_QUERY_PERF_DETAIL, &detail, sizeof(detail)), "PERF_DETAIL");
    const std::string text = detail.perf_data != nullptr ? detail.perf_data : "";
    OpRows rows;
    size_t begin = 0;
    while (begin < text.size()) {
        size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(begin, end - begin);
        begin = end + 1;
        // ID OpType DataType Target InputShape OutputShape Time(us) NPU(us) FullName
        char op[64], dtype[16], target[8], in[64], out[64], npu[16], full[128] = "";
        long us = -1;
        if (std::sscanf(line.c_str(), "%*d %63s %15s %7s %63s %63s %ld %15s %127[^\n]", op, dtype, target, in, out, &us, npu,
                        full) != 8)
            continue;
        const std::string full_name = full;
        if (full_name == name) rows.call_us = static_cast<double>(us);
        if (full_name == name + " (inputs)") rows.in_us = static_cast<double>(us);
        if (full_name == name + " (outputs)") rows.out_us = static_cast<double>(us);
    }
    if (rows.in_us < 0 || rows.call_us < 0 || rows.out_us < 0) {
        std::fprintf(stderr, "the per-layer table lacks the rows of \"%s\":\n%s", name.c_str(), text.c_str());
        std::exit(1);
    }
    return rows;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

rknn_context make_context(std::vector<uint8_t>& model, bool own_dtype, const rknn_input& in) {
    rknn_context ctx = 0;
    check(rknn_init(&ctx, model.data(), static_cast<uint32_t>(model.size()),
                    RKNN_FLAG_COLLECT_PERF_MASK | RKNN_FLAG_DISABLE_PROC_HIGH_PRIORITY, nullptr),
          "rknn_init");
    rknn_custom_op op;
    std::memset(&op, 0, sizeof(op));
    op.version = 1;
    op.target = RKNN_TARGET_TYPE_CPU;
    std::strcpy(op.op_type, "cstPass");
    op.compute = do_nothing;
    if (own_dtype) op.init = own_dtype_init;
    check(rknn_register_custom_ops(ctx, &op, 1), "rknn_register_custom_ops");
    rknn_input copy = in;
    check(rknn_inputs_set(ctx, 1, &copy), "rknn_inputs_set");
    check(rknn_run(ctx, nullptr), "rknn_run");  // warm-up
    return ctx;
}

std::string spread(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return std::to_string(static_cast<long>(v.front())) + "-" + std::to_string(static_cast<long>(v.back()));
}

struct Series {
    std::vector<double> copy, total, in, call, out, ratio;
    void add(const OpRows& rows, double copy_us) {
        copy.push_back(copy_us);
        total.push_back(rows.total());
        in.push_back(rows.in_us);
        call.push_back(rows.call_us);
        out.push_back(rows.out_us);
        ratio.push_back(rows.total() / copy_us);
    }
    void print(const char* what, size_t copied_bytes) const {
        std::printf("  %s: median %.0f us (%s)\n", what, median(total), spread(total).c_str());
        std::printf("    memcpy of the %zu float32 bytes in the same rounds: median %.0f us (%s)\n", copied_bytes,
                    median(copy), spread(copy).c_str());
        std::printf("    of which: inputs in %.0f us (%s), callbacks %.0f us (%s), outputs back %.0f us (%s)\n",
                    median(in), spread(in).c_str(), median(call), spread(call).c_str(), median(out),
                    spread(out).c_str());
        std::printf("    ratio to memcpy per round: median %.2f (min %.2f, max %.2f)\n", median(ratio),
                    *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()));
    }
};

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::max(3, std::atoi(argv[1])) : 15;
    std::vector<uint8_t> model = model_bytes();
    std::vector<float> input(static_cast<size_t>(kChannels) * kSize * kSize);
    std::mt19937 rng(1);
    for (float& v : input) v = static_cast<float>(rng() % 2000) / 1000.0f - 1.0f;
    rknn_input in{};
    in.buf = input.data();
    in.size = static_cast<uint32_t>(input.size() * sizeof(float));
    in.type = RKNN_TENSOR_FLOAT32;
    in.fmt = RKNN_TENSOR_NCHW;
    const rknn_context as_float = make_context(model, false, in), as_int8 = make_context(model, true, in);

    const size_t float_bytes = input.size() * sizeof(float);
    std::vector<uint8_t> src(float_bytes, 1), dst(float_bytes);
    const auto measure = [&](rknn_context ctx) {
        Series series;
        for (int r = 0; r < rounds; ++r) {
            const Clock::time_point start = Clock::now();
            std::memcpy(dst.data(), src.data(), float_bytes);
            const double copy = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
            src[static_cast<size_t>(r)] = dst[static_cast<size_t>(r) + 1];  // keeps the copy observable
            check(rknn_run(ctx, nullptr), "rknn_run");
            series.add(rows_of(ctx, "pass"), copy);
        }
        return series;
    };
    const Series float_series = measure(as_float), int8_series = measure(as_int8);
    rknn_destroy(as_float);
    rknn_destroy(as_int8);
    std::printf("custom_op_bench: [1,%d,%d,%d] int8 through a CPU custom op, %d rounds each\n", kChannels, kSize, kSize,
                rounds);
    float_series.print("float32 callbacks, the runtime's time around the op (cube -> float32 NCHW, dispatch, "
                       "float32 -> int8 cube)",
                       float_bytes);
    int8_series.print("own-dtype callbacks (cube -> int8 NCHW, dispatch, int8 NCHW -> cube)", float_bytes);
    return 0;
}
