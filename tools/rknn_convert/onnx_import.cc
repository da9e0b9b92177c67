#include "onnx_import.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <unordered_map>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "base/log.h"
#include "onnx_support.h"
#include "onnx_tensor.h"

namespace rknn::convert {
namespace {

using graph::DType;
using graph::OpType;

constexpr int64_t kMaxOpset = 17;
// ONNX files are protobufs; protobuf itself cannot read past 2 GiB.
constexpr size_t kMaxOnnxBytes = size_t{INT_MAX};

struct TypeInfo {
    DType dtype = DType::kUndefined;
    graph::Shape shape;
    std::vector<std::string> dim_params;
    bool has_shape = false;
};

TypeInfo type_of(const onnx::TypeProto& type) {
    TypeInfo info;
    if (!type.has_tensor_type()) return info;
    const auto& tt = type.tensor_type();
    info.dtype = dtype_from_onnx(tt.elem_type());
    if (!tt.has_shape()) return info;
    info.has_shape = true;
    bool any_param = false;
    for (const auto& dim : tt.shape().dim()) {
        if (dim.has_dim_value()) {
            info.shape.push_back(dim.dim_value());
            info.dim_params.push_back("");
        } else {
            info.shape.push_back(-1);
            info.dim_params.push_back(dim.has_dim_param() ? dim.dim_param() : "?");
            any_param = true;
        }
    }
    if (!any_param) info.dim_params.clear();
    return info;
}

class Importer {
public:
    Importer(const onnx::ModelProto& model, std::string base_dir, const ImportOptions& options, int64_t opset)
        : model_(model), base_dir_(std::move(base_dir)), options_(options), opset_(opset) {}

    StatusOr<ImportResult> run();

private:
    void problem(int node, const onnx::NodeProto& n, const std::string& what) {
        result_.problems.push_back("node " + std::to_string(node) + " \"" + n.name() + "\" (" + n.op_type() +
                                   "): " + what);
        // Its readers are not reported again as reading nothing.
        for (const std::string& out : n.output()) rejected_outputs_.insert(out);
    }
    int32_t tensor_for(const std::string& name);
    Status add_initializer(const onnx::TensorProto& t);
    void add_constant_node(int index, const onnx::NodeProto& n);
    void add_node(int index, const onnx::NodeProto& n);
    void read_attribute(int index, const onnx::NodeProto& n, const onnx::AttributeProto& a, graph::Op* op);
    // Every value a node reads comes from a graph input, an initializer or
    // exactly one node: what does not is listed as a problem.
    void check_dataflow();
    bool is_custom(const std::string& op_type) const {
        for (const std::string& c : options_.custom_op_types)
            if (c == op_type) return true;
        return false;
    }

