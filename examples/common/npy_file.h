// Minimal .npy reading and writing for the examples (NumPy format 1.0/2.0,
// little-endian, C order): what rknn_benchmark and the demos exchange with
// Python.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace examples {

struct NpyArray {
    std::string dtype;            // "uint8", "int8", "float16", "float32", "int64", "bool", ...
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;    // raw little-endian payload
};

// false with `error` set when the file is missing or not a plain .npy, or
// when its data does not have the size its shape and type say.
bool read_npy(const std::string& path, NpyArray* out, std::string* error);
// Writes float32 values with the given shape.
bool write_npy_float32(const std::string& path, const float* values, const std::vector<int64_t>& shape);

}  // namespace examples
