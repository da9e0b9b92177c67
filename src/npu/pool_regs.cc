#include "npu/pool_regs.h"

#include <algorithm>

#include "base/half.h"
#include "cpu/int8/requant.h"
#include "npu/native_layout.h"

namespace rknn::npu {

namespace f = hw::field;
namespace r = hw::reg;

void emit_pool(TaskEmitter* b, const PoolTask& p, const BufferRef& src, const BufferRef& dst) {
    const int c2 = p.fp16 ? 8 : 16;
    const uint32_t c = static_cast<uint32_t>(align_up(p.c, c2) - 1);
    b->write(r::PPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_DATA_CUBE_IN_WIDTH, static_cast<uint32_t>(p.in_w - 1));
    b->write(r::PPU_DATA_CUBE_IN_HEIGHT, static_cast<uint32_t>(p.in_h - 1));
    b->write(r::PPU_DATA_CUBE_IN_CHANNEL, c);
    b->write(r::PPU_DATA_CUBE_OUT_WIDTH, static_cast<uint32_t>(p.out_w() - 1));
    b->write(r::PPU_DATA_CUBE_OUT_HEIGHT, static_cast<uint32_t>(p.out_h() - 1));
    b->write(r::PPU_DATA_CUBE_OUT_CHANNEL, c);
    b->write_fields(r::PPU_OPERATION_MODE_CFG, {{f::PPU_OPERATION_MODE_CFG_POOLING_METHOD, static_cast<uint32_t>(p.method)},
                                                {f::PPU_OPERATION_MODE_CFG_FLYING_MODE, 1}});
    const uint32_t k = static_cast<uint32_t>(p.k - 1), s = static_cast<uint32_t>(p.stride - 1);
    b->write_fields(r::PPU_POOLING_KERNEL_CFG, {{f::PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH, k},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT, k},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH, s},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT, s}});
    const uint32_t recip = p.fp16 ? float_to_half(65536.0f / static_cast<float>(p.k))
                                  : static_cast<uint32_t>(cpu::int8::round_even(65536.0 / p.k));
    b->write(r::PPU_RECIP_KERNEL_WIDTH, p.method == 0 ? recip : 0);
    b->write(r::PPU_RECIP_KERNEL_HEIGHT, p.method == 0 ? recip : 0);
    const uint32_t pad = static_cast<uint32_t>(p.pad);
    b->write_fields(r::PPU_POOLING_PADDING_CFG, {{f::PPU_POOLING_PADDING_CFG_PAD_LEFT, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_TOP, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_RIGHT, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_BOTTOM, pad}});
    b->write(r::PPU_PADDING_VALUE_1_CFG, static_cast<uint32_t>(p.pad_value));
    b->address(r::PPU_DST_BASE_ADDR, dst);
    b->write(r::PPU_DST_SURF_STRIDE, static_cast<uint32_t>(p.out_h() * p.out_w() * 16));
    b->write_fields(r::PPU_DATA_FORMAT, {{f::PPU_DATA_FORMAT_PROC_PRECISION, p.fp16 ? 2u : 0u}});
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_WIDTH, static_cast<uint32_t>(p.in_w - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_HEIGHT, static_cast<uint32_t>(p.in_h - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_CHANNEL, c);
    b->address(r::PPU_RDMA_RDMA_SRC_BASE_ADDR, src);
    b->write(r::PPU_RDMA_RDMA_SRC_LINE_STRIDE, static_cast<uint32_t>(p.in_w * 16));
    b->write(r::PPU_RDMA_RDMA_SRC_SURF_STRIDE, static_cast<uint32_t>(p.in_w * p.in_h * 16));
    b->write(r::PPU_RDMA_RDMA_DATA_FORMAT, p.fp16 ? 2u : 1u);
}

