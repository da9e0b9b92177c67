// rknn.api._rknn_convert: the converter library (tools/rknn_convert) for the
// Toolkit2-style module. One call converts an ONNX file with the options the
// Python side gathered, and returns the model file's bytes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "converter.h"
#include "model/model_file.h"

namespace py = pybind11;
using rknn::convert::ConvertOptions;
using rknn::convert::TargetDType;

namespace {

// A conversion the converter refused: its message says why.
class ConvertError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

template <typename T>
T get(const py::dict& options, const char* key, T fallback) {
    return options.contains(key) && !options[key].is_none() ? options[key].cast<T>() : fallback;
}

ConvertOptions options_from(const py::dict& d) {
    ConvertOptions o;
    o.onnx_path = get<std::string>(d, "onnx_path", "");
    const std::string dtype = get<std::string>(d, "dtype", "fp16");
    if (dtype == "int8") o.dtype = TargetDType::kInt8;
    else if (dtype == "fp16") o.dtype = TargetDType::kFloat16;
    else if (dtype == "float32") o.dtype = TargetDType::kFloat32;
    else throw py::value_error("dtype must be int8, fp16 or float32, not " + dtype);
    o.target_soc = get<std::string>(d, "target_soc", o.target_soc);
    o.dataset = get<std::string>(d, "dataset", "");
    o.calib_method = get<std::string>(d, "calib_method", o.calib_method);
    o.mean = get<std::vector<std::vector<float>>>(d, "mean", {});
    o.std = get<std::vector<std::vector<float>>>(d, "std", {});
    o.rgb2bgr = get<bool>(d, "rgb2bgr", false);
    o.input_shapes = get<std::vector<std::vector<rknn::graph::Shape>>>(d, "input_shapes", {});
    o.custom_string = get<std::string>(d, "custom_string", "");
    o.batch = get<uint32_t>(d, "batch", 1);
    o.accuracy_input = get<std::string>(d, "accuracy_input", "");
    o.max_calibration_samples = get<size_t>(d, "max_calibration_samples", 0);
    o.progress = get<bool>(d, "progress", true);
    return o;
}

py::dict convert(const py::dict& options) {
    const ConvertOptions o = options_from(options);
    std::optional<rknn::StatusOr<rknn::convert::ConvertResult>> converted;
    std::optional<rknn::StatusOr<std::vector<uint8_t>>> serialized;
    {
        py::gil_scoped_release unlocked;  // minutes for a large model; other threads go on
        converted.emplace(rknn::convert::convert_onnx(o));
        if (converted->is_ok()) serialized.emplace(rknn::model::serialize_model((*converted)->graph));
    }
    if (!converted->is_ok()) throw ConvertError(converted->status().message());
    if (!serialized->is_ok()) throw ConvertError(serialized->status().message());
    const rknn::convert::ConvertResult& result = converted->value();
    const std::vector<uint8_t>& bytes = serialized->value();
    py::list accuracy;
    for (const auto& layer : result.accuracy)
        accuracy.append(py::make_tuple(layer.tensor, layer.op_type, layer.cosine, layer.euclidean));
    py::dict out;
    out["model"] = py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    out["log"] = result.log;
    out["accuracy"] = accuracy;
    out["accuracy_table"] = rknn::convert::format_accuracy_table(result.accuracy);
    out["hybrid_fp16_ops"] = result.hybrid_fp16_ops;
    out["calibration_samples"] = result.calibration_samples;
    return out;
}

}  // namespace

PYBIND11_MODULE(_rknn_convert, m) {
    m.doc() = "the OpenRKNN converter for the rknn package (use rknn.api.RKNN)";
    py::register_exception<ConvertError>(m, "ConvertError", PyExc_RuntimeError);
    m.def("convert", &convert, py::arg("options"));
    m.def("version", &rknn::convert::converter_version);
}
