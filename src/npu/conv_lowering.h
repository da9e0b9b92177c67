// Lowers one convolution layer to NPU tasks for a SoC profile: splits it to
// fit the on-chip convolution buffer (CBUF) and across the cores a mask
// selects, then emits each tile's registers (conv_regs.h).
//
// Tiling (spec/hw-facts.md 3.9): the weights stay resident when they fit
// next to the input rows one output row needs; otherwise the output kernels
// are split into groups that fit. The input is split into bands of output
// rows, each band holding as many input rows as the data banks take (the
// (kernel - stride) row halo included, the first band's padding saving rows
// as Mesa's band arithmetic does); tiles on one core
// that keep the same weights set WEIGHT_REUSE. Multi-core: the output rows
// are divided between the selected cores, each core its own chain of tasks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "hw/soc_profile.h"
#include "npu/conv_regs.h"
#include "npu/dpu_regs.h"
#include "npu/program.h"

namespace rknn::npu {

struct ConvPlan {
    int data_banks = 0, weight_banks = 0;
    int kernels_per_task = 0;   // output channels one task computes
    int input_rows_per_task = 0;  // input rows (halo included) one task's band may hold
    std::array<std::vector<ConvTile>, kMaxProgramCores> per_core;  // tiles in execution order
    size_t task_count() const;
};

// Whether the layer may read a channel-packed NHWC input
// (ConvGeometry::packed_row_pixels) on an NPU of `arch`: RK3588, direct
// convolutions of 1, 3 or 4 channels whose kernel rows fit one packed band
// (W x kh <= 16383); RK356x, int8 direct convolutions of 3 channels (ARGB).
bool can_read_packed_input(const ConvGeometry& g, hw::NpuArch arch);

// kUnimplemented (with the reason) when the layer cannot be tiled for the
// SoC: an input row band for one output row, or one kernel group, does not fit.
StatusOr<ConvPlan> plan_conv(const ConvGeometry& g, const hw::SocProfile& soc, uint32_t core_mask);

// An int8 convolution with its epilogue; `addresses` name the layer's buffers.
struct Int8ConvLayer {
    ConvGeometry geometry;
    int8_t input_zp = 0;
    EpilogueRegs epilogue;
    ConvAddresses addresses;
};

// Appends the layer's tasks to `program` (core_mask 0 means core 0 alone).
Status lower_conv_int8(const Int8ConvLayer& layer, const hw::SocProfile& soc, uint32_t core_mask,
                       ProgramBuilder* program);

// An fp16 convolution (fp16 or fp32 output) with its float epilogue.
Status lower_conv_fp16(const ConvGeometry& g, const ConvAddresses& addresses, bool fp32_out, const hw::SocProfile& soc,
                       uint32_t core_mask, ProgramBuilder* program, const FloatEpilogue& epilogue = {});

}  // namespace rknn::npu
