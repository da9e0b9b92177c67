// A 64-bit hash of a byte string that is the same on every host and in every
// build (FNV-1a): model files record it, so std::hash (which may change with
// the library) will not do. A few lines, so not worth a dependency.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rknn {

inline uint64_t content_hash(const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; ++i) {
        hash ^= bytes[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

}  // namespace rknn
