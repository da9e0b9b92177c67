// Every CPU kernel, by file. The table in cpu/kernel_registry.cc maps op types to these.
#pragma once

#include "cpu/kernel_registry.h"

namespace rknn::cpu::kernels {

// elementwise.cc
Status add(const KernelArgs&);
Status sub(const KernelArgs&);
Status mul(const KernelArgs&);
Status div(const KernelArgs&);
Status pow(const KernelArgs&);
Status max(const KernelArgs&);
Status min(const KernelArgs&);
Status sum(const KernelArgs&);
Status mean(const KernelArgs&);
Status equal(const KernelArgs&);
Status greater(const KernelArgs&);
Status less(const KernelArgs&);
Status where(const KernelArgs&);
Status prelu(const KernelArgs&);

// unary.cc
Status unary_math(const KernelArgs&);   // Sqrt, Reciprocal, Exp, Log, Erf, Floor, Ceil
Status activation(const KernelArgs&);   // Sigmoid, Tanh, HardSigmoid, HardSwish, Elu, Selu, Softplus, Gelu, Silu, LeakyRelu
Status abs(const KernelArgs&);
Status neg(const KernelArgs&);
Status relu(const KernelArgs&);
Status clip(const KernelArgs&);
Status identity(const KernelArgs&);      // Identity and Dropout (inference)

// conv.cc
Status conv(const KernelArgs&);
Status conv_transpose(const KernelArgs&);

// matmul.cc
Status gemm(const KernelArgs&);
Status matmul(const KernelArgs&);

// pool.cc
Status max_pool(const KernelArgs&);
Status average_pool(const KernelArgs&);
Status global_average_pool(const KernelArgs&);
Status global_max_pool(const KernelArgs&);

// normalization.cc
Status batch_normalization(const KernelArgs&);
Status instance_normalization(const KernelArgs&);
Status layer_normalization(const KernelArgs&);
Status softmax(const KernelArgs&);
Status log_softmax(const KernelArgs&);

// reduce.cc
Status reduce(const KernelArgs&);        // ReduceMean/Sum/Max/Min
Status arg_reduce(const KernelArgs&);    // ArgMax/ArgMin

// movement.cc
Status concat(const KernelArgs&);
Status split(const KernelArgs&);
Status slice(const KernelArgs&);
Status copy_data(const KernelArgs&);     // Reshape, Flatten, Squeeze, Unsqueeze
Status transpose(const KernelArgs&);
Status pad(const KernelArgs&);
Status gather(const KernelArgs&);
Status depth_to_space(const KernelArgs&);
Status space_to_depth(const KernelArgs&);
Status tile(const KernelArgs&);
Status expand(const KernelArgs&);

// resize.cc
Status resize(const KernelArgs&);        // Resize and Upsample

// misc.cc
Status cast(const KernelArgs&);
Status shape(const KernelArgs&);
Status constant_of_shape(const KernelArgs&);
Status quantize_linear(const KernelArgs&);
Status dequantize_linear(const KernelArgs&);
Status constant(const KernelArgs&);

}  // namespace rknn::cpu::kernels
