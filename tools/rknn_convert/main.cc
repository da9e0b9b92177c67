// rknn_convert: converts an ONNX model into an OpenRKNN model file.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "converter.h"
#include "model/model_file.h"
#include "model/summary.h"

namespace {

using rknn::convert::ConvertOptions;
using rknn::convert::TargetDType;

const char kHelp[] = R"(usage: rknn_convert MODEL.onnx -o OUT.rknn [options]

Converts an ONNX model (opsets up to 17) into an OpenRKNN model file that
librknnrt loads with rknn_init.

options:
  -o, --output FILE        the model file to write (required)
  --dtype int8|fp16|float32
                           precision of the converted model (default fp16).
                           int8: asymmetric int8 activations per tensor,
                           symmetric int8 weights per output channel, int32
                           biases; needs --dataset for calibration
  --target SOC             rk3588 (default), rk3568, rk3566, rk3576, rk3562
  --dataset DIR|LIST.txt   calibration data for int8: a folder of images or
                           .npy files (one-input models), or a list file with
                           one sample per line and one path per input
                           (separated by spaces). Images are resized to the
                           input size; .npy files hold exactly what the user
                           will feed (raw NHWC pixels for image inputs)
  --calib METHOD           normal (min/max, default), percentile, kl_divergence
                           or mmse
  --calib-percentile P     percentile: keep P percent of each tensor's values
                           inside the range (default 99.99)
  --calib-max N            use at most N calibration samples
  --no-bias-correction     int8: leave the biases as they are (by default each
                           output channel's bias cancels the mean shift that
                           rounding the weights to int8 adds, then the shift
                           the int8 model's inputs to the layer add as well)
  --no-empirical-bias-correction
                           int8: correct for weight rounding only (by default
                           the int8 model then runs over the calibration
                           samples (at most 64) layer by layer and each bias
                           also cancels the mean shift of what its layer reads
                           there)
  --hybrid auto[:COS[:SHARE]]
                           int8: measure every int8 layer alone against the
                           float model on the calibration samples, and keep
                           in float16 those whose cosine is below COS (default
                           0.99), worst first, at most SHARE of the layers
                           (default 0.1; at least one unless SHARE is 0), with
                           the layers that feed them; the kept layers are listed
  --hybrid output[:COS]    int8: keep in float16 as few layers as the outputs
                           need: starting from every layer in float16, give
                           layers back to int8 (the most accurate single
                           layers first) while every output of every probe
                           sample (the first 32 calibration samples) keeps a
                           cosine >= COS (default 0.99) against the float
                           model on the CPU reference. Layers go back in
                           blocks, halved when a block misses COS: one CPU
                           run of the probe per block, slower than auto
  --mean a,b,c             per-channel mean of the image input(s), in pixel
                           units; with --std the model takes raw NHWC uint8
                           pixels and normalises (x - mean) / std itself.
                           Several image inputs: separate lists with ';'
  --std a,b,c              per-channel standard deviation (see --mean)
  --rgb2bgr                swap RGB <-> BGR when reading calibration images
                           (the runtime never swaps channels)
  --input-shapes SHAPES    input shapes, e.g. 1,3,224,224 or, for several
                           inputs, 1,3,224,224;1,10. Repeat the option to give
                           several shape sets (a dynamic-shape model); the
                           largest set is used for calibration
  --calib-shapes SHAPES    simplify, calibrate and quantise at these input
                           shapes (as --input-shapes takes one set), then
                           store the model at --input-shapes: a static model
                           quantised like a dynamic one calibrated there
  --dynamic-range RANGES   beyond the shape sets, accept any input shape inside
                           RANGES at run time, e.g. 1,3,48,32..1280:8 (a dim
                           is N, LO..HI or LO..HI:STEP; ';' between inputs).
                           The largest shape becomes a shape set; the runtime
                           compiles the others on first use
  --custom-string TEXT     stored in the model, read with RKNN_QUERY_CUSTOM_STRING
  --batch B                a multi-batch model: every rknn_run takes B items
                           (inputs and outputs B times the size), run side by
                           side on up to one context per NPU core. The graph
                           must have batch 1; calibration stays batch 1
  --remove-weights         with --master: a slave model that leaves to the
                           master every constant the master holds byte for byte
                           (its weights), run with RKNN_FLAG_SHARE_WEIGHT_MEM
                           on the master's weight memory (e.g. the same model at
                           another input size). Convert it from the same ONNX,
                           with the same options and dataset; an int8 slave is
                           calibrated at the master's input shapes
  --master FILE            the master model (.rknn) for --remove-weights
  --custom-op TYPE         keep ONNX nodes of op type TYPE as custom ops, run by
                           a user plugin registered with rknn_register_custom_ops
                           (repeat for several types)
  --custom-op-plugin FILE  a custom op library (librkcst_*.so, exporting
                           get_rknn_custom_op): its op type is kept as a custom
                           op, and calibration runs its compute on the host, so
                           the layers after it are quantised too (repeatable)
  --fp16-layers A,B        keep the named ops (ONNX node names) in float16 in an
                           int8 model (mixed precision)
  --accuracy-analysis FILE compare every layer of the converted model with the
                           float model on FILE (image or .npy): prints cosine
                           similarity and Euclidean distance per layer
  -q, --quiet              print only errors (no progress bars either)
  -h, --help               this text

exit status: 0 converted, 1 the model could not be converted (nothing is
written; unsupported ops and attributes are listed), 2 bad command line.
)";

