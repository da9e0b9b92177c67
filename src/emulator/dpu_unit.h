// DPU + DPU_RDMA: the post-processing pipeline and the output write.
//
// Input is either the accumulator cube of the convolution that ran in the
// same task, or (FLYING_MODE = 1) a cube the DPU_RDMA reads from memory, for
// element-wise and activation tasks. Per element, in order (hw-facts 3.8):
//   BS   [+ OW_OP * window sum] -> ALU (per-channel or register operand) ->
//        MUL (>> shift; PRELU: negative values only) -> ReLU -> ReLU-X
//   BN   MUL -> ALU -> ReLU -> ReLU-X
//   EW   operand (ERDMA tensor or register) through its converter -> ALU or
//        MUL -> LUT -> ReLU -> ReLU-X
//   OUT_CVT  (x * SCALE) >> SHIFT (rounded per CVT_ROUND) + OFFSET, saturated
//            to the output precision
// then written as an NC1HWC2 cube at DST_BASE_ADDR. The integer pipeline is
// exact; the float pipeline computes in fp32 and rounds once to the output.
#pragma once

#include <cstdint>
#include <memory>

#include "base/status.h"
#include "emulator/conv_unit.h"
#include "emulator/task_context.h"

namespace rknn::emulator {

// Whether the BS stage of the executer group wants the window sum (the
// weight-zero-point term), so the convolution can compute it.
bool dpu_wants_window_sum(const RegisterFile& regs);

// `conv` is the convolution's output, or nullptr for a DPU-only task.
Status run_dpu_unit(TaskContext& ctx, const ConvOutput* conv);

// The DPU half of a convolution task, decoded once the convolution's output
// shape is known (begin), so that it can take the accumulators by bands of
// rows while they are in cache; finish() runs what was not taken that way.
// Gives the bytes run_dpu_unit gives. One per core, reused from task to task.
class DpuRowPass final : public ConvRowSink {
public:
    DpuRowPass();
    ~DpuRowPass() override;
    DpuRowPass(const DpuRowPass&) = delete;
    DpuRowPass& operator=(const DpuRowPass&) = delete;

    // Starts a task on `ctx`.
    void reset(TaskContext* ctx);
    Status begin(const ConvOutput& out, bool* by_rows) override;
    void rows(int y0, int y1) override;
    Status finish(const ConvOutput& out);

private:
    struct State;
    std::unique_ptr<State> state_;
    TaskContext* ctx_ = nullptr;
};

// Integer tasks of the usual shape take a fused pass (kernels/dpu_requant.h)
// that gives the same bytes as the general pipeline, faster. On by default;
// tests and benchmarks turn it off (process-wide) to compare the two.
void set_dpu_fused_passes(bool enabled);
// Tasks that took the fused pass so far in this process (for tests).
uint64_t dpu_fused_pass_tasks();
// How many task row bands ran in the int32 lanes of an int8 source
// (kernels/dpu_int8_lanes.h), for tests.
uint64_t dpu_int8_lane_bands();

// Per-channel operand records read by BRDMA/NRDMA (our reading of
// BRDMA_DATA_USE; see docs/emulator.md): DATA_USE 1 reads 4 bytes per
// channel (the ALU operand); any other non-zero value reads 8 bytes per
// channel: ALU operand (32 bits) at 0, MUL operand (16 bits) at 4, OW
// operand (16 bits) at 6.
namespace bs_record {
constexpr uint32_t kUseAlu = 1;
constexpr uint32_t kUseAluMul = 3;
constexpr uint32_t kUseAll = 7;
constexpr int kAluOnlyBytes = 4;
constexpr int kFullBytes = 8;
constexpr int kMulOffset = 4;
constexpr int kOwOffset = 6;
}  // namespace bs_record

}  // namespace rknn::emulator
