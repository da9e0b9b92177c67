// Writes a few valid model files as the fuzzer's starting corpus.
#include <cstdio>
#include <string>

#include "common/test_graphs.h"
#include "model/model_file.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    rknn::graph::Graph g = rknn::testing::small_cnn();
    if (!rknn::model::write_model_file(g, dir + "/small_cnn.rknn").is_ok()) return 1;
    // A quantised-looking variant exercises the quantisation fields.
    g.tensors[g.inputs[0]].quant.scales = {0.02f};
    g.tensors[g.inputs[0]].quant.zero_points = {3};
    g.preprocess.push_back({{123.0f, 117.0f, 104.0f}, {58.0f, 57.0f, 57.0f}, false, rknn::graph::Layout::kNHWC,
                            rknn::graph::DType::kUInt8});
    g.shape_sets = {{{1, 3, 8, 8}}};
    if (!rknn::model::write_model_file(g, dir + "/small_cnn_meta.rknn").is_ok()) return 1;
    std::printf("wrote 2 seed models to %s\n", dir.c_str());
    return 0;
}