bool split(const std::string& text, char sep, std::vector<std::string>* out) {
    out->clear();
    size_t pos = 0;
    while (true) {
        const size_t next = text.find(sep, pos);
        out->push_back(text.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
        if (next == std::string::npos) return true;
        pos = next + 1;
    }
}

bool parse_floats(const std::string& text, std::vector<float>* out) {
    std::vector<std::string> items;
    split(text, ',', &items);
    out->clear();
    for (const std::string& item : items) {
        char* end = nullptr;
        const float v = std::strtof(item.c_str(), &end);
        if (item.empty() || *end != '\0') return false;
        out->push_back(v);
    }
    return true;
}

bool parse_number(const std::string& text, double lo, double hi, double* out) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

bool parse_per_input_floats(const std::string& text, std::vector<std::vector<float>>* out) {
    std::vector<std::string> groups;
    split(text, ';', &groups);
    for (const std::string& group : groups) {
        std::vector<float> values;
        if (!parse_floats(group, &values)) return false;
        out->push_back(values);
    }
    return true;
}

bool parse_shape_set(const std::string& text, std::vector<rknn::graph::Shape>* out) {
    std::vector<std::string> shapes;
    split(text, ';', &shapes);
    for (const std::string& shape : shapes) {
        std::vector<std::string> dims;
        split(shape, ',', &dims);
        rknn::graph::Shape s;
        for (const std::string& d : dims) {
            char* end = nullptr;
            const long long v = std::strtoll(d.c_str(), &end, 10);
            if (d.empty() || *end != '\0' || v <= 0) return false;
            s.push_back(v);
        }
        out->push_back(s);
    }
    return true;
}

// "1,3,48,32..1280:8;1,10": one range per input.
bool parse_shape_ranges(const std::string& text, std::vector<rknn::graph::ShapeRange>* out) {
    std::vector<std::string> inputs;
    split(text, ';', &inputs);
    const auto number = [](const std::string& t, long long* v) {
        char* end = nullptr;
        *v = std::strtoll(t.c_str(), &end, 10);
        return !t.empty() && *end == '\0' && *v > 0;
    };
    for (const std::string& input : inputs) {
        std::vector<std::string> dims;
        split(input, ',', &dims);
        rknn::graph::ShapeRange range;
        for (const std::string& d : dims) {
            long long lo = 0, hi = 0, step = 1;
            const size_t dots = d.find("..");
            if (dots == std::string::npos) {
                if (!number(d, &lo)) return false;
                hi = lo;
            } else {
                const size_t colon = d.find(':', dots);
                if (!number(d.substr(0, dots), &lo) ||
                    !number(d.substr(dots + 2, colon == std::string::npos ? std::string::npos : colon - dots - 2), &hi) ||
                    (colon != std::string::npos && !number(d.substr(colon + 1), &step)) || hi < lo)
                    return false;
            }
            range.min.push_back(lo);
            range.max.push_back(hi);
            range.step.push_back(step);
        }
        out->push_back(std::move(range));
    }
    return !out->empty();
}

int usage_error(const std::string& message) {
    std::fprintf(stderr, "rknn_convert: %s\n(see rknn_convert --help)\n", message.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    ConvertOptions options;
    std::string output;
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) return nullptr;
            (void)name;
            return argv[++i];
        };
        const char* v = nullptr;
        if (arg == "-h" || arg == "--help") {
            std::fputs(kHelp, stdout);
            return 0;
        } else if (arg == "-q" || arg == "--quiet") {
            quiet = true;
            options.progress = false;
        } else if (arg == "--no-bias-correction") {
            options.bias_correction = false;
        } else if (arg == "--no-empirical-bias-correction") {
            options.empirical_bias_correction = false;
        } else if (arg == "--rgb2bgr") {
            options.rgb2bgr = true;
        } else if (arg == "--remove-weights") {
            options.remove_weights = true;
        } else if (arg[0] != '-') {
            if (!options.onnx_path.empty()) return usage_error("more than one input model given");
            options.onnx_path = arg;
        } else if ((v = value(arg.c_str())) == nullptr) {
            return usage_error(arg + " needs a value");
        } else if (arg == "-o" || arg == "--output") {
            output = v;
        } else if (arg == "--dtype") {
            const std::string d = v;
            if (d == "int8" || d == "i8") options.dtype = TargetDType::kInt8;
            else if (d == "fp16" || d == "float16") options.dtype = TargetDType::kFloat16;
            else if (d == "float32" || d == "fp32") options.dtype = TargetDType::kFloat32;
            else return usage_error("--dtype must be int8, fp16 or float32");
        } else if (arg == "--target") {
            options.target_soc = v;
        } else if (arg == "--dataset") {
            options.dataset = v;
        } else if (arg == "--calib") {
            options.calib_method = v;
        } else if (arg == "--calib-percentile") {
            if (!parse_number(v, 50.0, 100.0, &options.calib_percentile))
                return usage_error("--calib-percentile must be a number from 50 to 100");
        } else if (arg == "--hybrid") {
            const std::string h = v;
            options.hybrid_threshold = 0.0;
            options.hybrid_output = 0.0;
            if (h == "off") {
            } else if (h == "auto") {
                options.hybrid_threshold = 0.99;
            } else if (h == "output") {
                options.hybrid_output = 0.99;
            } else if (h.rfind("output:", 0) == 0) {
                if (!parse_number(h.substr(7), 0.0, 1.0, &options.hybrid_output) || options.hybrid_output <= 0.0)
                    return usage_error("--hybrid output:COS needs COS above 0 and at most 1");
            } else {
                // auto:COS or auto:COS:SHARE
                const bool prefixed = h.rfind("auto:", 0) == 0;
                const size_t second = prefixed ? h.find(':', 5) : std::string::npos;
                const std::string cos = prefixed ? h.substr(5, second == std::string::npos ? std::string::npos : second - 5) : "";
                const bool good = prefixed && parse_number(cos, 0.0, 1.0, &options.hybrid_threshold) &&
                                  (second == std::string::npos ||
                                   parse_number(h.substr(second + 1), 0.0, 1.0, &options.hybrid_max_share));
                if (!good)
                    return usage_error("--hybrid must be auto, auto:COS, auto:COS:SHARE (COS and SHARE from 0 to 1), "
                                       "output, output:COS or off");
            }
        } else if (arg == "--calib-max") {
            options.max_calibration_samples = static_cast<size_t>(std::strtoul(v, nullptr, 10));
        } else if (arg == "--mean") {
            if (!parse_per_input_floats(v, &options.mean)) return usage_error("bad --mean list");
        } else if (arg == "--std") {
            if (!parse_per_input_floats(v, &options.std)) return usage_error("bad --std list");
        } else if (arg == "--input-shapes") {
            std::vector<rknn::graph::Shape> set;
            if (!parse_shape_set(v, &set)) return usage_error("bad --input-shapes (e.g. 1,3,224,224;1,10)");
            options.input_shapes.push_back(set);
        } else if (arg == "--calib-shapes") {
            options.calib_shapes.clear();
            if (!parse_shape_set(v, &options.calib_shapes)) return usage_error("bad --calib-shapes (e.g. 1,3,48,640)");
        } else if (arg == "--dynamic-range") {
            options.dynamic_range.clear();
            if (!parse_shape_ranges(v, &options.dynamic_range))
                return usage_error("bad --dynamic-range (e.g. 1,3,48,32..1280:8)");
        } else if (arg == "--custom-string") {
            options.custom_string = v;
        } else if (arg == "--batch") {
            char* end = nullptr;
            const unsigned long batch = std::strtoul(v, &end, 10);
            if (*v == '\0' || *end != '\0' || batch == 0 || batch > 256) return usage_error("bad --batch (1..256)");
            options.batch = static_cast<uint32_t>(batch);
        } else if (arg == "--custom-op") {
            options.custom_ops.push_back(v);
        } else if (arg == "--master") {
            options.master_path = v;
        } else if (arg == "--custom-op-plugin") {
            options.custom_op_plugins.push_back(v);
        } else if (arg == "--fp16-layers") {
            std::vector<std::string> names;
            split(v, ',', &names);
            options.fp16_layers.insert(options.fp16_layers.end(), names.begin(), names.end());
        } else if (arg == "--accuracy-analysis") {
            options.accuracy_input = v;
        } else {
            return usage_error("unknown option " + arg);
        }
    }
    if (options.onnx_path.empty()) return usage_error("no ONNX model given");
    if (output.empty()) return usage_error("no output file given (-o OUT.rknn)");
    if (options.mean.size() != options.std.size() && !options.mean.empty() && !options.std.empty())
        return usage_error("--mean and --std must describe the same inputs");

    const auto start = std::chrono::steady_clock::now();
    auto result = rknn::convert::convert_onnx(options);
    if (!result.is_ok()) {
        std::fprintf(stderr, "rknn_convert: %s\nnothing was written.\n", result.status().message().c_str());
        return 1;
    }
    const rknn::Status written = rknn::model::write_model_file(result->graph, output);
    if (!written.is_ok()) {
        std::fprintf(stderr, "rknn_convert: %s\n", written.message().c_str());
        return 1;
    }
    if (!quiet) {
        for (const std::string& line : result->log) std::printf("%s\n", line.c_str());
        if (!result->accuracy.empty()) {
            std::printf("\naccuracy analysis (float model vs converted model):\n%s\n",
                        rknn::convert::format_accuracy_table(result->accuracy).c_str());
        }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("\nwrote %s in %.2f s\n%s", output.c_str(), seconds, rknn::model::summarize(result->graph).c_str());
    }
    return 0;
}
