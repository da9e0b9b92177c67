// ONNX (opsets up to 17) to the graph IR.
//
// The importer maps nodes one to one onto graph ops, turns initializers and
// Constant nodes into constant tensors, and normalises opset-specific forms
// (Softmax before 13, Resize 10, Cast's type codes...). Tensors take the types
// and shapes the file declares; the converter's shape-folding pass infers the
// rest. It never stops at the first problem: every unsupported op or
// attribute, and every value no node provides (or two nodes write), is listed
// with the node's name.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace rknn::convert {

struct ImportOptions {
    std::vector<std::string> custom_op_types;  // node op types kept as custom ops
};

struct ImportResult {
    graph::Graph graph;
    int64_t opset = 0;                 // default-domain opset
    std::vector<std::string> problems; // unsupported ops/attributes; the graph is unusable if not empty
};

StatusOr<ImportResult> import_onnx_file(const std::string& path, const ImportOptions& options);
StatusOr<ImportResult> import_onnx_bytes(const void* data, size_t size, const std::string& base_dir,
                                         const ImportOptions& options);

}  // namespace rknn::convert
