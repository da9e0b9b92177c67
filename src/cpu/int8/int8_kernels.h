// The int8 kernels that follow the NPU's arithmetic (see requant.h and
// epilogue.h). They are the oracle the emulator and the code generator are
// tested against. Each returns kUnimplemented when its tensors are not in the
// int8 form it handles; the executor then runs the float kernel instead.
#pragma once

#include "cpu/kernel_registry.h"

namespace rknn::cpu::int8 {

Status conv(const KernelArgs&);
Status gemm(const KernelArgs&);
Status matmul(const KernelArgs&);
Status add(const KernelArgs&);
Status sub(const KernelArgs&);
Status mul(const KernelArgs&);
Status max(const KernelArgs&);
Status min(const KernelArgs&);
Status relu(const KernelArgs&);
Status clip(const KernelArgs&);
Status leaky_relu(const KernelArgs&);
Status prelu(const KernelArgs&);
Status lut_activation(const KernelArgs&);  // Sigmoid, Tanh, HardSigmoid, HardSwish, Elu, Selu, Softplus, Gelu, Silu
Status max_pool(const KernelArgs&);
Status average_pool(const KernelArgs&);
Status global_average_pool(const KernelArgs&);
Status global_max_pool(const KernelArgs&);
Status resize(const KernelArgs&);  // nearest-neighbour Resize / Upsample
Status softmax(const KernelArgs&);  // rows along the last axis, per-tensor quantisation

}  // namespace rknn::cpu::int8
