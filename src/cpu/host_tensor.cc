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

HostTensor HostTensor::borrow(DType dtype, Shape shape, const void* data) {
    HostTensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.numel_ = graph::num_elements(t.shape_);
    t.data_ = const_cast<void*>(data);  // kernels never write their inputs
    return t;
}

}  // namespace rknn::cpu
