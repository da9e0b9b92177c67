// A tensor in host memory, as the CPU kernels see it: dtype, shape,
// quantisation, and contiguous row-major data. Copies share the storage.
#pragma once

#include <memory>

#include "base/aligned_bytes.h"
#include "graph/tensor.h"

namespace rknn::cpu {

using graph::DType;
using graph::QuantParams;
using graph::Shape;

class HostTensor {
public:
    HostTensor() = default;
    // Allocates zeroed storage for the shape (which must be valid).
    HostTensor(DType dtype, Shape shape);
    // Storage with undefined contents, for a result the caller writes whole.
    static HostTensor uninitialized(DType dtype, Shape shape);
    // Wraps memory owned elsewhere; the caller keeps it alive.
    static HostTensor borrow(DType dtype, Shape shape, const void* data);
    // A tensor in `storage` (shared with whoever else holds it), which must
    // hold at least the shape's bytes; else one of its own is allocated.
    static HostTensor in_storage(DType dtype, Shape shape, std::shared_ptr<AlignedBytes> storage);

    DType dtype() const { return dtype_; }
    const Shape& shape() const { return shape_; }
    int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
    int64_t dim(int64_t d) const { return shape_[d]; }
    int64_t numel() const { return numel_; }
    size_t byte_size() const { return static_cast<size_t>(numel_) * graph::dtype_size(dtype_); }

    void* raw() { return data_; }
    const void* raw() const { return data_; }
    template <typename T>
    T* data() { return static_cast<T*>(data_); }
    template <typename T>
    const T* data() const { return static_cast<const T*>(data_); }

    QuantParams quant;

private:
    DType dtype_ = DType::kUndefined;
    Shape shape_;
    int64_t numel_ = 0;
    std::shared_ptr<AlignedBytes> storage_;
    void* data_ = nullptr;
};

}  // namespace rknn::cpu
