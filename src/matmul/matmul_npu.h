// Matmuls as NPU tasks: C = A x B is a 1x1 convolution of M one-pixel rows
// (A as a feature cube [K/c2][M][c2], B as its N kernels), lowered with the
// convolution paths (npu/conv_lowering.h), linked and submitted through the
// kernel driver, so that the mock device's emulator (or a board's NPU)
// computes it. Two kinds run this way on RK3588-class NPUs:
//
// - float16 A and B, float16 or float32 C: products and sums float32 in the
//   CNA, in its order, so within float32 rounding of the reference's K-order
//   sums;
// - int8 A and B: the int32 sums of (a - zp_a) * b, with -zp_a * sum_k
//   B[k][n] as each column's bias, written as int32 by the DPU; exact while
//   no sum leaves int32. The context turns them into C (B's zero points, the
//   scales, an int8 or float32 C) with the reference's own arithmetic.
//
// The operands go through buffers of this object's own (the bound memory
// may be a client's fd that the device has not imported): A is copied into
// the input cube, B packed into kernels when it is bound, and the output
// cube copied into C in C's layout.
//
// K beyond the CNA's channel fields (8192; an LLM's FFN down-projection has
// K = 11008) is split into equal parts of whole 32-channel groups: one
// convolution per part, each reading its slice of A's cube and its own
// packed kernels, writing int32 (int8) or float32 (float16) partial sums
// that the host adds in part order. int8 stays exact; float16 sums stay
// float32 until C.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "driver/kernel_driver_factory.h"
#include "matmul/matmul_layout.h"
#include "npu/program.h"
#include "runtime/io_memory.h"
#include "runtime/npu_timeout.h"

namespace rknn::matmul {

class NpuMatmul {
public:
    // Whether `plan` runs as NPU tasks on `soc` for shapes up to `max_k`
    // (beyond 65536, an int8 column sum could leave int32).
    static bool applies(const Plan& plan, const hw::SocProfile& soc, int64_t max_k);

    // Its buffers and tasks live in IOMMU domain `iommu_domain`.
    NpuMatmul(std::shared_ptr<driver::OpenedDriver> driver, const Plan& plan, int32_t iommu_domain)
        : driver_(std::move(driver)), plan_(plan), iommu_domain_(iommu_domain) {}

    bool integer() const { return plan_.type.a == Elem::kInt8; }
    // B (K x N, in the plan's layout at `b`) packed as the convolution's kernels.
    Status set_b(const uint8_t* b, int64_t k, int64_t n);
    // C = A x B for the shape, on the cores of `core_mask` (0: the driver's
    // choice); `a_zp` is A's zero point (int8 only). C is written in a tiled
    // layout of width `c_sub` (copy_tiled; N: row-major), as int32 sums for
    // int8 and in the plan's C type for float16.
    Status run(const uint8_t* a, uint8_t* c, int64_t c_sub, int64_t m, int64_t k, int64_t n, uint32_t core_mask,
               int32_t a_zp = 0);

private:
    // Device memory of at least `bytes`, (re)made when too small (*made says so).
    Status ensure(std::shared_ptr<runtime::IoMemory>* memory, uint64_t bytes, bool* made = nullptr);
    // The program for a shape and mask, made once; `float32_out`: a float16
    // product writes float32.
    StatusOr<const npu::Program*> program(int64_t m, int64_t k, int64_t n, uint32_t core_mask, bool float32_out);
    // The parts of K one convolution each takes (one part up to 8192).
    struct KPart {
        int64_t start = 0, size = 0;
    };
    static std::vector<KPart> k_parts(int64_t k);

    std::shared_ptr<driver::OpenedDriver> driver_;
    Plan plan_;
    int32_t iommu_domain_ = 0;
    uint32_t timeout_ms_ = runtime::npu_timeout_ms(6000);  // per submit; RKNN_NPU_TIMEOUT_MS overrides
    std::shared_ptr<runtime::IoMemory> input_, weights_, records_, output_, stream_;
    int64_t b_k_ = 0, b_n_ = 0;         // the shape B was packed for (0: none yet)
    std::vector<int64_t> column_sums_;  // int8: sum over K of each column of B
    std::vector<uint64_t> weight_offsets_;  // each K part's kernels in weights_
    std::map<std::tuple<int64_t, int64_t, int64_t, uint32_t, bool>, npu::Program> programs_;
    // What each part's stream holds now, so that a run that changes nothing
    // writes it again: the program and its addresses (stream, then the four
    // buffers).
    struct Linked {
        const npu::Program* program = nullptr;
        std::array<uint64_t, 5> addresses{};
    };
    std::vector<Linked> linked_;
    // Several K parts: their sums, added on the host (int8: int32, float16:
    // float32), in the output cube's layout; a float16 C rounds them once.
    std::vector<int32_t> int_sums_;
    std::vector<float> float_sums_;
    std::vector<uint16_t> half_cube_;
    bool records_valid_ = false;
    uint64_t records_stride_ = 0;  // int8 over several K parts: the zero-bias records' offset
    int32_t records_zp_ = 0;
};

}  // namespace rknn::matmul
