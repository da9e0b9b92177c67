// Object detection demo (the SDK's rknn_yolov5_demo, rewritten): runs a
// YOLOv5-style detector on an image, decodes the three heads, applies NMS,
// prints the detections and writes the image with the 20 best boxes as a PNG.
// Written against include/ only.
//
// usage: detect MODEL.rknn IMAGE OUT.png [LOOPS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/image_file.h"
#include "rknn_api.h"
#include "yolo_decode.h"

namespace {

constexpr float kScoreThreshold = 0.25f;
constexpr float kIouThreshold = 0.45f;
constexpr size_t kMaxShown = 20;  // printed and drawn: the highest scores

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s MODEL.rknn IMAGE OUT.png [LOOPS]\n", argv[0]);
        return 2;
    }
    const int loops = argc > 4 ? std::max(1, std::atoi(argv[4])) : 1;
    rknn_context ctx = 0;
    const auto init_start = std::chrono::steady_clock::now();
    int ret = rknn_init(&ctx, argv[1], 0, 0, nullptr);
    const double init_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - init_start).count();
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_init failed: %d\n", ret);
        return 1;
    }
    rknn_input_output_num io{};
    rknn_tensor_attr in_attr{};
    ret = rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io, sizeof(io));
    if (ret == RKNN_SUCC) ret = rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr));
    std::vector<rknn_tensor_attr> out_attrs(io.n_output);
    for (uint32_t i = 0; i < io.n_output && ret == RKNN_SUCC; ++i) {
        out_attrs[i].index = i;
        ret = rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &out_attrs[i], sizeof(rknn_tensor_attr));
    }
    if (ret != RKNN_SUCC || io.n_input != 1 || io.n_output != 3 || in_attr.fmt != RKNN_TENSOR_NHWC) {
        std::fprintf(stderr, "unexpected model: the demo wants one NHWC image input and three heads\n");
        rknn_destroy(ctx);
        return 1;
    }
    const int height = static_cast<int>(in_attr.dims[1]), width = static_cast<int>(in_attr.dims[2]);
    examples::Image image;
    std::string error;
    if (!examples::load_image(argv[2], 3, width, height, &image, &error)) {
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
    std::vector<rknn_output> outputs(io.n_output);
    for (rknn_output& o : outputs) o.want_float = 1;
    if (ret == RKNN_SUCC) ret = rknn_outputs_get(ctx, io.n_output, outputs.data(), nullptr);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "inference failed: %d\n", ret);
        rknn_destroy(ctx);
        return 1;
    }

    const auto post_start = std::chrono::steady_clock::now();
    std::vector<examples::HeadOutput> heads;
    const int classes = static_cast<int>(out_attrs[0].dims[1]) / 3 - 5;
    for (uint32_t i = 0; i < io.n_output; ++i) {
        const int grid_h = static_cast<int>(out_attrs[i].dims[2]), grid_w = static_cast<int>(out_attrs[i].dims[3]);
        heads.push_back({static_cast<const float*>(outputs[i].buf), grid_h, grid_w, height / grid_h});
    }
    std::vector<examples::Detection> detections =
        examples::non_max_suppression(examples::decode_yolov5(heads, classes, kScoreThreshold), kIouThreshold);
    for (examples::Detection& d : detections) {
        d.x0 = std::clamp(d.x0, 0.0f, width - 1.0f), d.x1 = std::clamp(d.x1, 0.0f, width - 1.0f);
        d.y0 = std::clamp(d.y0, 0.0f, height - 1.0f), d.y1 = std::clamp(d.y1, 0.0f, height - 1.0f);
    }
    const double post_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - post_start).count();

    std::printf("%s on %s (%dx%d), %d classes: %zu detections (score >= %.2f, NMS IoU %.2f)\n", argv[1], argv[2], width,
                height, classes, detections.size(), kScoreThreshold, kIouThreshold);
    for (size_t i = 0; i < detections.size() && i < kMaxShown; ++i) {
        const examples::Detection& d = detections[i];
        std::printf("  class %2d  score %.3f  box (%4.0f, %4.0f) - (%4.0f, %4.0f)\n", d.label, d.score, d.x0, d.y0,
                    d.x1, d.y1);
    }
    if (detections.size() > kMaxShown) std::printf("  ... %zu more (not drawn)\n", detections.size() - kMaxShown);
    for (size_t i = 0; i < detections.size() && i < kMaxShown; ++i) {
        const examples::Detection& d = detections[i];
        const uint8_t colour[3] = {static_cast<uint8_t>(60 + 37 * d.label % 196), static_cast<uint8_t>(255 - 53 * d.label % 200),
                                   static_cast<uint8_t>(90 + 71 * d.label % 166)};
        examples::draw_box(&image, static_cast<int>(d.x0), static_cast<int>(d.y0), static_cast<int>(d.x1),
                           static_cast<int>(d.y1), colour);
    }
    const bool written = examples::write_png(argv[3], image);
    std::printf("timing: rknn_init %.1f ms, rknn_run %.2f ms (mean of %d), post-processing %.2f ms\n", init_ms,
                run_ms / loops, loops, post_ms);
    std::printf("%s %s\n", written ? "wrote" : "could not write", argv[3]);
    rknn_outputs_release(ctx, io.n_output, outputs.data());
    rknn_destroy(ctx);
    return written ? 0 : 1;
}
