#include "runtime/layer_dump.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/log.h"
#include "base/npy.h"

namespace rknn::runtime {
namespace {

// NumPy's type code of a dtype ("" when .npy has none).
const char* npy_code(graph::DType dtype) {
    switch (dtype) {
        case graph::DType::kFloat32: return "f4";
        case graph::DType::kFloat16: return "f2";
        case graph::DType::kFloat64: return "f8";
        case graph::DType::kInt8: return "i1";
        case graph::DType::kUInt8: return "u1";
        case graph::DType::kInt16: return "i2";
        case graph::DType::kUInt16: return "u2";
        case graph::DType::kInt32: return "i4";
        case graph::DType::kUInt32: return "u4";
        case graph::DType::kInt64: return "i8";
        case graph::DType::kUInt64: return "u8";
        case graph::DType::kBool: return "b1";
        default: return "";
    }
}

// Keeps names usable as file names.
std::string file_safe(const std::string& name) {
    std::string out = name;
    for (char& ch : out)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.')) ch = '_';
    return out;
}

}  // namespace

LayerDumper::LayerDumper() {
    const char* env = std::getenv("RKNN_DUMP_DIR");
    const std::string dir = env != nullptr && env[0] != '\0' ? env : "/userdata/dumps";
    std::error_code error;
    std::filesystem::create_directories(dir, error);
    if (error || !std::filesystem::is_directory(dir)) {
        RKNN_LOGW("layer dumps are off: cannot create %s (%s); set RKNN_DUMP_DIR", dir.c_str(),
                  error.message().c_str());
        return;
    }
    dir_ = dir;
}

void LayerDumper::dump(uint64_t run, int position, const std::string& op_type, const std::string& tensor,
                       const cpu::HostTensor& value) const {
    const char* code = npy_code(value.dtype());
    if (!active() || code[0] == '\0') return;
    npy::Array array;
    array.dtype = code;
    array.shape = value.shape();
    const auto* bytes = static_cast<const uint8_t*>(value.raw());
    array.data.assign(bytes, bytes + value.byte_size());
    const std::string path = dir_ + "/" + std::to_string(run) + "_" + std::to_string(position) + "_" + op_type + "_" +
                             file_safe(tensor) + ".npy";
    const Status written = npy::write_file(path, array);
    if (!written.is_ok()) RKNN_LOGW("layer dump %s: %s", path.c_str(), written.message().c_str());
}

}  // namespace rknn::runtime
