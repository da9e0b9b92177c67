// Multiple-input demo: a two-stream model fed two images (raw NHWC uint8
// .npy files) in one rknn_inputs_set call; prints the outputs and, given
// PyTorch's float output for the same pair, their cosine similarity (exit 1
// below 0.98). Written against include/ only.
//
// usage: multi_input MODEL.rknn LEFT.npy RIGHT.npy [EXPECTED.npy]
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "../common/compare.h"
#include "../common/npy_file.h"
#include "rknn_api.h"

namespace {

constexpr double kMinCosine = 0.98;

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s MODEL.rknn LEFT.npy RIGHT.npy [EXPECTED.npy]\n", argv[0]);
        return 2;
    }
    examples::NpyArray images[2];
    std::string error;
    for (int i = 0; i < 2; ++i) {
        if (!examples::read_npy(argv[2 + i], &images[i], &error) || images[i].dtype != "uint8") {
            std::fprintf(stderr, "%s\n", error.empty() ? "inputs must be uint8 .npy files" : error.c_str());
            return 1;
        }
    }
    rknn_context ctx = 0;
    if (rknn_init(&ctx, argv[1], 0, 0, nullptr) != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_init failed\n");
        return 1;
    }
    rknn_input_output_num io{};
    int ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io));
    if (ret != RKNN_SUCC || io.n_input != 2) {
        std::fprintf(stderr, "the demo wants a model with two inputs\n");
        rknn_destroy(ctx);
        return 1;
    }
    rknn_input inputs[2] = {};
    for (uint32_t i = 0; i < 2; ++i) {
        rknn_tensor_attr attr{};
        attr.index = i;
        ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &attr, sizeof(attr));
        std::printf("input %u: %s [%u, %u, %u, %u] %s %s\n", i, attr.name, attr.dims[0], attr.dims[1], attr.dims[2],
                    attr.dims[3], get_format_string(attr.fmt), get_type_string(attr.type));
        inputs[i].index = i;
        inputs[i].type = RKNN_TENSOR_UINT8;
        inputs[i].fmt = RKNN_TENSOR_NHWC;
        inputs[i].buf = images[i].data.data();
        inputs[i].size = static_cast<uint32_t>(images[i].data.size());
    }
    if (ret == RKNN_SUCC) ret = rknn_inputs_set(ctx, 2, inputs);
    if (ret == RKNN_SUCC) ret = rknn_run(ctx, nullptr);
    rknn_output output{};
    output.want_float = 1;
    if (ret == RKNN_SUCC) ret = rknn_outputs_get(ctx, 1, &output, nullptr);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "inference failed: %d\n", ret);
        rknn_destroy(ctx);
        return 1;
    }
    const float* values = static_cast<const float*>(output.buf);
    const size_t count = output.size / sizeof(float);
    std::printf("output (%zu values):", count);
    for (size_t i = 0; i < count; ++i) std::printf(" %.4f", values[i]);
    std::printf("\n");
    int status = 0;
    if (argc > 4) {
        examples::NpyArray expected;
        if (!examples::read_npy(argv[4], &expected, &error) || expected.dtype != "float32" ||
            expected.data.size() != count * sizeof(float)) {
            std::fprintf(stderr, "bad expected output %s\n", argv[4]);
            status = 1;
        } else {
            const double c = examples::cosine(values, reinterpret_cast<const float*>(expected.data.data()), count);
            std::printf("cosine vs PyTorch: %.5f (%s)\n", c, c >= kMinCosine ? "ok" : "BELOW 0.98");
            status = c >= kMinCosine ? 0 : 1;
        }
    }
    rknn_outputs_release(ctx, 1, &output);
    rknn_destroy(ctx);
    return status;
}