void emit_pool_rk356x(TaskEmitter* b, const PoolTask& p, const BufferRef& src, const BufferRef& dst) {
    constexpr int kAtom = 8;
    const uint32_t c = static_cast<uint32_t>(align_up(p.c, kAtom) - 1);
    // The extent the windows consume (the vendor clips CUBE_IN to it).
    const int used_w = std::min(p.in_w, (p.out_w() - 1) * p.stride + p.k - p.pad);
    const int used_h = std::min(p.in_h, (p.out_h() - 1) * p.stride + p.k - p.pad);
    const auto pad_after = [&](int out, int used) {
        return static_cast<uint32_t>(std::max(0, (out - 1) * p.stride + p.k - p.pad - used));
    };
    b->write(r::PPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_DATA_CUBE_IN_WIDTH, static_cast<uint32_t>(used_w - 1));
    b->write(r::PPU_DATA_CUBE_IN_HEIGHT, static_cast<uint32_t>(used_h - 1));
    b->write(r::PPU_DATA_CUBE_IN_CHANNEL, c);
    b->write(r::PPU_DATA_CUBE_OUT_WIDTH, static_cast<uint32_t>(p.out_w() - 1));
    b->write(r::PPU_DATA_CUBE_OUT_HEIGHT, static_cast<uint32_t>(p.out_h() - 1));
    b->write(r::PPU_DATA_CUBE_OUT_CHANNEL, c);
    b->write_fields(r::PPU_OPERATION_MODE_CFG, {{f::PPU_OPERATION_MODE_CFG_POOLING_METHOD, static_cast<uint32_t>(p.method)},
                                                {f::PPU_OPERATION_MODE_CFG_FLYING_MODE, 1}});
    const uint32_t k = static_cast<uint32_t>(p.k - 1), s = static_cast<uint32_t>(p.stride - 1);
    b->write_fields(r::PPU_POOLING_KERNEL_CFG, {{f::PPU_POOLING_KERNEL_CFG_KERNEL_WIDTH, k},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_HEIGHT, k},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_WIDTH, s},
                                                {f::PPU_POOLING_KERNEL_CFG_KERNEL_STRIDE_HEIGHT, s}});
    // The reference's Q16 reciprocal (the vendor's floor(65536 / k) differs for some k).
    const auto recip = static_cast<uint32_t>(cpu::int8::round_even(65536.0 / p.k));
    b->write(r::PPU_RECIP_KERNEL_WIDTH, p.method == 0 ? recip : 0);
    b->write(r::PPU_RECIP_KERNEL_HEIGHT, p.method == 0 ? recip : 0);
    const uint32_t pad = static_cast<uint32_t>(p.pad);
    b->write_fields(r::PPU_POOLING_PADDING_CFG, {{f::PPU_POOLING_PADDING_CFG_PAD_LEFT, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_TOP, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_RIGHT, pad_after(p.out_w(), used_w)},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_BOTTOM, pad_after(p.out_h(), used_h)}});
    b->write(r::PPU_PADDING_VALUE_1_CFG, static_cast<uint32_t>(p.pad_value));
    b->address(r::PPU_DST_BASE_ADDR, dst);
    b->write(r::PPU_DST_SURF_STRIDE, static_cast<uint32_t>(rk356x_surface_bytes(p.out_h(), p.out_w())));
    b->write_fields(r::PPU_DATA_FORMAT, {{f::PPU_DATA_FORMAT_PROC_PRECISION, 0}});
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_WIDTH, static_cast<uint32_t>(used_w - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_HEIGHT, static_cast<uint32_t>(used_h - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_CHANNEL, c);
    b->address(r::PPU_RDMA_RDMA_SRC_BASE_ADDR, src);
    b->write(r::PPU_RDMA_RDMA_SRC_LINE_STRIDE, static_cast<uint32_t>(p.in_w * kAtom));
    b->write(r::PPU_RDMA_RDMA_SRC_SURF_STRIDE, static_cast<uint32_t>(rk356x_surface_bytes(p.in_h, p.in_w)));
    b->write(r::PPU_RDMA_RDMA_DATA_FORMAT, 1u);
}

}  // namespace rknn::npu
