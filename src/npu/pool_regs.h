// A PPU pooling task (op-enable 0x60) over a packed int8 or fp16 cube: max,
// average (reciprocal kernel sizes) or min, with padding (spec/hw-facts.md
// 3.5; the recipe gregordinary-rockchip-npu-notes measured on a board).
#pragma once

#include <cstdint>

#include "npu/task_emitter.h"

namespace rknn::npu {

struct PoolTask {
    int method = 1;  // 0 average, 1 max, 2 min
    int k = 2, stride = 2, pad = 0;
    int in_h = 0, in_w = 0;
    int c = 0;
    int32_t pad_value = 0;
    bool fp16 = false;
    // Padding after the input beyond `pad` (bottom, right): the last windows
    // of a ceil_mode pool, which run past the input.
    int extra_h = 0, extra_w = 0;
    int out_h() const { return (in_h + 2 * pad + extra_h - k) / stride + 1; }
    int out_w() const { return (in_w + 2 * pad + extra_w - k) / stride + 1; }
};

void emit_pool(TaskEmitter* b, const PoolTask& p, const BufferRef& src, const BufferRef& dst);
// RK3566/RK3568, int8 (docs/rk3568.md 2, 5): 8-byte atoms, line and surface
// strides in bytes (W x 8, align(W x H, 4) x 8), the input cube clipped to
// the rows and columns the windows read, padding only where they need it.
void emit_pool_rk356x(TaskEmitter* b, const PoolTask& p, const BufferRef& src, const BufferRef& dst);

}  // namespace rknn::npu