    std::set<std::string> rejected_outputs_;  // outputs of nodes already listed as problems
    const onnx::ModelProto& model_;
    std::string base_dir_;
    const ImportOptions& options_;
    int64_t opset_;
    ImportResult result_;
    std::unordered_map<std::string, int32_t> by_name_;
    std::unordered_map<std::string, TypeInfo> types_;
};

int32_t Importer::tensor_for(const std::string& name) {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second;
    graph::Tensor t;
    t.name = name;
    t.dtype = DType::kFloat32;
    auto type = types_.find(name);
    if (type != types_.end()) {
        if (type->second.dtype != DType::kUndefined) t.dtype = type->second.dtype;
        t.shape = type->second.shape;
        t.dim_params = type->second.dim_params;
    }
    const int32_t index = result_.graph.add_tensor(std::move(t));
    by_name_.emplace(name, index);
    return index;
}

void Importer::check_dataflow() {
    graph::Graph& g = result_.graph;
    std::vector<int> writers(g.tensors.size(), 0);
    for (const graph::Op& op : g.ops) {
        for (int32_t t : op.outputs) ++writers[static_cast<size_t>(t)];
    }
    std::vector<bool> is_input(g.tensors.size(), false);
    for (int32_t t : g.inputs) is_input[static_cast<size_t>(t)] = true;
    std::vector<bool> reported(g.tensors.size(), false);
    for (const graph::Op& op : g.ops) {
        for (int32_t t : op.outputs) {
            const size_t i = static_cast<size_t>(t);
            if ((writers[i] > 1 || is_input[i] || g.is_constant(t)) && !reported[i]) {
                reported[i] = true;
                result_.problems.push_back("\"" + op.name + "\" writes \"" + g.tensors[i].name +
                                           "\", which another node, a graph input or an initializer also provides");
            }
        }
        for (int32_t t : op.inputs) {
            if (t < 0) continue;
            const size_t i = static_cast<size_t>(t);
            if (writers[i] == 0 && !is_input[i] && !g.is_constant(t) && !reported[i] &&
                !rejected_outputs_.count(g.tensors[i].name)) {
                reported[i] = true;
                result_.problems.push_back("\"" + op.name + "\" reads \"" + g.tensors[i].name +
                                           "\", which no node, graph input or initializer provides");
            }
        }
    }
}

Status Importer::add_initializer(const onnx::TensorProto& proto) {
    RKNN_ASSIGN_OR_RETURN(DecodedTensor t, decode_tensor(proto, base_dir_));
    const int32_t index = result_.graph.add_constant(
        proto.name(), t.dtype, t.shape, graph::Buffer::copy_of(t.bytes.data(), t.bytes.size()));
    by_name_[proto.name()] = index;
    return Status::ok();
}

void Importer::add_constant_node(int index, const onnx::NodeProto& n) {
    if (n.output_size() != 1 || n.attribute_size() != 1) {
        problem(index, n, "a Constant needs exactly one output and one value attribute");
        return;
    }
    const onnx::AttributeProto& a = n.attribute(0);
    DecodedTensor t;
    if (a.name() == "value" && a.has_t()) {
        auto decoded = decode_tensor(a.t(), base_dir_);
        if (!decoded.is_ok()) {
            problem(index, n, decoded.status().message());
            return;
        }
        t = std::move(decoded).value();
    } else if (a.name() == "value_float" || a.name() == "value_floats") {
        std::vector<float> v = a.name() == "value_float" ? std::vector<float>{a.f()}
                                                         : std::vector<float>(a.floats().begin(), a.floats().end());
        t.dtype = DType::kFloat32;
        if (a.name() == "value_floats") t.shape = {static_cast<int64_t>(v.size())};
        t.bytes.resize(v.size() * 4);
        if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());  // an empty list is legal
    } else if (a.name() == "value_int" || a.name() == "value_ints") {
        std::vector<int64_t> v = a.name() == "value_int" ? std::vector<int64_t>{a.i()}
                                                         : std::vector<int64_t>(a.ints().begin(), a.ints().end());
        t.dtype = DType::kInt64;
        if (a.name() == "value_ints") t.shape = {static_cast<int64_t>(v.size())};
        t.bytes.resize(v.size() * 8);
        if (!v.empty()) std::memcpy(t.bytes.data(), v.data(), t.bytes.size());
    } else {
        problem(index, n, "Constant attribute \"" + a.name() + "\" is not supported");
        return;
    }
    const int32_t tensor = result_.graph.add_constant(n.output(0), t.dtype, t.shape,
                                                      graph::Buffer::copy_of(t.bytes.data(), t.bytes.size()));
    by_name_[n.output(0)] = tensor;
}

void Importer::read_attribute(int index, const onnx::NodeProto& n, const onnx::AttributeProto& a, graph::Op* op) {
    graph::Attribute attr;
    attr.name = a.name();
    switch (a.type()) {
    case onnx::AttributeProto::INT: attr.kind = graph::Attribute::Kind::kInt; attr.i = a.i(); break;
    case onnx::AttributeProto::FLOAT: attr.kind = graph::Attribute::Kind::kFloat; attr.f = a.f(); break;
    case onnx::AttributeProto::STRING: attr.kind = graph::Attribute::Kind::kString; attr.s = a.s(); break;
    case onnx::AttributeProto::INTS:
        attr.kind = graph::Attribute::Kind::kInts;
        attr.ints.assign(a.ints().begin(), a.ints().end());
        break;
    case onnx::AttributeProto::FLOATS:
        attr.kind = graph::Attribute::Kind::kFloats;
        attr.floats.assign(a.floats().begin(), a.floats().end());
        break;
    case onnx::AttributeProto::TENSOR: {
        // Only ConstantOfShape's fill value uses a tensor attribute.
        auto decoded = decode_tensor(a.t(), base_dir_);
        if (op->type != OpType::kConstantOfShape || a.name() != "value" || !decoded.is_ok()) {
            problem(index, n, "tensor attribute \"" + a.name() + "\" is not supported");
            return;
        }
        const DecodedTensor& t = decoded.value();
        op->attrs.set_string("value_dtype", graph::dtype_name(t.dtype));
        if (t.bytes.empty()) return;
        if (graph::is_float(t.dtype)) {
            float v = 0.0f;
            if (t.dtype == DType::kFloat32) std::memcpy(&v, t.bytes.data(), 4);
            else if (t.dtype == DType::kFloat64) {
                double d;
                std::memcpy(&d, t.bytes.data(), 8);
                v = static_cast<float>(d);
            }
            op->attrs.set_floats("value", {v});
        } else {
            int64_t v = 0;
            std::memcpy(&v, t.bytes.data(), std::min<size_t>(t.bytes.size(), graph::dtype_size(t.dtype)));
            if (graph::dtype_size(t.dtype) < 8 && graph::is_signed_int(t.dtype)) {
                const int shift = 64 - 8 * static_cast<int>(graph::dtype_size(t.dtype));
                v = static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;  // sign-extend
            }
            op->attrs.set_ints("value", {v});
        }
        return;
    }
    default: problem(index, n, "attribute \"" + a.name() + "\" has an unsupported kind"); return;
    }
    if (op->type == OpType::kCast && attr.name == "to") {
        const DType to = dtype_from_onnx(static_cast<int>(attr.i));
        if (to == DType::kUndefined) {
            problem(index, n, "Cast to element type " + std::to_string(attr.i) + " is not supported");
            return;
        }
        op->attrs.set_string("to", graph::dtype_name(to));
        return;
    }
    op->attrs.add(std::move(attr));
}

void Importer::add_node(int index, const onnx::NodeProto& n) {
    const bool custom = is_custom(n.op_type());
    if (!custom && !n.domain().empty() && n.domain() != "ai.onnx") {
        problem(index, n, "operator domain \"" + n.domain() + "\" is not supported");
    }
    if (!custom && n.op_type() == "Constant") {
        add_constant_node(index, n);
        return;
    }
    graph::Op op;
    op.name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    if (custom) {
        op.type = OpType::kCustom;
        op.custom_type = n.op_type();
    } else {
        op.type = graph::op_type_from_name(n.op_type());
        // Our internal op names are not ONNX operators.
        if (op.type == OpType::kUnknown || op.type == OpType::kCustom || op.type == OpType::kSilu) {
            problem(index, n, "operator " + n.op_type() + " is not supported");
            return;
        }
    }
    for (const auto& a : n.attribute()) read_attribute(index, n, a, &op);
    if ((op.type == OpType::kSoftmax || op.type == OpType::kLogSoftmax) && opset_ < 13) {
        op.attrs.set_int("legacy_2d", 1);
    }
    if (op.type == OpType::kResize && opset_ < 11) op.attrs.set_int("legacy_resize", 1);
    for (const std::string& problem_text : check_attributes(op)) problem(index, n, problem_text);
    for (const std::string& in : n.input()) op.inputs.push_back(in.empty() ? -1 : tensor_for(in));
    for (const std::string& out : n.output()) {
        const std::string name = out.empty() ? op.name + "_unused_" + std::to_string(op.outputs.size()) : out;
        op.outputs.push_back(tensor_for(name));
    }
    if (custom) {
        bool declared = false;
        for (const graph::CustomOpDecl& d : result_.graph.custom_ops) declared = declared || d.type == op.custom_type;
        if (!declared) result_.graph.custom_ops.push_back({op.custom_type, op.attrs});
    }
    result_.graph.add_op(std::move(op));
}

StatusOr<ImportResult> Importer::run() {
    result_.opset = opset_;
    const onnx::GraphProto& g = model_.graph();
    for (const auto& v : g.value_info()) types_[v.name()] = type_of(v.type());
    for (const auto& v : g.input()) types_[v.name()] = type_of(v.type());
    for (const auto& v : g.output()) types_[v.name()] = type_of(v.type());
    for (const auto& init : g.initializer()) {
        Status status = add_initializer(init);
        if (!status.is_ok()) result_.problems.push_back(status.message());
    }
    for (const auto& in : g.input()) {
        if (by_name_.count(in.name())) continue;  // an initializer listed as an input (IR < 4)
        const TypeInfo& info = types_[in.name()];
        if (info.dtype == DType::kUndefined) {
            result_.problems.push_back("graph input \"" + in.name() + "\" is not a tensor of a supported type");
            continue;
        }
        result_.graph.inputs.push_back(tensor_for(in.name()));
    }
    for (int i = 0; i < g.node_size(); ++i) add_node(i, g.node(i));
    check_dataflow();
    for (const auto& out : g.output()) {
        auto it = by_name_.find(out.name());
        if (it == by_name_.end()) {
            result_.problems.push_back("graph output \"" + out.name() + "\" is not produced by any node");
            continue;
        }
        result_.graph.outputs.push_back(it->second);
    }
    return std::move(result_);
}

}  // namespace

