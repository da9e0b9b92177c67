// CNA + CORE: the convolution front end. Reads the CNA and CORE registers of
// the executer groups, fetches the input cube and the weights through the
// DMA port, and produces the accumulator cube the DPU post-processes.
//
// Register model (docs/emulator.md has the details and their sources):
//   CONV_CON1      CONV_MODE 0 direct / 3 depthwise, IN/PROC_PRECISION int8 or fp16,
//                  NONALIGN_DMA + ARGB_IN: channel-packed (image) input
//   CONV_CON3      strides (the value is the stride); dilation/deconv unsupported
//   DATA_SIZE0/1   input width/height, channels (aligned) and real channels - 1
//   WEIGHT_SIZE2   kernel width/height and kernel count; DCOMP_ADDR0 the weights
//   PAD_CON0/1     top/left padding (bottom/right implied by the output size),
//                  pad value (int8: a 16-bit pattern, even lanes low byte)
//   DMA_CON1/2     input row stride = LINE_STRIDE * 4 bytes; surface stride =
//                  (LINE_STRIDE + SURF_STRIDE) * 16 bytes
//   CVT_CON0..5    input converter ((x + offset) * scale >> truncate), or bypass
//   CORE DATAOUT   output width/height/channels; CLIP_TRUNCATE the accumulator shift
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "base/gemm_f32.h"
#include "base/status.h"
#include "base/uninit_vector.h"
#include "emulator/kernels/gemm_s8.h"
#include "emulator/task_context.h"

namespace rknn::emulator {

struct ConvOutput {
    int width = 0;
    int height = 0;
    int channels = 0;        // output channels the DPU processes (aligned)
    bool is_float = false;
    UninitVector<int32_t> acc;  // int8 path: [pixel][channel], after CLIP_TRUNCATE
    std::vector<float> facc;    // fp16 path: [pixel][channel]
    // Sum of the input values under each window (pad included), for the DPU's
    // weight-zero-point term: [pixel] for direct, [pixel][channel] for depthwise.
    UninitVector<int32_t> window_sum;
    bool window_sum_per_channel = false;
    // The input bytes the task reads (the DPU must not write over them while
    // rows are still being computed).
    uint64_t input_base = 0;
    uint64_t input_span = 0;
    // Whether the accumulators went to a ConvRowSink as bands of rows.
    bool rows_delivered = false;
};

// Takes a convolution's accumulators a band of output rows at a time, as the
// bands are done (the DPU, which then reads them while they are in cache).
class ConvRowSink {
public:
    virtual ~ConvRowSink() = default;
    // Called once the output's shape and input are known, before any rows.
    // Sets *by_rows when the sink takes rows; otherwise the caller runs the
    // whole output through it afterwards.
    virtual Status begin(const ConvOutput& out, bool* by_rows) = 0;
    // Rows [y0, y1) of the output begin() saw are final. Called from the
    // host threads, for disjoint bands.
    virtual void rows(int y0, int y1) = 0;
};

// How the GEMM reads a direct task's windows, and so the order of k in its
// weights: im2col rows of the padded image (window order), the input cube
// itself (window order, in groups of 4 k), or the kernel rows of a padded
// channel-packed image (conv_cube.h).
enum class WeightLayout { kWindows = 0, kPackedImageRows = 1, kCubeGroups = 2 };

// The weights of a direct int8 task ready for the GEMM. Reduction columns
// whose weight is zero in every kernel add nothing to any output (the
// channels a channel-packed image pads each pixel to, say); when they are
// most of the columns they are left out of the product, and `columns` lists
// those kept, in order: im2col columns, or groups of 4 for the cube.
struct DirectWeightsS8 {
    PackedWeightsS8 gemm;
    std::vector<uint32_t> columns;  // empty: every column
    WeightLayout layout = WeightLayout::kWindows;  // the layout packed
};

// A depthwise int8 task's weights: widened per surface ([surface][tap][lane]
// int32), and where the tap-group kernel runs (kernels/depthwise_s8.h) its
// form as well, depthwise_band_weight_words() per surface.
struct DepthwiseWeightsS8 {
    std::vector<int32_t> widened;
    std::vector<int32_t> tap_groups;  // empty: the kernel does not run here, or not for this window
};

// Scratch memory reused from task to task on one core.
// Packed int8 weights of earlier tasks, kept with a copy of the bytes they
// were packed from: a task whose weights (same address, same layout) still
// hold those bytes reuses the packing. A use compares the bytes unless the
// DMA port's version of their buffer is the one they were last found equal
// at, so the result is what unpacking again would give.
struct PackedWeightCache {
    struct Entry {
        std::vector<uint8_t> source;
        uint64_t version = 0;  // DmaPort::content_version when last known equal (0: unknown)
        uint64_t charge = 0;   // bytes counted against the cache's budget
        DirectWeightsS8 packed;          // a direct int8 task's
        DepthwiseWeightsS8 depthwise;    // a depthwise task's
        PackedGemmB fp16;                // a direct fp16 task's, as float32 panels
    };
    // Direct int8: (address, kh, kw, in_c, kernels, output channels, layout,
    // real channels of a packed image); depthwise: (address, kh, kw, in_c,
    // channels, atom bytes, kDepthwiseSurfaces, 0); direct fp16: (address,
    // kh, kw, in_c, kernels, kernels used, kDirectFp16, 0).
    using Key = std::tuple<uint64_t, int, int, int, int, int, int, int>;
    std::map<Key, Entry> entries;
    size_t bytes = 0;
};
constexpr int kDepthwiseSurfaces = -1;  // the layout field of depthwise keys
constexpr int kDirectFp16 = -2;         // the layout field of direct fp16 keys

struct ConvScratch {
    UninitVector<uint8_t> image;    // the padded int8 input, as an image or a cube (every byte rewritten per task)
    std::vector<int8_t> weights;    // weights unpacked to [kernel][k]
    std::vector<float> fweights;
    DirectWeightsS8 packed;
    PackedGemmB fpacked;  // fp16 weights too large for the cache
    PackedWeightCache weight_cache;
    // The cube datapaths (conv_cube.h): GEMM row addresses and k-group
    // offsets, depthwise weights widened per surface and tap offsets.
    UninitVector<const uint8_t*> rows;
    std::vector<uint32_t> offsets;
    DepthwiseWeightsS8 dw_weights;
    std::vector<int64_t> tap_offsets;
    std::vector<uint8_t> pad_atoms;  // the depthwise tap-group kernel's pad atom per surface
};

// int8 tasks whose input reaches the MAC array as stored read it in place
// (conv_cube.h) and give the same bytes as the general paths, which build a
// padded image first. On by default; tests turn them off (process-wide) to
// check the general paths too.
void set_conv_cube_paths(bool enabled);
// Tasks that took a cube path so far in this process (for tests).
uint64_t conv_cube_path_tasks();

// `sink` (may be null) is offered the accumulators by rows.
Status run_conv_unit(TaskContext& ctx, bool want_window_sum, ConvScratch* scratch, ConvOutput* out,
                     ConvRowSink* sink = nullptr);

}  // namespace rknn::emulator
