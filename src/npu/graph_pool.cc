// Pooling from the graph through the PPU (op-enable 0x60): MaxPool,
// GlobalMaxPool, AveragePool and GlobalAveragePool with square windows, int8
// (and fp16 maxima, which are exact).
// The PPU works on the codes and keeps the input's quantisation; when the
// output's differs, a DPU task requantises the pooled codes from a scratch
// cube (the reference requantises the pooled value once, the same way). An
// average is exact against the reference (cpu/int8/pool_int8.cc: Q16
// reciprocals of the window size) only when the zero point is 0 and no
// window reaches into padding. ceil_mode maxima take extra padding at the
// end for their last windows.
#include <algorithm>

#include "cpu/int8/requant.h"
#include "graph/spatial.h"
#include "npu/dpu_regs.h"
#include "npu/native_layout.h"
#include "npu/pool_regs.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

namespace {

using graph::OpType;

constexpr uint32_t kPpuEnable = 0x60;      // PPU | PPU_RDMA
constexpr uint32_t kPpuInterrupts = 0xc00;

Status unsupported(std::string message) { return Status(StatusCode::kUnimplemented, std::move(message)); }

class PoolOp : public PreparedOp {
public:
    PoolOp(PoolTask task, bool requantise, DpuTask requant) : task_(task), requantise_(requantise), requant_(requant) {
        feature_inputs_ = {0};
    }

    bool uses_ppu() const override { return true; }

    size_t scratch_bytes() const override {
        return requantise_ ? static_cast<size_t>(align_up(task_.c, 16)) * task_.out_h() * task_.out_w() : 0;
    }

    Status lower(const OpBuffers& buffers, const hw::SocProfile& soc, uint32_t core_mask,
                 ProgramBuilder* program) const override {
        if (buffers.features.size() != 1) return RKNN_INVALID_ARGUMENT("pool bound to %zu features", buffers.features.size());
        const int core = first_core(core_mask);
        TaskEmitter pool;
        if (soc.arch == hw::NpuArch::kRk356x) {
            // No DPU-only tasks there yet: only pools that keep the quantisation
            // (fp16 ops never get here: prepare_op keeps them on the CPU).
            if (requantise_)
                return make_status(StatusCode::kUnimplemented, "a requantising pool on %s (DPU-only tasks are not built there)",
                                   soc.name);
            emit_pool_rk356x(&pool, task_, buffers.features[0], buffers.output);
            return program->add(core, pool, kPpuEnable, kPpuInterrupts);
        }
        emit_pool(&pool, task_, buffers.features[0], requantise_ ? buffers.scratch : buffers.output);
        RKNN_RETURN_IF_ERROR(program->add(core, pool, kPpuEnable, kPpuInterrupts));
        if (!requantise_) return Status::ok();
        DpuTask t = requant_;
        t.src = buffers.scratch;
        t.dst = buffers.output;
        TaskEmitter dpu;
        emit_dpu_task(&dpu, t);
        return program->add(core, dpu, kDpuEnable, kDpuInterrupts);
    }

    std::string describe(const hw::SocProfile&, uint32_t) const override {
        return std::string(task_.method == 1 ? "PPU max pool" : "PPU average pool") +
               (requantise_ ? " and a DPU requantisation" : "");
    }

private:
    PoolTask task_;
    bool requantise_;
    DpuTask requant_;
};

}  // namespace

