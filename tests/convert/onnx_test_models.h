// Small ONNX models written by tests (through onnx's protobuf classes), for
// driving the converter the way a user's exported model would.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rknn::testing {

// A float input or output; each dim a number ("2") or a name ("w", left open).
void add_float_value(onnx::ValueInfoProto* v, const std::string& name, const std::vector<std::string>& dims);
// A node named `out` + "_node" with one output.
onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& type, const std::vector<std::string>& in,
                          const std::string& out);
void add_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value);
void add_ints_attribute(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values);
void add_int64s(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values);
void add_floats(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                const std::vector<float>& values);
// An opset-13 model around `graph`, written under the test temp dir; its path.
std::string save_model(onnx::GraphProto graph, const std::string& name);

}  // namespace rknn::testing
