// Decoding ONNX TensorProto values into graph dtypes and bytes.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "graph/tensor.h"

namespace onnx {
class TensorProto;
}

namespace rknn::convert {

// The graph dtype of an ONNX TensorProto data_type; kUndefined if unsupported.
graph::DType dtype_from_onnx(int onnx_type);

struct DecodedTensor {
    graph::DType dtype = graph::DType::kUndefined;
    graph::Shape shape;
    std::vector<uint8_t> bytes;  // row-major, little-endian
};

// Decodes raw_data or the typed fields; external data is read from
// `base_dir` (relative paths inside it only).
StatusOr<DecodedTensor> decode_tensor(const onnx::TensorProto& proto, const std::string& base_dir);

}  // namespace rknn::convert
