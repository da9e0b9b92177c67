#include "exported_models.h"

#include <cstdio>

namespace rknn::testing {

int exported_models_dir(int argc, char** argv, std::filesystem::path* dir) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s MODELS_DIR\n", argv[0]);
        return 2;
    }
    *dir = argv[1];
    if (!std::filesystem::exists(*dir / "models.json")) {
        std::printf("SKIP: no exported models in %s (PyTorch missing?)\n", dir->c_str());
        return 77;
    }
    return 0;
}

convert::ConvertOptions exported_model_options(const std::filesystem::path& dir, const std::string& name,
                                               convert::TargetDType dtype) {
    convert::ConvertOptions options;
    options.onnx_path = (dir / (name + ".onnx")).string();
    options.dtype = dtype;
    options.dataset = (dir / "images" / "list.txt").string();
    options.mean = {{123.675f, 116.28f, 103.53f}};
    options.std = {{58.395f, 57.12f, 57.375f}};
    options.progress = false;  // the tests print their own lines
    return options;
}

}  // namespace rknn::testing
