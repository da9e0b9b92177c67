// Matmul API demo, the command line and flow of the SDK's
// rknn_matmul_api_demo: C = A x B on the NPU for one type, shape and pair of
// layouts, run LOOP_COUNT times on the cores CORE_MASK names, then checked
// against a CPU reference. Integer types get per-layer quantisation
// parameters where their output needs them (int8 -> int8 and int8 ->
// float32). Written against include/ only.
//
// usage: rknn_matmul_api_demo MATMUL_TYPE M,K,N [B_LAYOUT [AC_LAYOUT [LOOP_COUNT [CORE_MASK [PRINT_RESULT
//        [IOMMU_DOMAIN_ID]]]]]]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "matmul_utils.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"

namespace {

void usage(const char* program) {
    std::printf("usage: %s MATMUL_TYPE M,K,N [B_LAYOUT [AC_LAYOUT [LOOP_COUNT [CORE_MASK [PRINT_RESULT [IOMMU_DOMAIN_ID]]]]]]\n",
                program);
    for (int t : {1, 2, 3, 4, 9, 10})
        std::printf("    MATMUL_TYPE = %d: %s\n", t, get_matmul_type_string(static_cast<rknn_matmul_type>(t)));
    std::printf("    B_LAYOUT 0 normal, 1 native, 2 transposed normal; AC_LAYOUT 0 normal, 1 native\n"
                "example: A = [4,64], B = [64,32], int8: %s 2 4,64,32\n",
                program);
}

void set_per_layer(rknn_matmul_ctx ctx, const char* name, float scale, int32_t zp) {
    rknn_quant_params params;
    std::memset(&params, 0, sizeof(params));
    std::strncpy(params.name, name, sizeof(params.name) - 1);
    params.scale = &scale;
    params.scale_len = 1;
    params.zp = &zp;
    params.zp_len = 1;
    if (rknn_matmul_set_quant_params(ctx, &params) != RKNN_SUCC) std::printf("set_quant_params(%s) failed\n", name);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        usage(argv[0]);
        return 2;
    }
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.type = static_cast<rknn_matmul_type>(std::atoi(argv[1]));
    if (std::sscanf(argv[2], "%d,%d,%d", &info.M, &info.K, &info.N) != 3) {
        usage(argv[0]);
        return 2;
    }
    info.B_layout = static_cast<int16_t>(argc > 3 ? std::atoi(argv[3]) : 0);
    info.AC_layout = static_cast<int16_t>(argc > 4 ? std::atoi(argv[4]) : 0);
    const int loops = argc > 5 ? std::max(1, std::atoi(argv[5])) : 1;
    const int core_mask = argc > 6 ? std::atoi(argv[6]) : 0;
    const bool print_result = argc > 7 && std::atoi(argv[7]) != 0;
    info.iommu_domain_id = argc > 8 ? std::atoi(argv[8]) : 0;
    std::printf("MatmulType = %s, M = %d, K = %d, N = %d, B_layout = %d, AC_layout = %d\n",
                get_matmul_type_string(info.type), info.M, info.K, info.N, info.B_layout, info.AC_layout);

    rknn_matmul_io_attr io;
    std::memset(&io, 0, sizeof(io));
    rknn_matmul_ctx ctx = 0;
    int ret = rknn_matmul_create(&ctx, &info, &io);
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_matmul_create fail! ret=%d\n", ret);
        return 1;
    }
    if (core_mask != 0 && rknn_matmul_set_core_mask(ctx, static_cast<rknn_core_mask>(core_mask)) != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_matmul_set_core_mask(%d) fail!\n", core_mask);
        rknn_matmul_destroy(ctx);
        return 1;
    }
    for (const rknn_matmul_tensor_attr* attr : {&io.A, &io.B, &io.C}) {
        std::printf("%s: dims [", attr->name);
        for (uint32_t d = 0; d < attr->n_dims; ++d) std::printf(d ? ", %u" : "%u", attr->dims[d]);
        std::printf("], size %u, type %s\n", attr->size, get_type_string(attr->type));
    }

    // Quantisation: the int8 -> int8 and int8 -> float32 outputs are real
    // values, so A, B (and C) get scales; the others keep the defaults.
    double a_scale = 1, b_scale = 1, c_scale = 1;
    if (info.type == RKNN_INT8_MM_INT8_TO_INT8 || info.type == RKNN_INT8_MM_INT8_TO_FLOAT32) {
        a_scale = 0.2, b_scale = 0.1;
        set_per_layer(ctx, "A", 0.2f, 0);
        set_per_layer(ctx, "B", 0.1f, 0);
        if (info.type == RKNN_INT8_MM_INT8_TO_INT8) {
            c_scale = 0.2 * 0.1 * 140 * std::sqrt(static_cast<double>(info.K));
            set_per_layer(ctx, "C", static_cast<float>(c_scale), 0);
        }
    }

    const examples::Matrix a = examples::random_matrix(info.M, info.K, io.A.type, 1);
    const examples::Matrix b = examples::random_matrix(info.K, info.N, io.B.type, 2);
    rknn_tensor_mem* a_mem = rknn_create_mem(ctx, io.A.size);
    rknn_tensor_mem* b_mem = rknn_create_mem(ctx, io.B.size);
    rknn_tensor_mem* c_mem = rknn_create_mem(ctx, io.C.size);
    if (a_mem == nullptr || b_mem == nullptr || c_mem == nullptr ||
        !examples::write_matrix(a, io.A, false, &info, a_mem->virt_addr) ||
        !examples::write_matrix(b, io.B, true, &info, b_mem->virt_addr)) {
        std::fprintf(stderr, "cannot prepare A and B\n");
        rknn_matmul_destroy(ctx);
        return 1;
    }
    ret = rknn_matmul_set_io_mem(ctx, a_mem, &io.A);
    if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, b_mem, &io.B);
    if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, c_mem, &io.C);
    double total_us = 0;
    for (int i = 0; i < loops && ret == RKNN_SUCC; ++i) {
        const auto start = std::chrono::steady_clock::now();
        ret = rknn_matmul_run(ctx);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
        total_us += us;
        if (loops <= 10) std::printf("%4d: elapse time = %.2f us\n", i, us);
    }
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_matmul_set_io_mem / rknn_matmul_run fail! ret=%d\n", ret);
        rknn_matmul_destroy(ctx);
        return 1;
    }
    std::printf("run %d times, average %.2f us\n", loops, total_us / loops);

    const examples::Matrix c = examples::read_matrix(c_mem->virt_addr, io.C, info.M, info.N);
    const examples::Matrix want = examples::reference_matmul(a, b, a_scale, 0, b_scale, 0);
    if (print_result)
        for (int r = 0; r < c.rows; ++r) {
            for (int n = 0; n < c.cols; ++n) std::printf("%g ", c.at(r, n));
            std::printf("\n");
        }
    const bool correct = examples::same_result(c, want, io.C.type, info.K, c_scale, 0);
    std::printf("%s matmul result is %s\n", get_matmul_type_string(info.type), correct ? "correct" : "wrong");
    rknn_destroy_mem(ctx, a_mem);
    rknn_destroy_mem(ctx, b_mem);
    rknn_destroy_mem(ctx, c_mem);
    rknn_matmul_destroy(ctx);
    return correct ? 0 : 1;
}