StatusOr<std::unique_ptr<PreparedOp>> prepare_pool_op(const graph::Graph& g, const graph::Op& op) {
    const auto valid = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (op.inputs.empty() || op.outputs.empty() || !valid(op.inputs[0]) || !valid(op.outputs[0]))
        return RKNN_INVALID_ARGUMENT("pool %s has malformed inputs or outputs", op.name.c_str());
    if (op.outputs.size() > 1) return unsupported("MaxPool with an indices output");
    const graph::Tensor& x = g.tensors[static_cast<size_t>(op.inputs[0])];
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    const bool global = op.type == OpType::kGlobalAveragePool || op.type == OpType::kGlobalMaxPool;
    const bool average = op.type == OpType::kAveragePool || op.type == OpType::kGlobalAveragePool;
    const bool fp16 = x.dtype == graph::DType::kFloat16;
    if ((x.dtype != graph::DType::kInt8 && !fp16) || y.dtype != x.dtype || x.shape.size() != 4 || x.shape[0] != 1 ||
        y.shape.size() != 4)
        return unsupported("the PPU path takes int8 or fp16 [1, C, H, W] cubes");
    if (!fp16 && (x.quant.per_channel() || y.quant.per_channel() || !x.quant.is_quantized() || !y.quant.is_quantized()))
        return unsupported("pools take per-tensor quantised cubes");

    PoolTask t;
    t.method = average ? 0 : 1;
    t.c = static_cast<int>(x.shape[1]);
    t.in_h = static_cast<int>(x.shape[2]);
    t.in_w = static_cast<int>(x.shape[3]);
    if (t.in_h > 8192 || t.in_w > 8192 || t.c > 8192) return unsupported("cube larger than the PPU's size fields");
    if (global) {
        if (t.in_h != t.in_w) return unsupported("global pool over a non-square plane");
        t.k = t.in_h;
        t.stride = 1;
    } else {
        const auto kernel = op.attrs.get_ints("kernel_shape");
        if (kernel.size() != 2) return unsupported("pool without a 2-D kernel_shape");
        auto sp = graph::forward_spatial(op.attrs, {x.shape[2], x.shape[3]}, kernel, true);
        if (!sp.is_ok()) return sp.status();
        const graph::SpatialParams& p = sp.value();
        if (p.kernel[0] != p.kernel[1] || p.strides[0] != p.strides[1])
            return unsupported("non-square pooling window or stride");
        for (int64_t d : p.dilations)
            if (d != 1) return unsupported("dilated pooling");
        for (size_t i = 0; i < 2; ++i)
            if (p.pads_begin[i] != p.pads_begin[0] || p.pads_end[i] != p.pads_begin[0])
                return unsupported("asymmetric pooling padding");
        t.k = static_cast<int>(p.kernel[0]);
        t.stride = static_cast<int>(p.strides[0]);
        t.pad = static_cast<int>(p.pads_begin[0]);
        if (op.attrs.get_int("ceil_mode", 0) != 0) {
            // The last windows run past the padded input: more padding at the
            // end, which a max never picks (the pad value is the lowest
            // code). An average would divide by the taps inside, which the
            // PPU's fixed reciprocals do not.
            if (average) return unsupported("a ceil_mode average (its last windows average fewer taps)");
            const auto extra = [&](size_t i, int64_t in) {
                return std::max<int64_t>(0, (p.out[i] - 1) * p.strides[i] + p.kernel[i] - in - 2 * p.pads_begin[i]);
            };
            t.extra_h = static_cast<int>(extra(0, x.shape[2]));
            t.extra_w = static_cast<int>(extra(1, x.shape[3]));
            if (t.pad + std::max(t.extra_h, t.extra_w) >= t.k) return unsupported("ceil_mode windows mostly in the padding");
        }
    }
    if (t.k < 1 || t.k > 16 || t.stride < 1 || t.stride > 16)
        return unsupported("window " + std::to_string(t.k) + " stride " + std::to_string(t.stride) +
                           " beyond the PPU's 1..16");
    if (t.pad >= t.k) return unsupported("padding as large as the window");
    if (y.shape[1] != t.c || y.shape[2] != t.out_h() || y.shape[3] != t.out_w())
        return RKNN_INVALID_ARGUMENT("pool %s: output shape does not follow from its attributes", op.name.c_str());
    // The PPU averages the codes and the zero point comes off in the
    // requantisation, as the reference does; padded windows would average
    // the pad value too.
    if (average && t.pad != 0) return unsupported("an average with padding is not exact on the PPU");
    // fp16 reciprocals are fp16(65536 / k): 65536 itself overflows fp16.
    if (average && fp16 && t.k == 1) return unsupported("an fp16 average over a 1x1 window (its reciprocal overflows fp16)");
    t.fp16 = fp16;
    // fp16 averages multiply by fp16 reciprocals of the window (what the
    // vendor programs): within 2 ulps of the reference's division, the
    // tolerance every fp16 op has.
    // Never wins a max (fp16: the lowest finite half); averages have no padding here.
    t.pad_value = fp16 ? 0xfbff : -128;
    DpuTask rq;
    const bool requantise = !fp16 && !(x.quant == y.quant);
    if (requantise) {
        // y = (pooled - zx) * sx / sy + zy, as the reference requantises.
        const cpu::int8::Requant r = cpu::int8::make_requant(x.quant.scale() / y.quant.scale());
        rq.c = t.c;
        rq.h = t.out_h();
        rq.w = t.out_w();
        rq.bs.enabled = rq.bs.alu = rq.bs.mul = true;
        rq.bs.alu_value = -x.quant.zero_point();
        rq.bs.mul_value = static_cast<int16_t>(r.multiplier(0));
        rq.bs.shift = r.shift;
        rq.out.offset = y.quant.zero_point();
    }
    return std::unique_ptr<PreparedOp>(std::make_unique<PoolOp>(t, requantise, rq));
}

}  // namespace rknn::npu
