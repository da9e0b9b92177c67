#include "node_cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>

#include <onnx/onnx_pb.h>

#include "cpu/convert.h"
#include "onnx_tensor.h"

namespace rknn::testing {
namespace {

namespace fs = std::filesystem;
using cpu::HostTensor;

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
    RKNN_ASSIGN_OR_RETURN(convert::DecodedTensor t, convert::decode_tensor(proto, path.parent_path()));
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

}  // namespace

std::vector<fs::path> cases_in_scope(const fs::path& suite) {
    std::vector<fs::path> cases;
    for (const auto& entry : fs::directory_iterator(suite)) {
        if (entry.is_directory() && in_scope(entry.path() / "model.onnx")) cases.push_back(entry.path());
    }
    std::sort(cases.begin(), cases.end());
    return cases;
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

std::vector<fs::path> data_sets(const fs::path& case_dir) {
    std::vector<fs::path> sets;
    for (const auto& entry : fs::directory_iterator(case_dir)) {
        if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set", 0) == 0)
            sets.push_back(entry.path());
    }
    std::sort(sets.begin(), sets.end());
    return sets;
}

StatusOr<std::vector<HostTensor>> read_numbered(const fs::path& data_set, const std::string& prefix) {
    std::vector<HostTensor> tensors;
    for (const fs::path& p : numbered(data_set, prefix)) {
        RKNN_ASSIGN_OR_RETURN(HostTensor t, read_tensor(p));
        tensors.push_back(std::move(t));
    }
    return tensors;
}

HostTensor as_bfloat16_if_declared(const HostTensor& t, graph::DType declared) {
    if (declared != graph::DType::kBFloat16 || t.dtype() != graph::DType::kUInt16) return t;
    HostTensor bf(graph::DType::kBFloat16, t.shape());
    std::memcpy(bf.raw(), t.raw(), t.byte_size());
    return bf;
}

Status compare_outputs(const HostTensor& expected, const HostTensor& actual, size_t index, double rel, double abs) {
    if (expected.shape() != actual.shape()) {
        return Status(StatusCode::kInternal, "output " + std::to_string(index) + " shape " +
                                                 graph::shape_to_string(actual.shape()) + ", expected " +
                                                 graph::shape_to_string(expected.shape()));
    }
    if (expected.dtype() != actual.dtype()) {
        return Status(StatusCode::kInternal, std::string("output ") + std::to_string(index) + " is " +
                                                 graph::dtype_name(actual.dtype()) + ", expected " +
                                                 graph::dtype_name(expected.dtype()));
    }
    const bool exact = !graph::is_float(expected.dtype());
    for (int64_t i = 0; i < expected.numel(); ++i) {
        const double e = cpu::element_as_double(expected, i);
        const double a = cpu::element_as_double(actual, i);
        if (std::isnan(e) && std::isnan(a)) continue;
        if (std::isinf(e) && e == a) continue;
        const double tolerance = exact ? 0.0 : abs + rel * std::fabs(e);
        if (!(std::fabs(e - a) <= tolerance)) {
            char text[160];
            std::snprintf(text, sizeof(text), "output %zu element %lld: %.7g, expected %.7g", index,
                          static_cast<long long>(i), a, e);
            return Status(StatusCode::kInternal, text);
        }
    }
    return Status::ok();
}

}  // namespace rknn::testing
