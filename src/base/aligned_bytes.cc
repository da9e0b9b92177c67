#include "base/aligned_bytes.h"

#include <cstring>
#include <new>

namespace rknn {

AlignedBytes::AlignedBytes(size_t size) : size_(size) {
    if (size == 0) return;
    // Round up so that the allocation size is a multiple of the alignment.
    const size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    auto* p = static_cast<uint8_t*>(::operator new(rounded, std::align_val_t(kAlignment)));
    std::memset(p, 0, rounded);
    data_.reset(p);
}

void AlignedBytes::Free::operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t(kAlignment)); }

}  // namespace rknn
