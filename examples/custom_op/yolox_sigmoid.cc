// CPU custom op demo, the flow of the SDK's YOLOX custom op demo: a
// YOLOX-like detector whose objectness and class sigmoids are the custom op
// cstSigmoid (sigmoid_op.c), registered after rknn_init and run on the CPU
// between the NPU's convolutions. Decodes the three heads (anchor free,
// strides 8, 16, 32), applies NMS and prints the detections. Given the
// directory make_yolox_model.py wrote, also prints each head's cosine
// similarity with NumPy's float heads (exit 1 below the bar).
//
// --own-dtype registers the op with an init that asks for its tensors as
// the model holds them (OpenRKNN only, docs/custom-ops.md): int8 codes
// through a lookup table instead of float32 both ways.
//
// usage: rknn_yolox_custom_op_demo MODEL.rknn IMAGE|PIXELS.npy [--own-dtype] [--expect DIR [MIN_COSINE]]
//        (PIXELS.npy: uint8 [1, H, W, 3])
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/image_file.h"
#include "../common/compare.h"
#include "../common/file_bytes.h"
#include "../common/npy_file.h"
#include "../object_detection/yolo_decode.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"

extern "C" {
rknn_custom_op* get_rknn_custom_op(void);  // sigmoid_op.c
int cst_sigmoid_own_dtype_init(rknn_custom_op_context* op_ctx, rknn_custom_op_tensor* inputs, uint32_t n_inputs,
                               rknn_custom_op_tensor* outputs, uint32_t n_outputs);
}

