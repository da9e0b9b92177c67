#include "npy_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace examples {
namespace {

const char* dtype_of_descr(const std::string& descr) {
    static const struct {
        const char* descr;
        const char* name;
    } kTable[] = {{"|u1", "uint8"}, {"|i1", "int8"}, {"<f2", "float16"}, {"<f4", "float32"}, {"<i8", "int64"},
                  {"|b1", "bool"},  {"<i4", "int32"}, {"<i2", "int16"},  {"<u2", "uint16"}, {"<f8", "float64"}};
    for (const auto& entry : kTable)
        if (descr == entry.descr) return entry.name;
    return nullptr;
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
    if (!file.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
        *error = path + " is not a .npy file";
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
    file.read(&header[0], header_len);
    const std::string descr_field = field(header, "descr");
    const size_t q1 = descr_field.find('\'');
    const size_t q2 = q1 == std::string::npos ? q1 : descr_field.find('\'', q1 + 1);
    const char* dtype = q2 == std::string::npos ? nullptr : dtype_of_descr(descr_field.substr(q1 + 1, q2 - q1 - 1));
    const std::string order = field(header, "fortran_order");
    const bool fortran = order.find("True") < order.find(',');
    if (dtype == nullptr || fortran) {
        *error = path + ": unsupported dtype or Fortran order";
        return false;
    }
    out->dtype = dtype;
    const std::string shape_field = field(header, "shape");
    const size_t open = shape_field.find('('), close = shape_field.find(')');
    out->shape.clear();
    std::stringstream dims(shape_field.substr(open + 1, close - open - 1));
    std::string dim;
    while (std::getline(dims, dim, ','))
        if (dim.find_first_of("0123456789") != std::string::npos) out->shape.push_back(std::stoll(dim));
    out->data.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
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
