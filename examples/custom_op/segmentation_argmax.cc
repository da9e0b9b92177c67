// GPU custom op demo, the flow of the SDK's segmentation demo: a model whose
// final ArgMax was kept as a custom op (rknn_convert --custom-op ArgMax) gets
// an OpenCL kernel for it (argmax_gpu_op.c), registered after rknn_init with
// RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU. Feeds a float32 NCHW .npy
// image, prints the timing and the mask's class counts and, given the
// expected int64 mask, the share of pixels that agree (exit 1 below the bar).
// Written against include/ only.
//
// usage: rknn_custom_gpu_op_demo MODEL.rknn IMAGE.npy [EXPECTED_MASK.npy [MIN_AGREEMENT]]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../common/npy_file.h"
#include "rknn_api.h"
#include "rknn_custom_op.h"

extern "C" rknn_custom_op* get_rknn_custom_op(void);  // argmax_gpu_op.c

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL.rknn IMAGE.npy [EXPECTED_MASK.npy [MIN_AGREEMENT]]\n", argv[0]);
        return 2;
    }
    const double min_agreement = argc > 4 ? std::atof(argv[4]) : 0.99;
    examples::NpyArray image;
    std::string error;
    if (!examples::read_npy(argv[2], &image, &error) || image.dtype != "float32") {
        std::fprintf(stderr, "%s\n", error.empty() ? "the image must be a float32 .npy" : error.c_str());
        return 1;
    }
    rknn_context ctx = 0;
    int ret = rknn_init(&ctx, argv[1], 0, RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU, nullptr);
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
    rknn_tensor_attr in_attr{}, out_attr{};
    out_attr.index = 0;
    if (rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &in_attr, sizeof(in_attr)) != RKNN_SUCC ||
        rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &out_attr, sizeof(out_attr)) != RKNN_SUCC ||
        image.data.size() != static_cast<size_t>(in_attr.n_elems) * sizeof(float)) {
        std::fprintf(stderr, "the image does not fit the model's input (%u values)\n", in_attr.n_elems);
        rknn_destroy(ctx);
        return 1;
    }
    rknn_input input{};
    input.index = 0;
    input.buf = image.data.data();
    input.size = static_cast<uint32_t>(image.data.size());
    input.type = RKNN_TENSOR_FLOAT32;
    input.fmt = RKNN_TENSOR_NCHW;
    rknn_core_mask mask_all = RKNN_NPU_CORE_ALL;
    if (rknn_inputs_set(ctx, 1, &input) != RKNN_SUCC || rknn_set_core_mask(ctx, mask_all) != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_inputs_set / rknn_set_core_mask failed\n");
        rknn_destroy(ctx);
        return 1;
    }
    for (int loop = 0; loop < 3; ++loop) {
        if (rknn_run(ctx, nullptr) != RKNN_SUCC) {
            std::fprintf(stderr, "rknn_run failed\n");
            rknn_destroy(ctx);
            return 1;
        }
        rknn_perf_run perf{};
        if (rknn_query(ctx, RKNN_QUERY_PERF_RUN, &perf, sizeof(perf)) == RKNN_SUCC)
            std::printf("run %d: %lld us\n", loop, static_cast<long long>(perf.run_duration));
    }
    rknn_output output{};
    output.want_float = 0;
    if (rknn_outputs_get(ctx, 1, &output, nullptr) != RKNN_SUCC || out_attr.type != RKNN_TENSOR_INT64) {
        std::fprintf(stderr, "rknn_outputs_get failed, or the output is not the int64 mask\n");
        rknn_destroy(ctx);
        return 1;
    }
    const size_t n = output.size / sizeof(int64_t);
    std::vector<int64_t> mask(n);
    std::memcpy(mask.data(), output.buf, n * sizeof(int64_t));
    rknn_outputs_release(ctx, 1, &output);
    rknn_destroy(ctx);
    std::map<int64_t, size_t> counts;
    for (int64_t c : mask) ++counts[c];
    std::printf("mask: %zu pixels;", n);
    for (const auto& [c, count] : counts) std::printf(" class %lld: %zu", static_cast<long long>(c), count);
    std::printf("\n");
    if (argc <= 3) return 0;
    examples::NpyArray expected;
    if (!examples::read_npy(argv[3], &expected, &error) || expected.dtype != "int64" ||
        expected.data.size() != n * sizeof(int64_t)) {
        std::fprintf(stderr, "%s: not an int64 .npy of %zu values\n", argv[3], n);
        return 1;
    }
    size_t agree = 0;
    for (size_t i = 0; i < n; ++i) {
        int64_t want = 0;
        std::memcpy(&want, expected.data.data() + i * sizeof(int64_t), sizeof(want));
        agree += mask[i] == want;
    }
    const double share = n > 0 ? static_cast<double>(agree) / static_cast<double>(n) : 0.0;
    std::printf("mask agreement with the float reference: %.4f (%zu of %zu pixels)\n", share, agree, n);
    return share >= min_agreement ? 0 : 1;
}
