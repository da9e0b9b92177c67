#include "npu_programs.h"

#include <algorithm>
#include <cstring>

namespace rknn::driver::testing {

namespace f = hw::field;
namespace r = hw::reg;
namespace oe = hw::op_enable;

namespace {
uint32_t minus_one(int v) { return static_cast<uint32_t>(v - 1); }
}  // namespace

uint64_t cube_bytes(const CubeShape& s) {
    const int surfaces = (s.channels + kC2 - 1) / kC2;
    return static_cast<uint64_t>(surfaces) * s.width * s.height * kC2;
}

size_t cube_offset(const CubeShape& s, int c, int y, int x) {
    const size_t surface = static_cast<size_t>(s.width) * s.height * kC2;
    return static_cast<size_t>(c / kC2) * surface + (static_cast<size_t>(y) * s.width + x) * kC2 + c % kC2;
}

hw::RegcmdBuilder dpu_add_task(uint32_t in, uint32_t out, const CubeShape& s, int32_t addend, uint32_t next_addr,
                               uint32_t next_amount) {
    hw::RegcmdBuilder b;
    // DPU_RDMA reads the input cube from memory ("flying" mode).
    b.write_fields(r::DPU_RDMA_RDMA_DATA_CUBE_WIDTH, {{f::DPU_RDMA_RDMA_DATA_CUBE_WIDTH_WIDTH, minus_one(s.width)}});
    b.write_fields(r::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT, {{f::DPU_RDMA_RDMA_DATA_CUBE_HEIGHT_HEIGHT, minus_one(s.height)}});
    b.write_fields(r::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL,
                   {{f::DPU_RDMA_RDMA_DATA_CUBE_CHANNEL_CHANNEL, minus_one(s.channels)}});
    b.write(r::DPU_RDMA_RDMA_SRC_BASE_ADDR, in);
    b.write_fields(r::DPU_RDMA_RDMA_FEATURE_MODE_CFG, {{f::DPU_RDMA_RDMA_FEATURE_MODE_CFG_FLYING_MODE, 1}});
    // DPU: int8 in, int8 out, write to memory.
    b.write_fields(r::DPU_FEATURE_MODE_CFG,
                   {{f::DPU_FEATURE_MODE_CFG_FLYING_MODE, 1}, {f::DPU_FEATURE_MODE_CFG_OUTPUT_MODE, 2}});
    b.write(r::DPU_DATA_FORMAT, 0);
    b.write(r::DPU_DST_BASE_ADDR, out);
    b.write_fields(r::DPU_DATA_CUBE_WIDTH, {{f::DPU_DATA_CUBE_WIDTH_WIDTH, minus_one(s.width)}});
    b.write_fields(r::DPU_DATA_CUBE_HEIGHT, {{f::DPU_DATA_CUBE_HEIGHT_HEIGHT, minus_one(s.height)}});
    // ORIG_CHANNEL: the real channel count (lanes beyond it are written as zero).
    b.write_fields(r::DPU_DATA_CUBE_CHANNEL, {{f::DPU_DATA_CUBE_CHANNEL_CHANNEL, minus_one(s.channels)},
                                              {f::DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, minus_one(s.channels)}});
    // BS and BN bypassed; EW adds the register operand.
    b.write_fields(r::DPU_BS_CFG, {{f::DPU_BS_CFG_BS_BYPASS, 1}});
    b.write_fields(r::DPU_BN_CFG, {{f::DPU_BN_CFG_BN_BYPASS, 1}});
    b.write_fields(r::DPU_EW_CFG, {{f::DPU_EW_CFG_EW_ALU_ALGO, 2},  // add
                                   {f::DPU_EW_CFG_EW_OP_CVT_BYPASS, 1},
                                   {f::DPU_EW_CFG_EW_LUT_BYPASS, 1},
                                   {f::DPU_EW_CFG_EW_RELU_BYPASS, 1}});
    b.write(r::DPU_EW_OP_VALUE_0, static_cast<uint32_t>(addend));
    // OUT_CVT: x * 1 >> 0 + 0.
    b.write(r::DPU_OUT_CVT_OFFSET, 0);
    b.write_fields(r::DPU_OUT_CVT_SCALE, {{f::DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, 1}});
    b.write(r::DPU_OUT_CVT_SHIFT, 0);
    b.tail(next_addr, next_amount, oe::kDpu | oe::kDpuRdma);
    return b;
}

hw::RegcmdBuilder ppu_max_pool_task(uint32_t in, uint32_t out, const CubeShape& s, int kernel, uint32_t next_addr,
                                    uint32_t next_amount) {
    const int ow = s.width / kernel;
    const int oh = s.height / kernel;
    hw::RegcmdBuilder b;
    b.write_fields(r::PPU_RDMA_RDMA_CUBE_IN_WIDTH, {{f::PPU_RDMA_RDMA_CUBE_IN_WIDTH_CUBE_IN_WIDTH, minus_one(s.width)}});
    b.write_fields(r::PPU_RDMA_RDMA_CUBE_IN_HEIGHT,
                   {{f::PPU_RDMA_RDMA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT, minus_one(s.height)}});
    b.write_fields(r::PPU_RDMA_RDMA_CUBE_IN_CHANNEL,
                   {{f::PPU_RDMA_RDMA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL, minus_one(s.channels)}});
    b.write(r::PPU_RDMA_RDMA_SRC_BASE_ADDR, in);
    b.write(r::PPU_RDMA_RDMA_DATA_FORMAT, 0);
    b.write_fields(r::PPU_DATA_CUBE_IN_WIDTH, {{f::PPU_DATA_CUBE_IN_WIDTH_CUBE_IN_WIDTH, minus_one(s.width)}});
    b.write_fields(r::PPU_DATA_CUBE_IN_HEIGHT, {{f::PPU_DATA_CUBE_IN_HEIGHT_CUBE_IN_HEIGHT, minus_one(s.height)}});
    b.write_fields(r::PPU_DATA_CUBE_IN_CHANNEL, {{f::PPU_DATA_CUBE_IN_CHANNEL_CUBE_IN_CHANNEL, minus_one(s.channels)}});
    b.write_fields(r::PPU_DATA_CUBE_OUT_WIDTH, {{f::PPU_DATA_CUBE_OUT_WIDTH_CUBE_OUT_WIDTH, minus_one(ow)}});
    b.write_fields(r::PPU_DATA_CUBE_OUT_HEIGHT, {{f::PPU_DATA_CUBE_OUT_HEIGHT_CUBE_OUT_HEIGHT, minus_one(oh)}});
    b.write_fields(r::PPU_DATA_CUBE_OUT_CHANNEL,
                   {{f::PPU_DATA_CUBE_OUT_CHANNEL_CUBE_OUT_CHANNEL, minus_one(s.channels)}});
    b.write_fields(r::PPU_OPERATION_MODE_CFG, {{f::PPU_OPERATION_MODE_CFG_POOLING_METHOD, 1}});  // max
    b.write_fields(r::PPU_POOLING_KERNEL_CFG, {{f::PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH, minus_one(kernel)},
                                               {f::PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT, minus_one(kernel)},
                                               {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH, minus_one(kernel)},
                                               {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT, minus_one(kernel)}});
    b.write(r::PPU_POOLING_PADDING_CFG, 0);
    b.write(r::PPU_DST_BASE_ADDR, out);
    b.write(r::PPU_DATA_FORMAT, 0);
    b.tail(next_addr, next_amount, oe::kPpu | oe::kPpuRdma);
    return b;
}

std::vector<uint8_t> pattern_bytes(size_t count, int seed) {
    std::vector<uint8_t> bytes(count);
    for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>((i * 37 + static_cast<size_t>(seed) * 101 + 11) & 0xff);
    return bytes;
}

std::vector<uint8_t> expected_add(const std::vector<uint8_t>& in, int32_t addend) {
    std::vector<uint8_t> out(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        const int v = std::clamp(static_cast<int8_t>(in[i]) + addend, -128, 127);
        out[i] = static_cast<uint8_t>(static_cast<int8_t>(v));
    }
    return out;
}

std::vector<uint8_t> expected_max_pool(const std::vector<uint8_t>& in, const CubeShape& s, int kernel) {
    const CubeShape o{s.width / kernel, s.height / kernel, s.channels};
    std::vector<uint8_t> out(cube_bytes(o), 0);
    for (int c = 0; c < s.channels; ++c) {
        for (int oy = 0; oy < o.height; ++oy) {
            for (int ox = 0; ox < o.width; ++ox) {
                int best = -128;
                for (int ky = 0; ky < kernel; ++ky) {
                    for (int kx = 0; kx < kernel; ++kx) {
                        best = std::max<int>(best, static_cast<int8_t>(in[cube_offset(s, c, oy * kernel + ky, ox * kernel + kx)]));
                    }
                }
                out[cube_offset(o, c, oy, ox)] = static_cast<uint8_t>(static_cast<int8_t>(best));
            }
        }
    }
    return out;
}

std::vector<uint8_t> stream_bytes(const hw::RegcmdBuilder& b) {
    std::vector<uint8_t> bytes(b.words().size() * 8);
    std::memcpy(bytes.data(), b.words().data(), bytes.size());
    return bytes;
}

}  // namespace rknn::driver::testing
