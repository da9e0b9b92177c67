// Dynamic-shape matmul demo, the command line and flow of the SDK's
// rknn_matmul_api_dynshape_demo: one context created for a list of shapes
// (rknn_matmul_create_dynamic_shape), the largest A, B and C allocated once,
// then per shape rknn_matmul_set_dynamic_shape, rknn_matmul_set_io_mem with
// that shape's attrs, and the run, each checked against a CPU reference.
// B is bound once where its shape stays the same (the vendor's "feature +
// const" case); otherwise it is written and bound again per shape.
// Written against include/ only.
//
// usage: rknn_matmul_api_dynshape_demo MATMUL_TYPE M,K,N#M,K,N#... [B_LAYOUT [AC_LAYOUT [LOOP_COUNT [CORE_MASK]]]]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "matmul_utils.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"

int main(int argc, char** argv) {
    if (argc < 3) {
        std::printf("usage: %s MATMUL_TYPE M,K,N#M,K,N#... [B_LAYOUT [AC_LAYOUT [LOOP_COUNT [CORE_MASK]]]]\n"
                    "example, A = [1,64] [4,64] [8,64] and B = [64,32] in int8:\n"
                    "  %s 2 1,64,32#4,64,32#8,64,32 1 1\n",
                    argv[0], argv[0]);
        return 2;
    }
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    info.type = static_cast<rknn_matmul_type>(std::atoi(argv[1]));
    std::vector<rknn_matmul_shape> shapes;
    std::string list = argv[2];
    for (size_t start = 0; start <= list.size();) {
        const size_t end = std::min(list.find('#', start), list.size());
        rknn_matmul_shape s{};
        if (std::sscanf(list.substr(start, end - start).c_str(), "%d,%d,%d", &s.M, &s.K, &s.N) != 3) {
            std::fprintf(stderr, "cannot read the shape \"%s\"\n", list.substr(start, end - start).c_str());
            return 2;
        }
        shapes.push_back(s);
        start = end + 1;
    }
    info.B_layout = static_cast<int16_t>(argc > 3 ? std::atoi(argv[3]) : 0);
    info.AC_layout = static_cast<int16_t>(argc > 4 ? std::atoi(argv[4]) : 0);
    const int loops = argc > 5 ? std::max(1, std::atoi(argv[5])) : 1;
    const int core_mask = argc > 6 ? std::atoi(argv[6]) : 0;

    std::vector<rknn_matmul_io_attr> io(shapes.size());
    rknn_matmul_ctx ctx = 0;
    int ret = rknn_matmul_create_dynamic_shape(&ctx, &info, static_cast<int>(shapes.size()), shapes.data(), io.data());
    if (ret != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_matmul_create_dynamic_shape fail! ret=%d\n", ret);
        return 1;
    }
    if (core_mask != 0 && rknn_matmul_set_core_mask(ctx, static_cast<rknn_core_mask>(core_mask)) != RKNN_SUCC) {
        std::fprintf(stderr, "rknn_matmul_set_core_mask(%d) fail!\n", core_mask);
        rknn_matmul_destroy(ctx);
        return 1;
    }
    uint32_t a_size = 0, b_size = 0, c_size = 0;
    for (const rknn_matmul_io_attr& attr : io) {
        a_size = std::max(a_size, attr.A.size);
        b_size = std::max(b_size, attr.B.size);
        c_size = std::max(c_size, attr.C.size);
    }
    rknn_tensor_mem* a_mem = rknn_create_mem(ctx, a_size);
    rknn_tensor_mem* b_mem = rknn_create_mem(ctx, b_size);
    rknn_tensor_mem* c_mem = rknn_create_mem(ctx, c_size);
    if (a_mem == nullptr || b_mem == nullptr || c_mem == nullptr) {
        std::fprintf(stderr, "rknn_create_mem fail!\n");
        rknn_matmul_destroy(ctx);
        return 1;
    }
    // B bound once when every shape has the same K and N.
    const bool one_b = std::all_of(shapes.begin(), shapes.end(), [&](const rknn_matmul_shape& s) {
        return s.K == shapes[0].K && s.N == shapes[0].N;
    });
    examples::Matrix b = examples::random_matrix(shapes[0].K, shapes[0].N, io[0].B.type, 2);
    if (one_b && (!examples::write_matrix(b, io[0].B, true, &info, b_mem->virt_addr) ||
                  rknn_matmul_set_io_mem(ctx, b_mem, &io[0].B) != RKNN_SUCC)) {
        std::fprintf(stderr, "cannot bind B\n");
        rknn_matmul_destroy(ctx);
        return 1;
    }
    int wrong = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
        const rknn_matmul_shape& s = shapes[i];
        info.M = s.M, info.K = s.K, info.N = s.N;
        const examples::Matrix a = examples::random_matrix(s.M, s.K, io[i].A.type, 10 + static_cast<uint32_t>(i));
        if (!one_b) b = examples::random_matrix(s.K, s.N, io[i].B.type, 20 + static_cast<uint32_t>(i));
        ret = rknn_matmul_set_dynamic_shape(ctx, &shapes[i]);
        if (ret == RKNN_SUCC && !examples::write_matrix(a, io[i].A, false, &info, a_mem->virt_addr)) ret = RKNN_ERR_FAIL;
        if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, a_mem, &io[i].A);
        if (ret == RKNN_SUCC && !one_b) {
            if (!examples::write_matrix(b, io[i].B, true, &info, b_mem->virt_addr)) ret = RKNN_ERR_FAIL;
            if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, b_mem, &io[i].B);
        }
        if (ret == RKNN_SUCC) ret = rknn_matmul_set_io_mem(ctx, c_mem, &io[i].C);
        for (int l = 0; l < loops && ret == RKNN_SUCC; ++l) ret = rknn_matmul_run(ctx);
        if (ret != RKNN_SUCC) {
            std::fprintf(stderr, "shape %d,%d,%d: fail! ret=%d\n", s.M, s.K, s.N, ret);
            rknn_matmul_destroy(ctx);
            return 1;
        }
        const examples::Matrix c = examples::read_matrix(c_mem->virt_addr, io[i].C, s.M, s.N);
        const bool correct = examples::same_result(c, examples::reference_matmul(a, b), io[i].C.type, s.K);
        std::printf("M = %d, K = %d, N = %d: %s matmul result is %s\n", s.M, s.K, s.N,
                    get_matmul_type_string(info.type), correct ? "correct" : "wrong");
        wrong += correct ? 0 : 1;
    }
    rknn_destroy_mem(ctx, a_mem);
    rknn_destroy_mem(ctx, b_mem);
    rknn_destroy_mem(ctx, c_mem);
    rknn_matmul_destroy(ctx);
    return wrong == 0 ? 0 : 1;
}
