#include "base/npy.h"

#include <cstring>
#include <fstream>

namespace rknn::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMaxHeader = 1 << 20;

Status invalid(const std::string& what) { return Status(StatusCode::kInvalidArgument, "npy: " + what); }

// The value text after 'key': in the header dict.
bool find_value(const std::string& header, const std::string& key, std::string* out) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return false;
    const size_t colon = header.find(':', k);
    if (colon == std::string::npos) return false;
    size_t start = header.find_first_not_of(' ', colon + 1);
    if (start == std::string::npos) return false;
    size_t end;
    if (header[start] == '\'') {
        end = header.find('\'', start + 1);
        if (end == std::string::npos) return false;
        *out = header.substr(start + 1, end - start - 1);
    } else if (header[start] == '(') {
        end = header.find(')', start);
        if (end == std::string::npos) return false;
        *out = header.substr(start + 1, end - start - 1);
    } else {
        end = header.find_first_of(",}", start);
        *out = header.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    return true;
}

}  // namespace

size_t element_size(const std::string& dtype) {
    if (dtype.size() < 2) return 0;
    if (dtype[0] != 'u' && dtype[0] != 'i' && dtype[0] != 'f' && dtype[0] != 'b') return 0;
    const int size = std::atoi(dtype.c_str() + 1);
    return size == 1 || size == 2 || size == 4 || size == 8 ? static_cast<size_t>(size) : 0;
}

StatusOr<Array> parse(const uint8_t* bytes, size_t size) {
    if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) return invalid("not a .npy file");
    const uint8_t major = bytes[6];
    size_t header_len = 0;
    size_t offset = 0;
    if (major == 1) {
        header_len = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) return invalid("truncated header");
        uint32_t len = 0;
        std::memcpy(&len, bytes + 8, 4);
        header_len = len;
        offset = 12;
    } else {
        return invalid("unknown format version");
    }
    if (header_len > kMaxHeader || offset + header_len > size) return invalid("truncated header");
    const std::string header(reinterpret_cast<const char*>(bytes + offset), header_len);
    std::string descr, order, shape_text;
    if (!find_value(header, "descr", &descr) || !find_value(header, "fortran_order", &order) ||
        !find_value(header, "shape", &shape_text))
        return invalid("header lacks descr, fortran_order or shape");
    if (order.find("True") != std::string::npos) return invalid("Fortran-ordered arrays are not supported");
    Array a;
    if (descr.size() < 2) return invalid("bad descr");
    const char byte_order = descr[0];
    if (byte_order == '>' ) return invalid("big-endian arrays are not supported");
    a.dtype = (byte_order == '<' || byte_order == '|' || byte_order == '=') ? descr.substr(1) : descr;
    const size_t esize = element_size(a.dtype);
    if (esize == 0) return invalid("element type " + descr + " is not supported");
    size_t count = 1;
    size_t pos = 0;
    while (pos < shape_text.size()) {
        const size_t next = shape_text.find(',', pos);
        const std::string item = shape_text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
        if (item.find_first_not_of(' ') != std::string::npos) {
            char* end = nullptr;
            const long long dim = std::strtoll(item.c_str(), &end, 10);
            if (dim < 0 || dim > (1LL << 40)) return invalid("bad shape");
            a.shape.push_back(dim);
            if (dim != 0 && count > (size_t{1} << 40) / static_cast<size_t>(dim)) return invalid("shape too large");
            count *= static_cast<size_t>(dim);
        }
        if (next == std::string::npos) break;
        pos = next + 1;
    }
    const size_t data_start = offset + header_len;
    if (count * esize > size - data_start) return invalid("data shorter than its shape says");
    a.data.assign(bytes + data_start, bytes + data_start + count * esize);
    return a;
}

StatusOr<Array> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status(StatusCode::kInvalidArgument, "cannot open " + path);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto a = parse(bytes.data(), bytes.size());
    if (!a.is_ok()) return a.status().with_context(path);
    return a;
}

Status write_file(const std::string& path, const Array& a) {
    std::string header = "{'descr': '";
    header += (a.dtype == "u1" || a.dtype == "i1" || a.dtype == "b1") ? "|" : "<";
    header += a.dtype + "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < a.shape.size(); ++i) header += (i ? ", " : "") + std::to_string(a.shape[i]);
    if (a.shape.size() == 1) header += ",";  // Python's one-element tuple
    header += "), }";
    // Pad so that the data starts on a 64-byte boundary, ending with a newline.
    const size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status(StatusCode::kInvalidArgument, "cannot write " + path);
    out.write(kMagic, 6);
    const char version[2] = {1, 0};
    out.write(version, 2);
    const uint16_t len = static_cast<uint16_t>(header.size());
    out.write(reinterpret_cast<const char*>(&len), 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
    return out ? Status::ok() : Status(StatusCode::kInternal, "writing " + path + " failed");
}

}  // namespace rknn::npy
