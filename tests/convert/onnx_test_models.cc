#include "convert/onnx_test_models.h"

#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

#include <fstream>

namespace rknn::testing {

void add_float_value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<std::string>& dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (const std::string& dim : dims) {
        auto* d = tt->mutable_shape()->add_dim();
        if (!dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos) {
            d->set_dim_value(std::stoll(dim));
        } else {
            d->set_dim_param(dim);
        }
    }
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& type, const std::vector<std::string>& in,
                          const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(type);
    n->set_name(out + "_node");
    for (const std::string& i : in) n->add_input(i);
    n->add_output(out);
    return n;
}

void add_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
}

void add_ints_attribute(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
}

void add_int64s(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
}

void add_floats(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<float>& values) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
}

std::string save_model(onnx::GraphProto graph, const std::string& name) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    graph.set_name(name);
    *m.mutable_graph() = std::move(graph);
    const std::string path = ::testing::TempDir() + "/" + name + ".onnx";
    // Test processes run side by side and may save the same model: each
    // writes its own file and renames it into place, so a reader never sees
    // one half written.
    const std::string partial = path + "." + std::to_string(::getpid()) + ".part";
    std::ofstream(partial, std::ios::binary) << m.SerializeAsString();
    std::rename(partial.c_str(), path.c_str());
    return path;
}

}  // namespace rknn::testing
