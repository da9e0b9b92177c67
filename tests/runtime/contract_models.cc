#include "runtime/contract_models.h"

#include <gtest/gtest.h>

#include <random>

#include "common/test_graphs.h"
#include "model/model_file.h"
#include "quant/calibrate.h"
#include "quant/quantize.h"

namespace rknn::testing {

using cpu::HostTensor;

namespace {
constexpr float kMean[] = {120.0f, 110.0f, 100.0f};
constexpr float kStd[] = {60.0f, 55.0f, 50.0f};
}  // namespace

void quantize_8x8(graph::Graph* g, uint32_t seed, int count) {
    std::vector<std::vector<HostTensor>> samples;
    std::mt19937 rng(seed);
    for (int s = 0; s < count; ++s) {
        HostTensor x(graph::DType::kFloat32, {1, 3, 8, 8});
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng() % 256) / 60.0f - 2.0f;
        samples.push_back({x});
    }
    convert::CalibrationOptions min_max;
    min_max.progress = false;
    auto calibration = convert::calibrate(*g, samples, min_max);
    ASSERT_TRUE(calibration.is_ok());
    ASSERT_TRUE(convert::quantize_int8(g, calibration.value().ranges, {}).is_ok());
}

graph::Graph quantized_cnn() {
    graph::Graph g = small_cnn();
    quantize_8x8(&g, 7, 4);
    graph::InputPreprocess pre;
    pre.mean.assign(std::begin(kMean), std::end(kMean));
    pre.std.assign(std::begin(kStd), std::end(kStd));
    pre.user_layout = graph::Layout::kNHWC;
    pre.user_dtype = graph::DType::kUInt8;
    g.preprocess = {pre};
    g.custom_string = "contract test";
    return g;
}

int init_graph(const graph::Graph& g, uint32_t flags, rknn_context* ctx) {
    auto bytes = model::serialize_model(g);
    if (!bytes.is_ok()) return -1000;
    return rknn_init(ctx, bytes.value().data(), static_cast<uint32_t>(bytes.value().size()), flags, nullptr);
}

std::vector<uint8_t> pixels(uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> p(8 * 8 * 3);
    for (uint8_t& v : p) v = static_cast<uint8_t>(rng());
    return p;
}

rknn_input input_of(void* buf, uint32_t size, rknn_tensor_type type, rknn_tensor_format fmt) {
    rknn_input in{};
    in.index = 0;
    in.buf = buf;
    in.size = size;
    in.type = type;
    in.fmt = fmt;
    return in;
}

graph::Graph conv_pool_model() {
    graph::Graph g = quantized_cnn();
    g.outputs = {g.ops[2].outputs[0]};
    g.ops.resize(3);
    return g;
}

std::vector<uint8_t> run_pixels(rknn_context ctx, uint32_t seed, bool want_float) {
    return run_image(ctx, pixels(seed), want_float);
}

std::vector<uint8_t> run_image(rknn_context ctx, std::vector<uint8_t> p, bool want_float) {
    rknn_input in = input_of(p.data(), static_cast<uint32_t>(p.size()), RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC);
    if (rknn_inputs_set(ctx, 1, &in) != RKNN_SUCC || rknn_run(ctx, nullptr) != RKNN_SUCC) {
        ADD_FAILURE() << "inputs_set or run failed";
        return {};
    }
    rknn_output out{};
    out.want_float = want_float ? 1 : 0;
    if (rknn_outputs_get(ctx, 1, &out, nullptr) != RKNN_SUCC) {
        ADD_FAILURE() << "outputs_get failed";
        return {};
    }
    std::vector<uint8_t> bytes(static_cast<const uint8_t*>(out.buf), static_cast<const uint8_t*>(out.buf) + out.size);
    EXPECT_EQ(rknn_outputs_release(ctx, 1, &out), RKNN_SUCC);
    return bytes;
}

void set_nhwc_dims(const graph::Shape& nchw, rknn_tensor_attr* attr) {
    attr->n_dims = 4;
    attr->dims[0] = static_cast<uint32_t>(nchw[0]);
    attr->dims[1] = static_cast<uint32_t>(nchw[2]);
    attr->dims[2] = static_cast<uint32_t>(nchw[3]);
    attr->dims[3] = static_cast<uint32_t>(nchw[1]);
    attr->fmt = RKNN_TENSOR_NHWC;
}

std::vector<uint8_t> random_pixels(const graph::Shape& nchw, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> p(static_cast<size_t>(nchw[1] * nchw[2] * nchw[3]));
    for (uint8_t& v : p) v = static_cast<uint8_t>(rng());
    return p;
}

bool create_max_io_mems(rknn_context ctx, rknn_tensor_mem** in, rknn_tensor_mem** out) {
    rknn_tensor_attr max_in{}, max_out{};
    if (rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &max_in, sizeof(max_in)) != RKNN_SUCC ||
        rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &max_out, sizeof(max_out)) != RKNN_SUCC)
        return false;
    *in = rknn_create_mem(ctx, max_in.n_elems);
    *out = rknn_create_mem(ctx, max_out.n_elems * static_cast<uint32_t>(sizeof(float)));
    if (*in != nullptr && *out != nullptr) return true;
    for (rknn_tensor_mem** m : {in, out})
        if (*m != nullptr) rknn_destroy_mem(ctx, *m);
    *in = *out = nullptr;
    return false;
}

bool give_all_memory(rknn_context ctx, rknn_tensor_mem** weights, rknn_tensor_mem** internal) {
    rknn_mem_size size{};
    if (rknn_query(ctx, RKNN_QUERY_MEM_SIZE, &size, sizeof(size)) != RKNN_SUCC) return false;
    // A part of size 0 (a model without internal tensors) needs no memory.
    *weights = size.total_weight_size > 0 ? rknn_create_mem(ctx, size.total_weight_size) : nullptr;
    *internal = size.total_internal_size > 0 ? rknn_create_mem(ctx, size.total_internal_size) : nullptr;
    const bool weights_ok =
        size.total_weight_size == 0 || (*weights != nullptr && rknn_set_weight_mem(ctx, *weights) == RKNN_SUCC);
    const bool internal_ok =
        size.total_internal_size == 0 || (*internal != nullptr && rknn_set_internal_mem(ctx, *internal) == RKNN_SUCC);
    if (weights_ok && internal_ok) return true;
    for (rknn_tensor_mem** m : {weights, internal})
        if (*m != nullptr) rknn_destroy_mem(ctx, *m);
    *weights = *internal = nullptr;
    return false;
}

bool bind_current_io(rknn_context ctx, rknn_tensor_mem* in, rknn_tensor_mem* out, rknn_tensor_attr* out_attr) {
    rknn_tensor_attr in_attr{};
    *out_attr = rknn_tensor_attr{};
    if (rknn_query(ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, &in_attr, sizeof(in_attr)) != RKNN_SUCC ||
        rknn_query(ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, out_attr, sizeof(*out_attr)) != RKNN_SUCC)
        return false;
    in_attr.type = RKNN_TENSOR_UINT8;
    in_attr.fmt = RKNN_TENSOR_NHWC;
    out_attr->type = RKNN_TENSOR_FLOAT32;
    out_attr->fmt = RKNN_TENSOR_NCHW;
    return rknn_set_io_mem(ctx, in, &in_attr) == RKNN_SUCC && rknn_set_io_mem(ctx, out, out_attr) == RKNN_SUCC;
}

}  // namespace rknn::testing
