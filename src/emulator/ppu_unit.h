// PPU + PPU_RDMA: pooling (hw-facts 3.5, 4.1; golden ppu-rknn-capture).
//
//   input   PPU_RDMA: SRC_BASE_ADDR, SRC_LINE_STRIDE / SRC_SURF_STRIDE (bytes)
//   window  POOLING_KERNEL_CFG (sizes and strides, minus one), padding counts
//           L/T/R/B; padded taps read PADDING_VALUE
//   method  OPERATION_MODE_CFG: 0 average, 1 max, 2 min
//   average integer data: round_half_even(sum * RECIP_W * RECIP_H / 2^32) with
//           Q16 reciprocals; fp16 data: the reciprocals are fp16 bit patterns
//   output  DST_BASE_ADDR, DST_SURF_STRIDE (bytes), same precision as the input
// Every window must lie inside input + padding (the hardware hangs otherwise):
// such a program is reported as an error.
#pragma once

#include "base/status.h"
#include "emulator/task_context.h"

namespace rknn::emulator {

Status run_ppu_unit(TaskContext& ctx);

}  // namespace rknn::emulator
