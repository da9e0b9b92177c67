// int8 values <-> uint8 bytes biased by 128 (x + 128 is x ^ 0x80): the form
// the NPU's CNA reads unsigned data in, and the emulator's GEMM operands.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rknn {

// dst[i] = src[i] ^ 0x80, eight bytes a step (the plain loop is not
// vectorised at -O2); dst may be src.
inline void copy_sign_flipped(uint8_t* dst, const uint8_t* src, size_t n) {
    constexpr uint64_t kSignBits = 0x8080808080808080ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        std::memcpy(&v, src + i, 8);
        v ^= kSignBits;
        std::memcpy(dst + i, &v, 8);
    }
    for (; i < n; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ 0x80u);
}

}  // namespace rknn
