#include "onnx_tensor.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "base/half.h"

namespace rknn::convert {
namespace {

using graph::DType;

Status bad(const onnx::TensorProto& p, const std::string& what) {
    return Status(StatusCode::kModelInvalid, "initializer \"" + p.name() + "\": " + what);
}

template <typename Field, typename T>
void copy_field(const Field& field, std::vector<uint8_t>* bytes) {
    bytes->resize(static_cast<size_t>(field.size()) * sizeof(T));
    for (int i = 0; i < field.size(); ++i) {
        const T v = static_cast<T>(field.Get(i));
        std::memcpy(bytes->data() + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
    }
}

bool parse_int64(const std::string& text, int64_t* out) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0') return false;
    *out = v;
    return true;
}

Status read_external(const onnx::TensorProto& p, const std::string& base_dir, std::vector<uint8_t>* bytes) {
    std::string location;
    int64_t offset = 0;
    int64_t length = -1;
    for (const auto& entry : p.external_data()) {
        if (entry.key() == "location") location = entry.value();
        else if (entry.key() == "offset" && !parse_int64(entry.value(), &offset)) return bad(p, "bad external offset");
        else if (entry.key() == "length" && !parse_int64(entry.value(), &length)) return bad(p, "bad external length");
    }
    // External data must stay inside the model's directory.
    if (location.empty() || location[0] == '/' || location.find("..") != std::string::npos)
        return bad(p, "external data location \"" + location + "\" is not a relative path inside the model folder");
    std::ifstream in(base_dir + "/" + location, std::ios::binary);
    if (!in) return bad(p, "cannot open external data " + location);
    in.seekg(0, std::ios::end);
    const int64_t file_size = in.tellg();
    if (offset < 0 || offset > file_size) return bad(p, "external data offset past the end of " + location);
    if (length < 0) length = file_size - offset;
    if (length > file_size - offset) return bad(p, "external data runs past the end of " + location);
    bytes->resize(static_cast<size_t>(length));
    in.seekg(offset);
    in.read(reinterpret_cast<char*>(bytes->data()), length);
    if (!in) return bad(p, "reading external data failed");
    return Status::ok();
}

}  // namespace

DType dtype_from_onnx(int t) {
    switch (t) {
    case onnx::TensorProto::FLOAT: return DType::kFloat32;
    case onnx::TensorProto::UINT8: return DType::kUInt8;
    case onnx::TensorProto::INT8: return DType::kInt8;
    case onnx::TensorProto::UINT16: return DType::kUInt16;
    case onnx::TensorProto::INT16: return DType::kInt16;
    case onnx::TensorProto::INT32: return DType::kInt32;
    case onnx::TensorProto::INT64: return DType::kInt64;
    case onnx::TensorProto::BOOL: return DType::kBool;
    case onnx::TensorProto::FLOAT16: return DType::kFloat16;
    case onnx::TensorProto::DOUBLE: return DType::kFloat64;
    case onnx::TensorProto::UINT32: return DType::kUInt32;
    case onnx::TensorProto::UINT64: return DType::kUInt64;
    case onnx::TensorProto::BFLOAT16: return DType::kBFloat16;
    default: return DType::kUndefined;
    }
}

StatusOr<DecodedTensor> decode_tensor(const onnx::TensorProto& p, const std::string& base_dir) {
    DecodedTensor t;
    t.dtype = dtype_from_onnx(p.data_type());
    if (t.dtype == DType::kUndefined) {
        return bad(p, "element type " + onnx::TensorProto::DataType_Name(
                                            static_cast<onnx::TensorProto::DataType>(p.data_type())) +
                          " is not supported");
    }
    t.shape.assign(p.dims().begin(), p.dims().end());
    int64_t count = 0;
    if (!graph::checked_num_elements(t.shape, &count)) return bad(p, "invalid dims");
    const size_t expected = static_cast<size_t>(count) * graph::dtype_size(t.dtype);
    if (p.data_location() == onnx::TensorProto::EXTERNAL) {
        RKNN_RETURN_IF_ERROR(read_external(p, base_dir, &t.bytes));
    } else if (p.has_raw_data()) {
        t.bytes.assign(p.raw_data().begin(), p.raw_data().end());
    } else {
        switch (t.dtype) {
        case DType::kFloat32: copy_field<decltype(p.float_data()), float>(p.float_data(), &t.bytes); break;
        case DType::kFloat64: copy_field<decltype(p.double_data()), double>(p.double_data(), &t.bytes); break;
        case DType::kInt64: copy_field<decltype(p.int64_data()), int64_t>(p.int64_data(), &t.bytes); break;
        case DType::kUInt32: copy_field<decltype(p.uint64_data()), uint32_t>(p.uint64_data(), &t.bytes); break;
        case DType::kUInt64: copy_field<decltype(p.uint64_data()), uint64_t>(p.uint64_data(), &t.bytes); break;
        case DType::kInt32: copy_field<decltype(p.int32_data()), int32_t>(p.int32_data(), &t.bytes); break;
        case DType::kInt16: copy_field<decltype(p.int32_data()), int16_t>(p.int32_data(), &t.bytes); break;
        case DType::kUInt16:
        case DType::kFloat16:
        case DType::kBFloat16: copy_field<decltype(p.int32_data()), uint16_t>(p.int32_data(), &t.bytes); break;
        case DType::kInt8: copy_field<decltype(p.int32_data()), int8_t>(p.int32_data(), &t.bytes); break;
        case DType::kUInt8:
        case DType::kBool: copy_field<decltype(p.int32_data()), uint8_t>(p.int32_data(), &t.bytes); break;
        default: return bad(p, "no data");
        }
    }
    if (t.bytes.size() != expected) {
        return bad(p, "holds " + std::to_string(t.bytes.size()) + " bytes, its shape needs " + std::to_string(expected));
    }
    return t;
}

}  // namespace rknn::convert
