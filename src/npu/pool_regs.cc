#include "npu/pool_regs.h"

#include <algorithm>

#include "base/half.h"
#include "cpu/int8/requant.h"
#include "npu/native_layout.h"

namespace rknn::npu {

namespace f = hw::field;
namespace r = hw::reg;

namespace {

// What differs between the SoCs' pool tasks: the cube they read and write.
struct PoolLayout {
    int channels = 0;           // the aligned channel count the PPU processes
    int read_w = 0, read_h = 0;  // the input extent read
    uint32_t pad_right = 0, pad_bottom = 0;
    uint32_t line = 0, surf = 0, dst_surf = 0;  // bytes
    uint32_t recip = 0;
};

void emit_pool_task(TaskEmitter* b, const PoolTask& p, const PoolLayout& l, const BufferRef& src, const BufferRef& dst) {
    const uint32_t c = static_cast<uint32_t>(l.channels - 1);
    b->write(r::PPU_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_RDMA_RDMA_S_POINTER, hw::s_pointer::kPingPong);
    b->write(r::PPU_DATA_CUBE_IN_WIDTH, static_cast<uint32_t>(l.read_w - 1));
    b->write(r::PPU_DATA_CUBE_IN_HEIGHT, static_cast<uint32_t>(l.read_h - 1));
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
    b->write(r::PPU_RECIP_KERNEL_WIDTH, p.method == 0 ? l.recip : 0);
    b->write(r::PPU_RECIP_KERNEL_HEIGHT, p.method == 0 ? l.recip : 0);
    const uint32_t pad = static_cast<uint32_t>(p.pad);
    b->write_fields(r::PPU_POOLING_PADDING_CFG, {{f::PPU_POOLING_PADDING_CFG_PAD_LEFT, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_TOP, pad},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_RIGHT, l.pad_right},
                                                 {f::PPU_POOLING_PADDING_CFG_PAD_BOTTOM, l.pad_bottom}});
    b->write(r::PPU_PADDING_VALUE_1_CFG, static_cast<uint32_t>(p.pad_value));
    b->address(r::PPU_DST_BASE_ADDR, dst);
    b->write(r::PPU_DST_SURF_STRIDE, l.dst_surf);
    b->write_fields(r::PPU_DATA_FORMAT, {{f::PPU_DATA_FORMAT_PROC_PRECISION, p.fp16 ? 2u : 0u}});
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_WIDTH, static_cast<uint32_t>(l.read_w - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_HEIGHT, static_cast<uint32_t>(l.read_h - 1));
    b->write(r::PPU_RDMA_RDMA_CUBE_IN_CHANNEL, c);
    b->address(r::PPU_RDMA_RDMA_SRC_BASE_ADDR, src);
    b->write(r::PPU_RDMA_RDMA_SRC_LINE_STRIDE, l.line);
    b->write(r::PPU_RDMA_RDMA_SRC_SURF_STRIDE, l.surf);
    b->write(r::PPU_RDMA_RDMA_DATA_FORMAT, p.fp16 ? 2u : 1u);
}

// The reference's Q16 reciprocal of the window (fp16: the vendor's fp16(65536 / k)).
uint32_t reciprocal(const PoolTask& p) {
    return p.fp16 ? float_to_half(65536.0f / static_cast<float>(p.k))
                  : static_cast<uint32_t>(cpu::int8::round_even(65536.0 / p.k));
}

}  // namespace

void emit_pool(TaskEmitter* b, const PoolTask& p, const BufferRef& src, const BufferRef& dst) {
    PoolLayout l;
    l.channels = align_up(p.c, p.fp16 ? 8 : 16);
    l.read_w = p.in_w;
    l.read_h = p.in_h;
    l.pad_right = static_cast<uint32_t>(p.pad + p.extra_w);
    l.pad_bottom = static_cast<uint32_t>(p.pad + p.extra_h);
    l.line = static_cast<uint32_t>(p.in_w * 16);
    l.surf = static_cast<uint32_t>(p.in_w * p.in_h * 16);
    l.dst_surf = static_cast<uint32_t>(p.out_h() * p.out_w() * 16);
    l.recip = reciprocal(p);
    emit_pool_task(b, p, l, src, dst);
}

void emit_pool_rk356x(TaskEmitter* b, const PoolTask& p, const BufferRef& src, const BufferRef& dst) {
    constexpr int kAtom = 8;
    PoolLayout l;
    l.channels = align_up(p.c, kAtom);
    // The extent the windows consume (the vendor clips CUBE_IN to it), and
    // the padding after it that they need.
    l.read_w = std::min(p.in_w, (p.out_w() - 1) * p.stride + p.k - p.pad);
    l.read_h = std::min(p.in_h, (p.out_h() - 1) * p.stride + p.k - p.pad);
    l.pad_right = static_cast<uint32_t>(std::max(0, (p.out_w() - 1) * p.stride + p.k - p.pad - l.read_w));
    l.pad_bottom = static_cast<uint32_t>(std::max(0, (p.out_h() - 1) * p.stride + p.k - p.pad - l.read_h));
    l.line = static_cast<uint32_t>(p.in_w * kAtom);
    l.surf = static_cast<uint32_t>(rk356x_surface_bytes(p.in_h, p.in_w));
    l.dst_surf = static_cast<uint32_t>(rk356x_surface_bytes(p.out_h(), p.out_w()));
    // The reference's reciprocal: the vendor's floor(65536 / k) differs for some k.
    l.recip = reciprocal(p);
    emit_pool_task(b, p, l, src, dst);
}

}  // namespace rknn::npu
