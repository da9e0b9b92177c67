// A heap byte buffer with 64-byte alignment (cache line, and the alignment the
// model format guarantees for weights), zero-initialised unless the caller
// says it writes every byte first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace rknn {

class AlignedBytes {
public:
    static constexpr size_t kAlignment = 64;

    AlignedBytes() = default;
    explicit AlignedBytes(size_t size);
    struct Uninitialized {};
    // Contents undefined: for buffers the caller fills completely.
    AlignedBytes(size_t size, Uninitialized);

    uint8_t* data() { return data_.get(); }
    const uint8_t* data() const { return data_.get(); }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

private:
    struct Free {
        void operator()(uint8_t* p) const;
    };
    std::unique_ptr<uint8_t, Free> data_;
    size_t size_ = 0;
};

}  // namespace rknn
