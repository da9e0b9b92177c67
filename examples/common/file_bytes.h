// A whole file in memory, as the SDK demos read a model before rknn_init.
#pragma once

#include <vector>

namespace examples {

// false when the file cannot be read or is empty.
bool read_file_bytes(const char* path, std::vector<char>* bytes);

}  // namespace examples
