#include "base/aligned_bytes.h"

#include <cstring>
#include <new>

namespace rknn {

AlignedBytes::AlignedBytes(size_t size) : AlignedBytes(size, Uninitialized{}) {
    if (size_ != 0) std::memset(data_.get(), 0, (size_ + kAlignment - 1) / kAlignment * kAlignment);
}

AlignedBytes::AlignedBytes(size_t size, Uninitialized) : size_(size) {
    if (size == 0) return;
    // Round up so that the allocation size is a multiple of the alignment.
    const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    data_.reset(static_cast<uint8_t*>(::operator new(rounded, std::align_val_t(kAlignment))));
}

void AlignedBytes::Free::operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t(kAlignment)); }

}  // namespace rknn
