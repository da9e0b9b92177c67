// The conversion pipeline: ONNX -> graph passes -> precision -> model graph.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "quant/accuracy.h"

namespace rknn::convert {

enum class TargetDType { kFloat32, kFloat16, kInt8 };

constexpr const char* kSupportedTargets[] = {"rk3588", "rk3568", "rk3566", "rk3576", "rk3562"};

struct ConvertOptions {
    std::string onnx_path;
    TargetDType dtype = TargetDType::kFloat16;
    std::string target_soc = "rk3588";
    std::string dataset;                          // folder or list file (int8)
    std::string calib_method = "normal";
    double calib_percentile = 99.99;              // --calib percentile: share of values kept
    bool bias_correction = true;                  // int8: correct biases for weight rounding
    bool empirical_bias_correction = true;        // then for what each layer reads in the int8 model
    double hybrid_threshold = 0.0;                // --hybrid auto: single-layer cosine floor (0: off)
    double hybrid_max_share = 0.1;                // at most this share of the int8 layers kept in float16
    double hybrid_output = 0.0;                   // --hybrid output: the outputs' cosine floor (0: off)
    bool progress = true;                         // progress bars on stderr
    std::vector<std::vector<float>> mean;         // per image input; empty: no pre-processing
    std::vector<std::vector<float>> std;
    bool rgb2bgr = false;
    std::vector<std::vector<graph::Shape>> input_shapes;  // shape sets, each one shape per input
    // --dynamic-range: one per input; any shape inside is accepted at run
    // time, beyond the shape sets (the largest shape is added as a set).
    std::vector<graph::ShapeRange> dynamic_range;
    // --calib-shapes: the graph is simplified, calibrated and quantised at
    // these shapes (one per input), then stored at the --input-shapes; the
    // quantisation of a static model then matches a dynamic model's that
    // was calibrated at the same shapes. Empty: at the stored shapes.
    std::vector<graph::Shape> calib_shapes;
    std::string custom_string;
    // --batch: items per rknn_run (a multi-batch model); the graph and the
    // calibration stay batch 1.
    uint32_t batch = 1;
    // --remove-weights --master FILE: a slave model that leaves every
    // constant the master model (an OpenRKNN .rknn) holds byte for byte to
    // it; an int8 slave is calibrated at the master's input shapes (unless
    // --calib-shapes says otherwise), so that its weights come out the same.
    bool remove_weights = false;
    std::string master_path;
    std::vector<std::string> custom_ops;
    // --custom-op-plugin: libraries whose op types are kept as custom ops and
    // run on the host while calibrating (custom_op_plugin.h).
    std::vector<std::string> custom_op_plugins;
    std::vector<std::string> fp16_layers;
    std::string accuracy_input;                   // image or .npy for the per-layer analysis
    size_t max_calibration_samples = 0;           // 0: all
};

struct ConvertResult {
    graph::Graph graph;
    std::vector<std::string> log;                 // what each stage did
    std::vector<LayerAccuracy> accuracy;          // when accuracy_input was given
    double calibration_seconds = 0.0;
    size_t calibration_samples = 0;
    std::vector<std::string> hybrid_fp16_ops;     // the layers --hybrid auto kept in float16
};

// Errors: kModelInvalid listing every unsupported op/attribute (one per line),
// kInvalidArgument for bad options, others as they come.
StatusOr<ConvertResult> convert_onnx(const ConvertOptions& options);

// The graph passes of convert_onnx, on an imported graph specialised to
// `input_shapes` (one per input): folding, fusions, dead code. Each pass's
// count goes into `log`. (The ONNX importer fuzzer drives them directly.)
Status run_graph_passes(graph::Graph* g, const std::vector<graph::Shape>& input_shapes, std::vector<std::string>* log);

// "rknn_convert <version>": recorded in every model.
std::string converter_version();

}  // namespace rknn::convert
