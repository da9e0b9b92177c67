// Custom op demo, the flow of the SDK's PyTorch custom op demo: a model whose
// cstDualResidual op (two inputs, two outputs, an "alpha" attribute) runs on
// the CPU in this program's own code (dual_residual_op.c), registered after
// rknn_init and before rknn_run. Feeds two float32 NCHW .npy inputs, prints
// the timing and, given the float outputs expected for them, each output's
// cosine similarity (exit 1 below the bar). Written against include/ only.
//
// usage: rknn_custom_op_demo MODEL.rknn IN0.npy IN1.npy [EXPECTED0.npy EXPECTED1.npy [MIN_COSINE]]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/compare.h"
#include "../common/file_bytes.h"
#include "../common/npy_file.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"

extern "C" rknn_custom_op* get_rknn_custom_op(void);  // dual_residual_op.c

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s MODEL.rknn IN0.npy IN1.npy [EXPECTED0.npy EXPECTED1.npy [MIN_COSINE]]\n",
                     argv[0]);
        return 2;
    }
    const double min_cosine = argc > 6 ? std::atof(argv[6]) : 0.99;
    examples::NpyArray in[2];
    std::string error;
    for (int i = 0; i < 2; ++i) {
        if (!examples::read_npy(argv[2 + i], &in[i], &error) || in[i].dtype != "float32") {
            std::fprintf(stderr, "%s\n", error.empty() ? "inputs must be float32 .npy files" : error.c_str());
            return 1;
        }
    }
    // As the SDK demo: the model read into memory, rknn_init, the buffer freed.
    std::vector<char> model;
    if (!examples::read_file_bytes(argv[1], &model)) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    rknn_context ctx = 0;
    int ret = rknn_init(&ctx, model.data(), static_cast<uint32_t>(model.size()), 0, nullptr);
    std::vector<char>().swap(model);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_init fail! ret=%d\n", ret);
        return 1;
    }
    ret = rknn_register_custom_ops(ctx, get_rknn_custom_op(), 1);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_register_custom_ops fail! ret=%d\n", ret);
        rknn_destroy(ctx);
        return 1;
    }
    rknn_sdk_version version{};
    rknn_input_output_num io{};
    if (rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &version, sizeof(version)) != RKNN_SUCC ||
        rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io)) != RKNN_SUCC || io.n_input != 2 || io.n_output != 2) {
        std::fprintf(stderr, "the demo wants a model with two inputs and two outputs\n");
        rknn_destroy(ctx);
        return 1;
    }
    std::printf("sdk version: %s driver version: %s\n", version.api_version, version.drv_version);
    std::printf("model input num: %u, output num: %u\n", io.n_input, io.n_output);
    rknn_input inputs[2] = {};
    for (uint32_t i = 0; i < 2; ++i) {
        rknn_tensor_attr attr{};
        attr.index = i;
        if (rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr)) != RKNN_SUCC ||
            in[i].data.size() != static_cast<size_t>(attr.n_elems) * sizeof(float)) {
            std::fprintf(stderr, "input %u: the .npy holds %zu floats, the model wants %u\n", i,
                         in[i].data.size() / sizeof(float), attr.n_elems);
            rknn_destroy(ctx);
            return 1;
        }
        inputs[i].index = i;
        inputs[i].buf = in[i].data.data();
        inputs[i].size = static_cast<uint32_t>(in[i].data.size());
        inputs[i].type = RKNN_TENSOR_FLOAT32;
        inputs[i].fmt = RKNN_TENSOR_NCHW;
    }
    if (rknn_inputs_set(ctx, 2, inputs) != RKNN_SUCC || rknn_run(ctx, nullptr) != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_inputs_set / rknn_run failed\n");
        rknn_destroy(ctx);
        return 1;
    }
    rknn_perf_run perf{};
    if (rknn_query(ctx, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)) == RKNN_SUCC)
        std::printf("rknn_run: %lld us\n", static_cast<long long>(perf.run_duration));
    rknn_output outputs[2] = {};
    for (rknn_output& o : outputs) o.want_float = 1;
    if (rknn_outputs_get(ctx, 2, outputs, nullptr) != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_outputs_get failed\n");
        rknn_destroy(ctx);
        return 1;
    }
    int status = 0;
    for (int i = 0; i < 2; ++i) {
        const auto* values = static_cast<const float*>(outputs[i].buf);
        const size_t n = outputs[i].size / sizeof(float);
        std::printf("output %d: %zu floats, first %.6f\n", i, n, n > 0 ? values[0] : 0.0f);
        if (argc <= 5) continue;
        examples::NpyArray expected;
        if (!examples::read_npy(argv[4 + i], &expected, &error) || expected.dtype != "float32" ||
            expected.data.size() != n * sizeof(float)) {
            std::fprintf(stderr, "%s: not a float32 .npy of %zu values\n", argv[4 + i], n);
            status = 1;
            continue;
        }
        const double c = examples::cosine(values, reinterpret_cast<const float*>(expected.data.data()), n);
        std::printf("output %d cosine vs the float reference: %.6f\n", i, c);
        if (c < min_cosine) status = 1;
    }
    rknn_outputs_release(ctx, 2, outputs);
    rknn_destroy(ctx);
    return status;
}
