// ONNX node conformance: every case of the ONNX node test suite whose
// operators are all in OpenRKNN's supported list is converted (float32), saved
// to a model file, loaded back, run on the CPU reference, and compared with
// the suite's expected outputs.
//
// usage: onnx_conformance SUITE_DIR EXPECTED_FAILURES REPORT_FILE [MIN_PASS_RATE]
// Prints every failure with its reason and the pass count; writes the failures
// to REPORT_FILE. Fails when the pass rate drops below MIN_PASS_RATE (default
// 0.95) or a case fails that EXPECTED_FAILURES does not list.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "converter.h"
#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "model/model_file.h"
#include "onnx_tensor.h"

namespace {

namespace fs = std::filesystem;
using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;
using rknn::cpu::HostTensor;

// The operators issue #3 puts in scope (ONNX names).
const std::set<std::string> kSupportedOps = {
    "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "Add", "Sub", "Mul", "Div", "Max", "Min", "Sum",
    "Mean", "Pow", "Sqrt", "Reciprocal", "Abs", "Neg", "Exp", "Log", "Erf", "Floor", "Ceil", "Relu", "Clip",
    "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu", "Softplus", "Gelu", "MaxPool",
    "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "InstanceNormalization", "LayerNormalization", "Concat",
    "Split", "Slice", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Pad", "Resize", "Upsample",
    "Softmax", "LogSoftmax", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ArgMax", "ArgMin", "Gather",
    "DepthToSpace", "SpaceToDepth", "Tile", "Expand", "Where", "Equal", "Greater", "Less", "Cast", "Identity",
    "Dropout", "Constant", "Shape", "ConstantOfShape", "QuantizeLinear", "DequantizeLinear"};

constexpr double kRelTolerance = 1e-3;
constexpr double kAbsTolerance = 1e-5;

bool read_proto(const fs::path& path, google::protobuf::Message* message) {
    std::ifstream in(path, std::ios::binary);
    return in && message->ParseFromIstream(&in);
}

bool in_scope(const fs::path& model_path) {
    onnx::ModelProto model;
    if (!read_proto(model_path, &model)) return false;
    if (model.graph().node_size() == 0) return false;
    for (const auto& node : model.graph().node()) {
        if (kSupportedOps.count(node.op_type()) == 0) return false;
    }
    return true;
}

StatusOr<HostTensor> read_tensor(const fs::path& path) {
    onnx::TensorProto proto;
    if (!read_proto(path, &proto)) return Status(StatusCode::kInvalidArgument, "cannot read " + path.string());
    RKNN_ASSIGN_OR_RETURN(rknn::convert::DecodedTensor t, rknn::convert::decode_tensor(proto, path.parent_path()));
    HostTensor tensor(t.dtype, t.shape);
    if (!t.bytes.empty()) std::memcpy(tensor.raw(), t.bytes.data(), t.bytes.size());
    return tensor;
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
    std::vector<fs::path> files;
    for (int i = 0;; ++i) {
        const fs::path p = dir / (prefix + std::to_string(i) + ".pb");
        if (!fs::exists(p)) break;
        files.push_back(p);
    }
    return files;
}

// NumPy has no bfloat16, so the suite stores bfloat16 data as uint16 bits.
HostTensor as_bfloat16_if_declared(const HostTensor& t, rknn::graph::DType declared) {
    if (declared != rknn::graph::DType::kBFloat16 || t.dtype() != rknn::graph::DType::kUInt16) return t;
    HostTensor bf(rknn::graph::DType::kBFloat16, t.shape());
    std::memcpy(bf.raw(), t.raw(), t.byte_size());
    return bf;
}

Status compare(const HostTensor& expected, const HostTensor& actual, size_t index) {
    if (expected.shape() != actual.shape()) {
        return Status(StatusCode::kInternal, "output " + std::to_string(index) + " shape " +
                                                 rknn::graph::shape_to_string(actual.shape()) + ", expected " +
                                                 rknn::graph::shape_to_string(expected.shape()));
    }
    if (expected.dtype() != actual.dtype()) {
        return Status(StatusCode::kInternal, std::string("output ") + std::to_string(index) + " is " +
                                                 rknn::graph::dtype_name(actual.dtype()) + ", expected " +
                                                 rknn::graph::dtype_name(expected.dtype()));
    }
    const bool exact = !rknn::graph::is_float(expected.dtype());
    for (int64_t i = 0; i < expected.numel(); ++i) {
        const double e = rknn::cpu::element_as_double(expected, i);
        const double a = rknn::cpu::element_as_double(actual, i);
        if (std::isnan(e) && std::isnan(a)) continue;
        if (std::isinf(e) && e == a) continue;
        const double tolerance = exact ? 0.0 : kAbsTolerance + kRelTolerance * std::fabs(e);
        if (!(std::fabs(e - a) <= tolerance)) {
            char text[160];
            std::snprintf(text, sizeof(text), "output %zu element %lld: %.7g, expected %.7g", index,
                          static_cast<long long>(i), a, e);
            return Status(StatusCode::kInternal, text);
        }
    }
    return Status::ok();
}

Status run_case(const fs::path& dir) {
    rknn::convert::ConvertOptions options;
    options.onnx_path = (dir / "model.onnx").string();
    options.dtype = rknn::convert::TargetDType::kFloat32;
    RKNN_ASSIGN_OR_RETURN(rknn::convert::ConvertResult converted, rknn::convert::convert_onnx(options));
    // Through the file format and back, as the runtime would load it.
    RKNN_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, rknn::model::serialize_model(converted.graph));
    RKNN_ASSIGN_OR_RETURN(const rknn::graph::Graph graph,
                          rknn::model::load_model_from_memory(bytes.data(), bytes.size(), rknn::model::BufferOwnership::kCopy));
    RKNN_ASSIGN_OR_RETURN(auto exec, rknn::cpu::GraphExecutor::create(graph));
    for (const auto& data_dir : fs::directory_iterator(dir)) {
        if (!data_dir.is_directory() || data_dir.path().filename().string().rfind("test_data_set", 0) != 0) continue;
        std::vector<HostTensor> inputs;
        for (const fs::path& p : numbered(data_dir.path(), "input_")) {
            RKNN_ASSIGN_OR_RETURN(HostTensor t, read_tensor(p));
            const size_t i = inputs.size();
            if (i < graph.inputs.size()) t = as_bfloat16_if_declared(t, graph.tensors[graph.inputs[i]].dtype);
            inputs.push_back(std::move(t));
        }
        std::vector<HostTensor> outputs;
        RKNN_RETURN_IF_ERROR(exec->run(inputs, &outputs));
        const std::vector<fs::path> expected_files = numbered(data_dir.path(), "output_");
        if (expected_files.size() != outputs.size()) {
            return Status(StatusCode::kInternal, std::to_string(outputs.size()) + " outputs, expected " +
                                                     std::to_string(expected_files.size()));
        }
        for (size_t k = 0; k < outputs.size(); ++k) {
            RKNN_ASSIGN_OR_RETURN(HostTensor expected, read_tensor(expected_files[k]));
            expected = as_bfloat16_if_declared(expected, outputs[k].dtype());
            RKNN_RETURN_IF_ERROR(compare(expected, outputs[k], k));
        }
    }
    return Status::ok();
}

