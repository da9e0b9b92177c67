#include "npy_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace examples {
namespace {

// The element type's name and size for a descr, or nullptr.
const char* dtype_of_descr(const std::string& descr, size_t* item_bytes) {
    static const struct {
        const char* descr;
        const char* name;
        size_t bytes;
    } kTable[] = {{"|u1", "uint8", 1}, {"|i1", "int8", 1},   {"<f2", "float16", 2}, {"<f4", "float32", 4},
                  {"<i8", "int64", 8}, {"|b1", "bool", 1},   {"<i4", "int32", 4},   {"<i2", "int16", 2},
                  {"<u2", "uint16", 2}, {"<f8", "float64", 8}};
    for (const auto& entry : kTable)
        if (descr == entry.descr) {
            *item_bytes = entry.bytes;
            return entry.name;
        }
    return nullptr;
}

// The dims of "(a, b, c)" (each a plain non-negative number); false when the
// text is not one or the element count passes `limit`.
bool parse_shape(const std::string& text, uint64_t limit, std::vector<int64_t>* shape, uint64_t* count) {
    const size_t open = text.find('('), close = text.find(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return false;
    shape->clear();
    *count = 1;
    std::stringstream dims(text.substr(open + 1, close - open - 1));
    std::string dim;
    bool ended = false;  // an empty item: only the one after a trailing comma
    while (std::getline(dims, dim, ',')) {
        const size_t first = dim.find_first_not_of(' '), last = dim.find_last_not_of(' ');
        if (ended) return false;
        if (first == std::string::npos) {
            ended = true;
            continue;
        }
        uint64_t value = 0;
        for (size_t i = first; i <= last; ++i) {
            if (dim[i] < '0' || dim[i] > '9' || value > limit) return false;
            value = value * 10 + static_cast<uint64_t>(dim[i] - '0');
        }
        if (value > limit || (value > 0 && *count > limit / value)) return false;
        *count *= value;
        shape->push_back(static_cast<int64_t>(value));
    }
    return true;
}

// The quoted value after `key` in the header dict.
std::string field(const std::string& header, const std::string& key) {
    const size_t at = header.find("'" + key + "'");
    if (at == std::string::npos) return "";
    const size_t colon = header.find(':', at);
    return colon == std::string::npos ? "" : header.substr(colon + 1);
}

}  // namespace

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        *error = "cannot open " + path;
        return false;
    }
    char magic[8];
    if (!file.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0 || magic[6] < 1 || magic[6] > 3) {
        *error = path + " is not a .npy file (format 1.0 to 3.0)";
        return false;
    }
    uint32_t header_len = 0;
    if (magic[6] == 1) {
        uint8_t len[2];
        file.read(reinterpret_cast<char*>(len), 2);
        header_len = len[0] | (uint32_t{len[1]} << 8);
    } else {
        uint8_t len[4];
        file.read(reinterpret_cast<char*>(len), 4);
        header_len = len[0] | (uint32_t{len[1]} << 8) | (uint32_t{len[2]} << 16) | (uint32_t{len[3]} << 24);
    }
    if (!file || header_len > (1u << 20)) {
        *error = path + ": bad header";
        return false;
    }
    std::string header(header_len, '\0');
    if (!file.read(&header[0], header_len)) {
        *error = path + ": the header is longer than the file";
        return false;
    }
    const std::string descr_field = field(header, "descr");
    const size_t q1 = descr_field.find('\'');
    const size_t q2 = q1 == std::string::npos ? q1 : descr_field.find('\'', q1 + 1);
    size_t item_bytes = 0;
    const char* dtype =
        q2 == std::string::npos ? nullptr : dtype_of_descr(descr_field.substr(q1 + 1, q2 - q1 - 1), &item_bytes);
    const std::string order = field(header, "fortran_order");
    const bool fortran = order.find("True") < order.find(',');
    if (dtype == nullptr || fortran) {
        *error = path + ": unsupported dtype or Fortran order";
        return false;
    }
    out->dtype = dtype;
    uint64_t count = 0;
    constexpr uint64_t kMaxBytes = uint64_t{1} << 32;  // far above any model input
    if (!parse_shape(field(header, "shape"), kMaxBytes / item_bytes, &out->shape, &count)) {
        *error = path + ": the shape is not a list of sizes, or too large";
        return false;
    }
    // Exactly the bytes the shape says, and nothing after them.
    out->data.resize(count * item_bytes);
    const bool complete = out->data.empty() || file.read(reinterpret_cast<char*>(out->data.data()),
                                                         static_cast<std::streamsize>(out->data.size()));
    if (!complete || file.peek() != std::ifstream::traits_type::eof()) {
        *error = path + ": the data is " + (complete ? "longer" : "shorter") + " than the shape says (" +
                 std::to_string(count * item_bytes) + " bytes)";
        out->data.clear();
        return false;
    }
    return true;
}

bool write_npy_float32(const std::string& path, const float* values, const std::vector<int64_t>& shape) {
    std::string dims;
    size_t count = 1;
    for (int64_t d : shape) {
        dims += std::to_string(d) + ",";
        count *= static_cast<size_t>(d);
    }
    if (shape.size() > 1) dims.pop_back();
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
    // Magic (6) + version (2) + length (2) + header + '\n' padded to 64 bytes.
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    const uint8_t prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<uint8_t>(header.size() & 0xff),
                                static_cast<uint8_t>(header.size() >> 8)};
    bool ok = std::fwrite(prefix, 1, 10, f) == 10 && std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
              std::fwrite(values, sizeof(float), count, f) == count;
    ok = std::fclose(f) == 0 && ok;
    return ok;
}

}  // namespace examples
