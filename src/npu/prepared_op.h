// One graph op made ready for the NPU at init: the feature tensors it reads,
// the constant data it needs in device memory (already in the NPU's layouts)
// and how to lower it once those buffers are bound. Every feature tensor (and
// the output) is an NC1HWC2 cube of its dtype (int8: C2 = 16, fp16: C2 = 8)
// in the shape cube_of_shape() gives: [1, C, H, W] as it is, an [M, K]
// matrix (or [1, M, K], a batch of one as sequence models export it) as M
// one-pixel rows of K channels (C = K, H = M, W = 1). The one
// exception: a convolution's input image may be channel-packed NHWC
// (reads_packed_input()), the form of the vendor's native inputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "hw/soc_profile.h"
#include "npu/program.h"
#include "npu/task_emitter.h"

namespace rknn::npu {

struct CubeShape {
    int c = 0, h = 0, w = 0;
};
// false for shapes that are neither [1, C, H, W], [M, K] nor [1, M, K].
bool cube_of_shape(const graph::Shape& shape, CubeShape* cube);
// Whether `shape` is a matrix to the NPU: [M, K], or [1, M, K].
bool is_matrix(const graph::Shape& shape);
// M for a matrix of M > 1 rows ([M, K] or [1, M, K]), whose cube orders its
// values unlike the tensor; 0 for every other shape.
int64_t matrix_rows(const graph::Shape& shape);
// A matrix's values are row-major [M][K] while a cube's NCHW order is
// channel-major [K][M]: the values in the cube's NCHW order (and back), for
// elements of `elem_bytes`. Other shapes are already in cube order.
std::vector<uint8_t> to_cube_order(const void* data, const graph::Shape& shape, size_t elem_bytes);
std::vector<uint8_t> from_cube_order(const void* data, const graph::Shape& shape, size_t elem_bytes);

struct OpBuffers {
    std::vector<BufferRef> features;   // one per feature_inputs() entry
    std::vector<BufferRef> constants;  // one per constants() entry
    BufferRef output;
    BufferRef scratch;  // scratch_bytes() of device memory, when the op asks for any
    // > 0: features[0] is a channel-packed NHWC image with rows this many
    // pixels apart (npu/native_layout.h), for ops that reads_packed_input().
    int packed_row_pixels = 0;
};

class PreparedOp {
public:
    virtual ~PreparedOp() = default;
    // Indices into op.inputs of the tensors read from memory, in binding order.
    const std::vector<int>& feature_inputs() const { return feature_inputs_; }
    // Bytes the op needs in device memory besides its features, in binding order.
    const std::vector<std::vector<uint8_t>>& constants() const { return constants_; }
    // Whether feature 0 may be a channel-packed NHWC image instead of a cube
    // (OpBuffers::packed_row_pixels): direct convolutions of 1, 3 or 4 channels
    // (RK356x: 3, with the weights for that read among the constants).
    virtual bool reads_packed_input() const { return false; }
    // Whether a task of the op ends on the PPU (its interrupt, not the DPU's).
    virtual bool uses_ppu() const { return false; }
    // Device memory the op's tasks pass data through (0: none).
    virtual size_t scratch_bytes() const { return 0; }
    // Appends the op's tasks to `program`.
    virtual Status lower(const OpBuffers& buffers, const hw::SocProfile& soc, uint32_t core_mask,
                         ProgramBuilder* program) const = 0;
    // What the NPU runs, for placement logs ("convolution in 4 task(s)").
    virtual std::string describe(const hw::SocProfile& soc, uint32_t core_mask) const = 0;

protected:
    std::vector<int> feature_inputs_;
    std::vector<std::vector<uint8_t>> constants_;
};

// kUnimplemented with the reason when the NPU does not run `op` exactly as
// the int8 reference does.
// `soc` decides the constants' layouts; on RK356x only int8 Conv, Gemm,
// MatMul and pools that keep the quantisation are lowered so far (docs/codegen.md).
StatusOr<std::unique_ptr<PreparedOp>> prepare_op(const graph::Graph& g, const graph::Op& op,
                                                 const hw::SocProfile& soc = hw::default_soc());

// The same entry point per family (prepared_op.cc dispatches on the op type).
StatusOr<std::unique_ptr<PreparedOp>> prepare_conv_op(const graph::Graph& g, const graph::Op& op,
                                                      const hw::SocProfile& soc);
StatusOr<std::unique_ptr<PreparedOp>> prepare_fp16_conv_op(const graph::Graph& g, const graph::Op& op);
StatusOr<std::unique_ptr<PreparedOp>> prepare_fp16_gemm_op(const graph::Graph& g, const graph::Op& op);
StatusOr<std::unique_ptr<PreparedOp>> prepare_dpu_op(const graph::Graph& g, const graph::Op& op);
StatusOr<std::unique_ptr<PreparedOp>> prepare_pool_op(const graph::Graph& g, const graph::Op& op);

}  // namespace rknn::npu
