// Float16 matmuls as NPU tasks: C = A x B is a 1x1 convolution of M one-
// pixel rows (A as an fp16 feature cube [K/8][M][8], B as its N kernels),
// lowered with the fp16 convolution path (npu/conv_lowering.h), linked and
// submitted through the kernel driver, so that the mock device's emulator
// (or a board's NPU) computes it. Products and sums are float32 in the CNA,
// in its order: within a few float16 ulps of the reference's K-order sums.
//
// The operands go through buffers of this object's own (the bound memory
// may be a client's fd that the device has not imported): A is copied into
// the input cube, B packed into kernels when it is bound, and the output
// cube copied into C in C's layout.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "driver/kernel_driver_factory.h"
#include "matmul/matmul_layout.h"
#include "npu/program.h"
#include "runtime/io_memory.h"

namespace rknn::matmul {

class Fp16NpuMatmul {
public:
    // Whether `plan` runs as NPU tasks on `soc`: float16 A and B, float16 or
    // float32 C, an RK3588-class NPU.
    static bool applies(const Plan& plan, const hw::SocProfile& soc);

    Fp16NpuMatmul(std::shared_ptr<driver::OpenedDriver> driver, const Plan& plan) : driver_(std::move(driver)), plan_(plan) {}

    // B (K x N, in the plan's layout at `b`) packed as the convolution's kernels.
    Status set_b(const uint8_t* b, int64_t k, int64_t n);
    // C = A x B for the shape, on the cores of `core_mask` (0: the driver's choice).
    Status run(const uint8_t* a, uint8_t* c, int64_t m, int64_t k, int64_t n, uint32_t core_mask);

private:
    // Device memory of at least `bytes`, (re)made when too small.
    Status ensure(std::shared_ptr<runtime::IoMemory>* memory, uint64_t bytes);

    std::shared_ptr<driver::OpenedDriver> driver_;
    Plan plan_;
    std::shared_ptr<runtime::IoMemory> input_, weights_, records_, output_, stream_;
    int64_t b_k_ = 0, b_n_ = 0;  // the shape B was packed for (0: none yet)
    std::map<std::tuple<int64_t, int64_t, int64_t, uint32_t>, npu::Program> programs_;
};

}  // namespace rknn::matmul