std::string one_line(std::string text) {
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

std::set<std::string> read_expected_failures(const std::string& path) {
    std::set<std::string> names;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        names.insert(line.substr(0, line.find_first_of(" \t:")));
    }
    return names;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s SUITE_DIR EXPECTED_FAILURES REPORT_FILE [MIN_PASS_RATE]\n", argv[0]);
        return 2;
    }
    const fs::path suite = argv[1];
    if (!fs::is_directory(suite)) {
        std::printf("SKIP: %s not found (install libonnx-testdata)\n", suite.c_str());
        return 77;
    }
    const std::set<std::string> expected_failures = read_expected_failures(argv[2]);
    const double min_rate = argc > 4 ? std::atof(argv[4]) : 0.95;
    std::vector<fs::path> cases;
    for (const auto& entry : fs::directory_iterator(suite)) {
        if (entry.is_directory() && in_scope(entry.path() / "model.onnx")) cases.push_back(entry.path());
    }
    std::sort(cases.begin(), cases.end());
    int passed = 0;
    int unexpected = 0;
    std::ofstream report(argv[3]);
    report << "# ONNX node conformance failures (case: reason), written by onnx_conformance\n";
    for (const fs::path& dir : cases) {
        const std::string name = dir.filename().string();
        Status status = run_case(dir);
        if (status.is_ok()) {
            ++passed;
            if (expected_failures.count(name)) std::printf("NOTE %s now passes; drop it from the expected failures\n", name.c_str());
            continue;
        }
        const std::string reason = one_line(status.message());
        const bool known = expected_failures.count(name) > 0;
        unexpected += known ? 0 : 1;
        std::printf("%s %s: %s\n", known ? "FAIL (expected)" : "FAIL", name.c_str(), reason.c_str());
        report << name << ": " << reason << "\n";
    }
    const double rate = cases.empty() ? 0.0 : static_cast<double>(passed) / static_cast<double>(cases.size());
    std::printf("ONNX conformance: %d passed / %zu in scope (%.1f%%), %zu failed, %d unexpected\n", passed, cases.size(),
                100.0 * rate, cases.size() - passed, unexpected);
    return rate >= min_rate && unexpected == 0 ? 0 : 1;
}
