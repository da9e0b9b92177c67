#include "cpu/host_tensor.h"

#include <algorithm>

namespace rknn::cpu {

HostTensor::HostTensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
    numel_ = graph::num_elements(shape_);
    // Empty tensors still get a valid (never read) address: a null data
    // pointer means "value unknown" to shape inference.
    storage_ = std::make_shared<AlignedBytes>(std::max<size_t>(byte_size(), 1));
    data_ = storage_->data();
}

HostTensor HostTensor::uninitialized(DType dtype, Shape shape) {
    HostTensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.numel_ = graph::num_elements(t.shape_);
    t.storage_ = std::make_shared<AlignedBytes>(std::max<size_t>(t.byte_size(), 1), AlignedBytes::Uninitialized{});
    t.data_ = t.storage_->data();
    return t;
}

HostTensor HostTensor::in_storage(DType dtype, Shape shape, std::shared_ptr<AlignedBytes> storage) {
    HostTensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.numel_ = graph::num_elements(t.shape_);
    if (storage == nullptr || storage->size() < std::max<size_t>(t.byte_size(), 1)) return HostTensor(dtype, t.shape_);
    t.storage_ = std::move(storage);
    t.data_ = t.storage_->data();
    return t;
}

HostTensor HostTensor::borrow(DType dtype, Shape shape, const void* data) {
    HostTensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.numel_ = graph::num_elements(t.shape_);
    t.data_ = const_cast<void*>(data);  // kernels never write their inputs
    // An empty view of no bytes (a zero-sized constant) still gets an address,
    // as owned empty tensors do: kernels may memcpy zero bytes from it.
    static const uint64_t kNothing = 0;
    if (t.data_ == nullptr && t.numel_ == 0) t.data_ = const_cast<uint64_t*>(&kNothing);
    return t;
}

}  // namespace rknn::cpu
