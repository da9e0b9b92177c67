// NumPy .npy files (format versions 1-3, little-endian, C order): reading for
// calibration data and test inputs, writing for dumps and reference outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace rknn::npy {

struct Array {
    std::string dtype;            // NumPy type code without byte order: "u1", "i1", "f4", "f8", "i4", "i8", "f2", "b1", ...
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;    // row-major
};

StatusOr<Array> read_file(const std::string& path);
StatusOr<Array> parse(const uint8_t* bytes, size_t size);
Status write_file(const std::string& path, const Array& array);

// Bytes per element of a type code ("f4" -> 4); 0 if unknown.
size_t element_size(const std::string& dtype);

}  // namespace rknn::npy
