// Image classification demo (the SDK's rknn_mobilenet_demo, rewritten): loads
// an image, resizes it to the model input, runs it and prints the top-5
// classes with their softmax probabilities. Written against include/ only.
//
// usage: classify MODEL.rknn IMAGE [LOOPS]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/image_file.h"
#include "rknn_api.h"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL.rknn IMAGE [LOOPS]\n", argv[0]);
        return 2;
    }
    const int loops = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
    rknn_context ctx = 0;
    int ret = rknn_init(&ctx, argv[1], 0, 0, nullptr);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_init failed: %d\n", ret);
        return 1;
    }
    rknn_tensor_attr in_attr{};
    in_attr.index = 0;
    rknn_tensor_attr out_attr{};
    out_attr.index = 0;
    if (rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr)) != RKNN_SUCC ||
        rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &out_attr, sizeof(out_attr)) != RKNN_SUCC ||
        in_attr.fmt != RKNN_TENSOR_NHWC) {
        std::fprintf(stderr, "unexpected model: the demo wants one NHWC image input\n");
        rknn_destroy(ctx);
        return 1;
    }
    const int height = static_cast<int>(in_attr.dims[1]), width = static_cast<int>(in_attr.dims[2]);
    const int channels = static_cast<int>(in_attr.dims[3]);
    examples::Image image;
    std::string error;
    if (!examples::load_image(argv[2], channels, width, height, &image, &error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        rknn_destroy(ctx);
        return 1;
    }

    rknn_input input{};
    input.index = 0;
    input.type = RKNN_TENSOR_UINT8;
    input.fmt = RKNN_TENSOR_NHWC;
    input.buf = image.pixels.data();
    input.size = static_cast<uint32_t>(image.pixels.size());
    double run_ms = 0;
    for (int i = 0; i < loops && ret == RKNN_SUCC; ++i) {
        ret = rknn_inputs_set(ctx, 1, &input);
        const auto start = std::chrono::steady_clock::now();
        if (ret == RKNN_SUCC) ret = rknn_run(ctx, nullptr);
        run_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }
    rknn_output output{};
    output.want_float = 1;
    if (ret == RKNN_SUCC) ret = rknn_outputs_get(ctx, 1, &output, nullptr);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "inference failed: %d\n", ret);
        rknn_destroy(ctx);
        return 1;
    }
    const float* logits = static_cast<const float*>(output.buf);
    const size_t classes = output.size / sizeof(float);
    const float top = *std::max_element(logits, logits + classes);
    double sum = 0;
    for (size_t i = 0; i < classes; ++i) sum += std::exp(logits[i] - top);
    std::vector<size_t> order(classes);
    for (size_t i = 0; i < classes; ++i) order[i] = i;
    const size_t shown = std::min<size_t>(5, classes);
    std::partial_sort(order.begin(), order.begin() + static_cast<long>(shown), order.end(),
                      [logits](size_t a, size_t b) { return logits[a] > logits[b]; });
    std::printf("%s on %s (%dx%d): %zu classes, rknn_run %.2f ms (mean of %d)\n", argv[1], argv[2], width, height,
                classes, run_ms / loops, loops);
    std::printf("---- Top%zu ----\n", shown);
    for (size_t k = 0; k < shown; ++k)
        std::printf("[%4zu] logit %8.4f  p = %.4f\n", order[k], logits[order[k]], std::exp(logits[order[k]] - top) / sum);
    rknn_outputs_release(ctx, 1, &output);
    rknn_destroy(ctx);
    return 0;
}
