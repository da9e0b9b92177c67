// Real architectures through the converter: mobilenet_v2, resnet18, a
// YOLOv5s-like detector, mobilenet_v3 small/large, efficientnet_b0,
// shufflenet_v2 and squeezenet1_1 (exported from PyTorch by
// tests/models/export_models.py)
// are converted to fp16 and int8 (calibrated on the synthetic images), written
// to model files, loaded back, run on the CPU reference, and compared with
// PyTorch's outputs on the same raw pixels.
//
// usage: model_accuracy MODELS_DIR
// Prints cosine similarity per model, dtype and output, and the calibration
// time; fails when fp16 < 0.999 or int8 < 0.98.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/npy.h"
#include "converter.h"
#include "exported_models.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "layout/preprocess.h"
#include "model/model_file.h"
#include "quant/accuracy.h"

namespace {

namespace fs = std::filesystem;
using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;
using rknn::cpu::HostTensor;

struct ModelCase {
    const char* name;
    int outputs;
};
constexpr ModelCase kModels[] = {{"mobilenet_v2", 1},       {"resnet18", 1},           {"yolov5s_like", 3},
                                 {"mobilenet_v3_small", 1}, {"mobilenet_v3_large", 1}, {"efficientnet_b0", 1},
                                 {"shufflenet_v2_x1_0", 1}, {"squeezenet1_1", 1}};
constexpr double kFp16Threshold = 0.999;
constexpr double kInt8Threshold = 0.98;

std::vector<float> floats_of(const rknn::npy::Array& a) {
    std::vector<float> v(a.data.size() / 4);
    std::memcpy(v.data(), a.data.data(), v.size() * 4);
    return v;
}

// Converts, saves, reloads and runs one model; returns the cosine per output.
StatusOr<std::vector<double>> evaluate(const fs::path& dir, const ModelCase& m, rknn::convert::TargetDType dtype,
                                       double* calibration_seconds) {
    const rknn::convert::ConvertOptions options = rknn::testing::exported_model_options(dir, m.name, dtype);
    RKNN_ASSIGN_OR_RETURN(rknn::convert::ConvertResult converted, rknn::convert::convert_onnx(options));
    *calibration_seconds = converted.calibration_seconds;
    RKNN_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, rknn::model::serialize_model(converted.graph));
    RKNN_ASSIGN_OR_RETURN(const rknn::graph::Graph g, rknn::model::load_model_from_memory(
                                                          bytes.data(), bytes.size(), rknn::model::BufferOwnership::kCopy));
    // The raw NHWC uint8 pixels, pre-processed and converted as the runtime does.
    RKNN_ASSIGN_OR_RETURN(const rknn::npy::Array pixels, rknn::npy::read_file((dir / (std::string(m.name) + "_input.npy")).string()));
    HostTensor raw(rknn::graph::DType::kUInt8, pixels.shape);
    std::memcpy(raw.raw(), pixels.data.data(), pixels.data.size());
    const rknn::graph::Tensor& input = g.tensors[g.inputs[0]];
    RKNN_ASSIGN_OR_RETURN(const HostTensor normalised, rknn::layout::apply_preprocess(raw, g.preprocess[0], input.shape));
    HostTensor fed = rknn::cpu::make_tensor_like(input, input.shape);
    RKNN_RETURN_IF_ERROR(rknn::cpu::from_float32(normalised, &fed));
    RKNN_ASSIGN_OR_RETURN(auto exec, rknn::cpu::GraphExecutor::create(g));
    std::vector<HostTensor> outputs;
    RKNN_RETURN_IF_ERROR(exec->run({fed}, &outputs));
    std::vector<double> cosines;
    for (int k = 0; k < m.outputs; ++k) {
        RKNN_ASSIGN_OR_RETURN(const rknn::npy::Array expected,
                              rknn::npy::read_file((dir / (std::string(m.name) + "_output" + std::to_string(k) + ".npy")).string()));
        const HostTensor actual = rknn::cpu::to_float32(outputs[k]);
        if (static_cast<size_t>(actual.numel()) * 4 != expected.data.size()) {
            return Status(StatusCode::kInternal, "output " + std::to_string(k) + " size differs from PyTorch's");
        }
        cosines.push_back(rknn::convert::cosine_similarity(
            floats_of(expected), std::vector<float>(actual.data<float>(), actual.data<float>() + actual.numel())));
    }
    return cosines;
}

}  // namespace

int main(int argc, char** argv) {
    fs::path dir;
    if (const int code = rknn::testing::exported_models_dir(argc, argv, &dir); code != 0) return code;
    int failures = 0;
    std::printf("%-18s %-6s %-8s %s\n", "model", "dtype", "cosine", "(per output, vs PyTorch)");
    for (const ModelCase& m : kModels) {
        for (const auto dtype : {rknn::convert::TargetDType::kFloat16, rknn::convert::TargetDType::kInt8}) {
            const bool int8 = dtype == rknn::convert::TargetDType::kInt8;
            const double threshold = int8 ? kInt8Threshold : kFp16Threshold;
            double calibration = 0.0;
            const auto start = std::chrono::steady_clock::now();
            auto result = evaluate(dir, m, dtype, &calibration);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (!result.is_ok()) {
                std::printf("%-18s %-6s FAILED: %s\n", m.name, int8 ? "int8" : "fp16", result.status().message().c_str());
                ++failures;
                continue;
            }
            double worst = 1.0;
            std::string per_output;
            for (double c : result.value()) {
                worst = std::min(worst, c);
                char item[32];
                std::snprintf(item, sizeof(item), " %.5f", c);
                per_output += item;
            }
            const bool ok = worst >= threshold;
            failures += ok ? 0 : 1;
            std::printf("%-18s %-6s %.5f  (%s ) %s, %.1f s", m.name, int8 ? "int8" : "fp16", worst, per_output.c_str(),
                        ok ? "ok" : "BELOW THRESHOLD", seconds);
            if (int8) std::printf(", calibration on 16 images %.2f s", calibration);
            std::printf("\n");
        }
    }
    return failures == 0 ? 0 : 1;
}
