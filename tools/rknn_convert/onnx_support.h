// Which ONNX attributes (and attribute values) the converter understands, per
// op type. Anything outside this table would be silently misread, so the
// importer reports it as unsupported instead.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace rknn::convert {

// Problems with `op`'s attributes, one line each; empty when supported.
std::vector<std::string> check_attributes(const graph::Op& op);

}  // namespace rknn::convert
