// Small, known-good NPU programs for driver tests: a DPU-only element-wise
// task (op-enable 0x18) and a PPU pooling task (0x60) on int8 cubes in
// NC1HWC2 layout (C2 = 16), built with hw::RegcmdBuilder, plus the results
// they must produce.
#pragma once

#include <cstdint>
#include <vector>

#include "hw/regcmd.h"

namespace rknn::driver::testing {

struct CubeShape {
    int width;
    int height;
    int channels;
};

constexpr int kC2 = 16;
uint64_t cube_bytes(const CubeShape& s);
size_t cube_offset(const CubeShape& s, int c, int y, int x);

constexpr uint32_t kDpuEnable = 0x18;   // DPU | DPU_RDMA
constexpr uint32_t kPpuEnable = 0x60;   // PPU | PPU_RDMA
constexpr uint32_t kDpuIntMask = 0x300; // DPU_0 | DPU_1
constexpr uint32_t kPpuIntMask = 0xc00; // PPU_0 | PPU_1

// out = saturate_int8(in + addend). `next_addr`/`next_amount` chain a
// following task (0: last task).
hw::RegcmdBuilder dpu_add_task(uint32_t in, uint32_t out, const CubeShape& shape, int32_t addend,
                               uint32_t next_addr = 0, uint32_t next_amount = 0);
// Max pool with a square window of `kernel` and the same stride.
hw::RegcmdBuilder ppu_max_pool_task(uint32_t in, uint32_t out, const CubeShape& in_shape, int kernel,
                                    uint32_t next_addr = 0, uint32_t next_amount = 0);

// Deterministic int8 test data (a fixed pattern, no RNG state).
std::vector<uint8_t> pattern_bytes(size_t count, int seed);
std::vector<uint8_t> expected_add(const std::vector<uint8_t>& in, int32_t addend);
std::vector<uint8_t> expected_max_pool(const std::vector<uint8_t>& in, const CubeShape& in_shape, int kernel);

// Stream bytes of a builder (little-endian 64-bit words).
std::vector<uint8_t> stream_bytes(const hw::RegcmdBuilder& b);

}  // namespace rknn::driver::testing
