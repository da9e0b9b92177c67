// Reads a fuzzer's input as a stream of choices: integers, picks from a
// list and byte runs. Past the end every read gives zeros, so any input is
// a complete program (libFuzzer's FuzzedDataProvider is clang-only; the
// corpus replays also build with gcc).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace rknn::fuzz {

class FuzzBytes {
public:
    FuzzBytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}

    bool empty() const { return pos_ >= size_; }
    size_t remaining() const { return size_ - pos_; }

    template <typename T>
    T take() {
        T value{};
        const size_t n = std::min(sizeof(T), remaining());
        if (n == 0) return value;
        std::memcpy(&value, data_ + pos_, n);
        pos_ += n;
        return value;
    }
    uint8_t u8() { return take<uint8_t>(); }
    uint32_t u32() { return take<uint32_t>(); }
    uint64_t u64() { return take<uint64_t>(); }
    // A value in [0, count); 0 when count is 0.
    uint32_t below(uint32_t count) { return count == 0 ? 0 : u32() % count; }
    bool chance(uint8_t in_256) { return u8() < in_256; }

    // Up to `max` bytes, as many as the input says (and has).
    std::vector<uint8_t> bytes(size_t max) {
        // The count is read first: remaining() must see the bytes after it
        // (two calls in one expression run in either order).
        const size_t wanted = below(static_cast<uint32_t>(max) + 1);
        const size_t n = std::min(wanted, remaining());
        if (n == 0) return {};
        std::vector<uint8_t> out(data_ + pos_, data_ + pos_ + n);
        pos_ += n;
        return out;
    }
    // Copies up to `size` bytes into `dst` (the rest keeps its value).
    size_t fill(void* dst, size_t size) {
        const size_t n = std::min(size, remaining());
        if (n == 0) return 0;
        std::memcpy(dst, data_ + pos_, n);
        pos_ += n;
        return n;
    }

private:
    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
};

}  // namespace rknn::fuzz