StatusOr<ImportResult> import_onnx_bytes(const void* data, size_t size, const std::string& base_dir,
                                         const ImportOptions& options) {
    if (data == nullptr || size == 0) return Status(StatusCode::kModelInvalid, "the ONNX file is empty");
    if (size > kMaxOnnxBytes) return Status(StatusCode::kModelInvalid, "ONNX files above 2 GiB need external data");
    onnx::ModelProto model;
    google::protobuf::io::ArrayInputStream raw(data, static_cast<int>(size));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
        return Status(StatusCode::kModelInvalid, "not a valid ONNX model (the protobuf does not parse)");
    }
    if (!model.has_graph()) return Status(StatusCode::kModelInvalid, "the ONNX model has no graph");
    int64_t opset = 0;
    for (const auto& o : model.opset_import()) {
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    }
    if (opset <= 0) return Status(StatusCode::kModelInvalid, "the ONNX model imports no default-domain opset");
    // No onnx::shape_inference here: libonnx's (1.12) crashes on some
    // malformed nodes (the importer fuzzer found a ConvTranspose that does),
    // and the converter infers every shape and type it needs itself, under
    // the given input shapes (passes/constant_folding.cc).
    Importer importer(model, base_dir, options, opset);
    auto result = importer.run();
    if (result.is_ok() && opset > kMaxOpset) {
        result.value().problems.push_back("opset " + std::to_string(opset) + " is newer than " +
                                          std::to_string(kMaxOpset) + ", the newest this converter supports");
    }
    return result;
}

StatusOr<ImportResult> import_onnx_file(const std::string& path, const ImportOptions& options) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status(StatusCode::kInvalidArgument, "cannot open " + path);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t slash = path.find_last_of('/');
    const std::string base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
    return import_onnx_bytes(bytes.data(), bytes.size(), base_dir, options);
}

}  // namespace rknn::convert