namespace {

constexpr float kScoreThreshold = 0.25f;
constexpr float kIouThreshold = 0.45f;

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The model's input pixels, uint8 NHWC: a .npy of exactly that, or an image
// resized to the input.
bool load_pixels(const std::string& path, int width, int height, std::vector<uint8_t>* pixels) {
    std::string error;
    if (ends_with(path, ".npy")) {
        examples::NpyArray npy;
        const std::vector<int64_t> want = {1, height, width, 3};
        if (!examples::read_npy(path, &npy, &error) || npy.dtype != "uint8" || npy.shape != want) {
            std::fprintf(stderr, "%s: %s\n", path.c_str(),
                         error.empty() ? "not a uint8 .npy of the input's shape [1, H, W, 3]" : error.c_str());
            return false;
        }
        *pixels = std::move(npy.data);
        return true;
    }
    examples::Image image;
    if (!examples::load_image(path, 3, width, height, &image, &error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return false;
    }
    *pixels = std::move(image.pixels);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL.rknn IMAGE|PIXELS.npy [--own-dtype] [--expect DIR [MIN_COSINE]]\n", argv[0]);
        return 2;
    }
    bool own_dtype = false;
    std::string expect_dir;
    double min_cosine = 0.99;
    for (int i = 3; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--own-dtype") {
            own_dtype = true;
        } else if (arg == "--expect" && i + 1 < argc) {
            expect_dir = argv[++i];
            if (i + 1 < argc && argv[i + 1][0] != '-') min_cosine = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr, "unknown argument %s\n", arg.c_str());
            return 2;
        }
    }
    // As the SDK demo: the model read into memory, rknn_init, then the op.
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
    rknn_custom_op sigmoid = *get_rknn_custom_op();
    if (own_dtype) sigmoid.init = cst_sigmoid_own_dtype_init;
    ret = rknn_register_custom_ops(ctx, &sigmoid, 1);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_register_custom_ops fail! ret=%d\n", ret);
        rknn_destroy(ctx);
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
        if (ret == RKNN_SUCC && (out_attrs[i].n_dims != 4 || out_attrs[i].dims[1] < 6)) ret = RKNN_ERR_MODEL_INVALID;
    }
    if (ret != RKNN_SUCC || io.n_input != 1 || io.n_output != 3 || in_attr.fmt != RKNN_TENSOR_NHWC ||
        in_attr.dims[3] != 3) {
        std::fprintf(stderr, "unexpected model: the demo wants one NHWC RGB input and three YOLOX heads\n");
        rknn_destroy(ctx);
        return 1;
    }
    const int height = static_cast<int>(in_attr.dims[1]), width = static_cast<int>(in_attr.dims[2]);
    std::vector<uint8_t> pixels;
    if (!load_pixels(argv[2], width, height, &pixels)) {
        rknn_destroy(ctx);
        return 1;
    }
    rknn_input input{};
    input.index = 0;
    input.type = RKNN_TENSOR_UINT8;
    input.fmt = RKNN_TENSOR_NHWC;
    input.buf = pixels.data();
    input.size = static_cast<uint32_t>(pixels.size());
    const auto start = std::chrono::steady_clock::now();
    ret = rknn_inputs_set(ctx, 1, &input);
    if (ret == RKNN_SUCC) ret = rknn_run(ctx, nullptr);
    const double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::vector<rknn_output> outputs(io.n_output);
    for (rknn_output& o : outputs) o.want_float = 1;
    if (ret == RKNN_SUCC) ret = rknn_outputs_get(ctx, io.n_output, outputs.data(), nullptr);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "inference failed: %d\n", ret);
        rknn_destroy(ctx);
        return 1;
    }

    const int classes = static_cast<int>(out_attrs[0].dims[1]) - 5;
    std::vector<examples::HeadOutput> heads;
    for (uint32_t i = 0; i < io.n_output; ++i) {
        const int grid_h = static_cast<int>(out_attrs[i].dims[2]), grid_w = static_cast<int>(out_attrs[i].dims[3]);
        heads.push_back({static_cast<const float*>(outputs[i].buf), grid_h, grid_w, height / std::max(1, grid_h)});
    }
    std::vector<examples::Detection> detections =
        examples::non_max_suppression(examples::decode_yolox(heads, classes, kScoreThreshold), kIouThreshold);
    std::printf("%s on %s (%dx%d), cstSigmoid %s: %zu detections (score >= %.2f, NMS IoU %.2f)\n", argv[1], argv[2],
                width, height, own_dtype ? "in the model's own dtype" : "in float32", detections.size(),
                kScoreThreshold, kIouThreshold);
    for (examples::Detection& d : detections) {
        d.x0 = std::clamp(d.x0, 0.0f, width - 1.0f), d.x1 = std::clamp(d.x1, 0.0f, width - 1.0f);
        d.y0 = std::clamp(d.y0, 0.0f, height - 1.0f), d.y1 = std::clamp(d.y1, 0.0f, height - 1.0f);
        std::printf("  class %d score %.4f box %.2f %.2f %.2f %.2f\n", d.label, d.score, d.x0, d.y0, d.x1, d.y1);
    }
    std::printf("rknn_inputs_set + rknn_run: %.2f ms\n", run_ms);

    int status = 0;
    for (uint32_t i = 0; i < io.n_output && !expect_dir.empty(); ++i) {
        const size_t n = outputs[i].size / sizeof(float);
        const std::string path = expect_dir + "/test_head" + std::to_string(i) + ".npy";
        examples::NpyArray expected;
        std::string error;
        if (!examples::read_npy(path, &expected, &error) || expected.dtype != "float32" ||
            expected.data.size() != n * sizeof(float)) {
            std::fprintf(stderr, "%s: not a float32 .npy of %zu values\n", path.c_str(), n);
            status = 1;
            continue;
        }
        const double c = examples::cosine(static_cast<const float*>(outputs[i].buf),
                                reinterpret_cast<const float*>(expected.data.data()), n);
        std::printf("head %u cosine vs the float reference: %.6f\n", i, c);
        if (c < min_cosine) status = 1;
    }
    rknn_outputs_release(ctx, io.n_output, outputs.data());
    rknn_destroy(ctx);
    return status;
}
