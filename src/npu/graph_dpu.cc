// Standalone DPU ops from the graph (flying mode: the DPU reads its input
// cube itself, op-enable 0x18):
//  - binary Add, Sub, Mul, Max, Min of int8 tensors of the same shape, or with
//    a per-channel [1, C, 1, 1] second operand: A requantised in BS (ALU adds
//    -za, multiplier Ma), B through the EW converter (-zb, Mb), one rounding at
//    OUT_CVT; Mul multiplies in EW and requantises at OUT_CVT. These are the
//    int8 reference's formulas (cpu/int8/elementwise_int8.cc) in registers.
//  - the same binary ops on fp16 tensors through the float pipeline: each
//    result is exact in fp32, so the one rounding to fp16 matches the reference;
//  - unary activations: the output depends on the input code alone, so the
//    DPU's LUT holds the reference's own 256 results (index select 0, from
//    -128): exact for ReLU, Clip, LeakyRelu and every LUT activation.
#include <cstring>

#include "base/half.h"
#include "cpu/graph_executor.h"
#include "cpu/int8/requant.h"
#include "npu/dpu_regs.h"
#include "npu/native_layout.h"
#include "npu/prepared_op.h"

namespace rknn::npu {

namespace {

using graph::DType;
using graph::OpType;

Status unsupported(std::string message) { return Status(StatusCode::kUnimplemented, std::move(message)); }

struct Cube {
    int c = 0, h = 0, w = 0;
};

StatusOr<Cube> cube_of(const graph::Tensor& t) {
    if (t.dtype != DType::kInt8 || !t.quant.is_quantized() || t.quant.per_channel())
        return unsupported("tensor " + t.name + " is not a per-tensor quantised int8 tensor");
    if (t.shape.size() != 4 || t.shape[0] != 1)
        return unsupported("tensor " + t.name + " is not a [1, C, H, W] cube");
    for (int64_t d : t.shape)
        if (d <= 0 || d > 8192) return unsupported("tensor " + t.name + " has a size the DPU's cube fields cannot hold");
    return Cube{static_cast<int>(t.shape[1]), static_cast<int>(t.shape[2]), static_cast<int>(t.shape[3])};
}

// fp16 cubes: same shape rules, no quantisation.
StatusOr<Cube> fp16_cube_of(const graph::Tensor& t) {
    if (t.dtype != DType::kFloat16) return unsupported("tensor " + t.name + " is not float16");
    if (t.shape.size() != 4 || t.shape[0] != 1)
        return unsupported("tensor " + t.name + " is not a [1, C, H, W] cube");
    for (int64_t d : t.shape)
        if (d <= 0 || d > 8192) return unsupported("tensor " + t.name + " has a size the DPU's cube fields cannot hold");
    return Cube{static_cast<int>(t.shape[1]), static_cast<int>(t.shape[2]), static_cast<int>(t.shape[3])};
}

// The second operand's cube. A constant holding one value (a scalar of any
// rank) stands for that value in every channel: a per-channel operand, or a
// one-pixel cube when the output is one pixel.
struct Operand {
    Cube cube;
    bool scalar = false;
};

StatusOr<Operand> operand_of(const graph::Graph& g, int32_t id, const Cube& out, bool fp16) {
    const graph::Tensor& t = g.tensors[static_cast<size_t>(id)];
    int64_t elems = 0;
    const bool scalar = g.is_constant(id) && graph::checked_num_elements(t.shape, &elems) && elems == 1;
    if (!scalar) {
        RKNN_ASSIGN_OR_RETURN(const Cube cube, fp16 ? fp16_cube_of(t) : cube_of(t));
        return Operand{cube, false};
    }
    if (fp16 ? t.dtype != DType::kFloat16
             : t.dtype != DType::kInt8 || !t.quant.is_quantized() || t.quant.per_channel())
        return unsupported("scalar " + t.name + " is not of the output's type");
    return Operand{Cube{out.c, 1, 1}, true};
}

// The operand constant's bytes as a [1, C, h, w] NCHW tensor: a scalar's one
// value repeated in every channel, otherwise as stored.
std::vector<uint8_t> operand_values(const graph::Buffer& constant, const Operand& b, size_t elem_bytes) {
    if (!b.scalar) return std::vector<uint8_t>(constant.data, constant.data + constant.size);
    std::vector<uint8_t> values(static_cast<size_t>(b.cube.c) * elem_bytes);
    for (size_t i = 0; i < values.size(); i += elem_bytes) std::memcpy(values.data() + i, constant.data, elem_bytes);
    return values;
}

uint32_t algo_of(OpType type) {
    switch (type) {
    case OpType::kMax: return 0;
    case OpType::kMin: return 1;
    case OpType::kSub: return 4;
    default: return 2;  // add (Mul uses the EW multiplier instead)
    }
}

class DpuOp : public PreparedOp {
public:
    DpuOp(DpuTask task, std::vector<int16_t> lut, bool operand_is_constant)
        : task_(std::move(task)), lut_(std::move(lut)), operand_is_constant_(operand_is_constant) {}

    // The BN stage reads its per-channel records from constants[0].
    void set_bn_records_constant() { bn_records_constant_ = true; }

    void set_bindings(std::vector<int> features, std::vector<std::vector<uint8_t>> constants) {
        feature_inputs_ = std::move(features);
        constants_ = std::move(constants);
    }

    Status lower(const OpBuffers& buffers, const hw::SocProfile&, uint32_t core_mask, ProgramBuilder* program) const override {
        if (buffers.features.size() != feature_inputs_.size() || buffers.constants.size() != constants_.size())
            return RKNN_INVALID_ARGUMENT("DPU op bound to %zu features and %zu constants", buffers.features.size(),
                                         buffers.constants.size());
        DpuTask t = task_;
        t.src = buffers.features[0];
        t.dst = buffers.output;
        if (t.ew.tensor) t.ew.operand_addr = operand_is_constant_ ? buffers.constants[0] : buffers.features[1];
        if (bn_records_constant_) t.bn.records = buffers.constants[0];
        TaskEmitter e;
        if (!lut_.empty()) {
            const CodeLut tables = code_lut(lut_);
            emit_lut_load(&e, tables.le, tables.lo);
            emit_lut_window(&e, 0, tables.le_start, tables.lo_start, tables.lo_end);
        }
        emit_dpu_task(&e, t);
        return program->add(first_core(core_mask), e, kDpuEnable, kDpuInterrupts);
    }

    std::string describe(const hw::SocProfile&, uint32_t) const override {
        return lut_.empty() ? "element-wise DPU task" : "DPU lookup-table task";
    }

private:
    DpuTask task_;
    std::vector<int16_t> lut_;
    bool operand_is_constant_;
    bool bn_records_constant_ = false;
};

// The reference's output for every int8 input code: a 1-op graph over a
// 16x16 cube holding codes -128..127, with the op's constant inputs copied.
StatusOr<std::vector<int16_t>> lut_from_reference(const graph::Graph& g, const graph::Op& op) {
    graph::Graph mini;
    graph::Op copy{op.type, op.name, op.custom_type, {}, {}, op.attrs};
    graph::Tensor x = g.tensors[static_cast<size_t>(op.inputs[0])];
    x.shape = {1, 1, 16, 16};
    x.buffer = -1;
    const int32_t xid = mini.add_tensor(x);
    mini.inputs = {xid};
    copy.inputs.push_back(xid);
    for (size_t i = 1; i < op.inputs.size(); ++i) {
        const int32_t id = op.inputs[i];
        if (id < 0) {
            copy.inputs.push_back(-1);
            continue;
        }
        const graph::Buffer* buffer = g.constant_buffer(id);
        if (buffer == nullptr) return unsupported("a non-constant second input makes it more than a table");
        const graph::Tensor& t = g.tensors[static_cast<size_t>(id)];
        const int32_t cid = mini.add_constant(t.name, t.dtype, t.shape, graph::Buffer::copy_of(buffer->data, buffer->size));
        mini.tensors[static_cast<size_t>(cid)].quant = t.quant;
        copy.inputs.push_back(cid);
    }
    graph::Tensor y = g.tensors[static_cast<size_t>(op.outputs[0])];
    y.shape = {1, 1, 16, 16};
    y.buffer = -1;
    const int32_t yid = mini.add_tensor(y);
    copy.outputs = {yid};
    mini.add_op(copy);
    mini.outputs = {yid};
    RKNN_ASSIGN_OR_RETURN(auto exec, cpu::GraphExecutor::create(mini));
    cpu::HostTensor codes(DType::kInt8, {1, 1, 16, 16});
    codes.quant = x.quant;
    for (int i = 0; i < 256; ++i) codes.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
    std::vector<cpu::HostTensor> out;
    cpu::GraphExecutor::RunStats stats;
    RKNN_RETURN_IF_ERROR(exec->run({codes}, &out, nullptr, &stats));
    if (stats.int8_ops != 1) return unsupported("the reference has no int8 kernel for it");
    std::vector<int16_t> table(256);
    for (int i = 0; i < 256; ++i) table[static_cast<size_t>(i)] = out[0].data<int8_t>()[i];
    return table;
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_unary(const graph::Graph& g, const graph::Op& op) {
    const graph::Tensor& x = g.tensors[static_cast<size_t>(op.inputs[0])];
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    RKNN_ASSIGN_OR_RETURN(const Cube cx, cube_of(x));
    RKNN_ASSIGN_OR_RETURN(const Cube cy, cube_of(y));
    if (cx.c != cy.c || cx.h != cy.h || cx.w != cy.w) return unsupported("the output's shape differs from the input's");
    RKNN_ASSIGN_OR_RETURN(std::vector<int16_t> table, lut_from_reference(g, op));
    DpuTask t;
    t.c = cx.c;
    t.h = cx.h;
    t.w = cx.w;
    t.ew.enabled = t.ew.lut = true;
    auto prepared = std::make_unique<DpuOp>(t, std::move(table), false);
    prepared->set_bindings({0}, {});
    return std::unique_ptr<PreparedOp>(std::move(prepared));
}

// PRelu with one slope per channel, as the int8 reference computes it:
// v = round((a - za) * M >> S), negatives then round(v * M_c >> S_c), then
// + zy. BS: ALU adds -za, MUL by M with shift S; BN: per-channel PRELU
// multipliers (records) with their shared shift, applied to negatives only;
// OUT_CVT adds zy. (One slope for all channels goes through the LUT.)
StatusOr<std::unique_ptr<PreparedOp>> prepare_prelu(const graph::Graph& g, const graph::Op& op) {
    if (op.inputs.size() != 2 || op.inputs[1] < 0) return unsupported("PRelu without a slope");
    const graph::Tensor& x = g.tensors[static_cast<size_t>(op.inputs[0])];
    const graph::Tensor& slope = g.tensors[static_cast<size_t>(op.inputs[1])];
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    RKNN_ASSIGN_OR_RETURN(const Cube cx, cube_of(x));
    RKNN_ASSIGN_OR_RETURN(const Cube cy, cube_of(y));
    if (cx.c != cy.c || cx.h != cy.h || cx.w != cy.w) return unsupported("the output's shape differs from the input's");
    const graph::Buffer* values = g.constant_buffer(op.inputs[1]);
    int64_t n = 0;
    if (values == nullptr || slope.dtype != DType::kFloat32 || slope.quant.is_quantized() ||
        !graph::checked_num_elements(slope.shape, &n) || n != cx.c || values->size != static_cast<size_t>(n) * 4)
        return unsupported("the slope is not one float32 constant per channel");
    // [C, 1, 1] or [1, C, 1, 1]: one value per channel along axis 1 of the
    // input (a [C] slope would broadcast along the width).
    const bool per_channel_shape = (slope.shape.size() == 3 && slope.shape[1] == 1 && slope.shape[2] == 1) ||
                                   (slope.shape.size() == 4 && slope.shape[0] == 1 && slope.shape[2] == 1 &&
                                    slope.shape[3] == 1);
    if (!per_channel_shape) return unsupported("the slope does not vary along the channels only");
    std::vector<double> slopes(static_cast<size_t>(n));
    for (size_t c = 0; c < slopes.size(); ++c) {
        float v;
        std::memcpy(&v, values->data + c * 4, 4);
        slopes[c] = v;
    }
    const cpu::int8::Requant slope_rq = cpu::int8::make_requant(slopes);
    const cpu::int8::Requant rq = cpu::int8::make_requant(x.quant.scale() / y.quant.scale());
    DpuTask t;
    t.c = cx.c;
    t.h = cx.h;
    t.w = cx.w;
    t.bs.enabled = t.bs.alu = t.bs.mul = true;
    t.bs.alu_value = -x.quant.zero_point();
    t.bs.mul_value = static_cast<int16_t>(rq.multiplier(0));
    t.bs.shift = rq.shift;
    t.bn.enabled = t.bn.mul = t.bn.mul_per_channel = t.bn.prelu = true;
    t.bn.shift = slope_rq.shift;
    t.out.offset = y.quant.zero_point();
    EpilogueRegs records;
    records.bias.assign(static_cast<size_t>(n), 0);
    for (int64_t c = 0; c < n; ++c) records.mult.push_back(static_cast<int16_t>(slope_rq.multiplier(static_cast<size_t>(c))));
    auto prepared = std::make_unique<DpuOp>(t, std::vector<int16_t>{}, false);
    prepared->set_bn_records_constant();
    prepared->set_bindings({0}, {bs_records(records, align_up(cx.c, 16))});
    return std::unique_ptr<PreparedOp>(std::move(prepared));
}

// fp16: the sum, difference, product, max or min of two fp16 values is exact
// in fp32, so the float pipeline's one rounding to fp16 gives the reference's
// result bit for bit.
StatusOr<std::unique_ptr<PreparedOp>> prepare_binary_fp16(const graph::Graph& g, const graph::Op& op, int a_index,
                                                          int b_index) {
    const graph::Tensor& a = g.tensors[static_cast<size_t>(op.inputs[static_cast<size_t>(a_index)])];
    const graph::Tensor& b = g.tensors[static_cast<size_t>(op.inputs[static_cast<size_t>(b_index)])];
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    RKNN_ASSIGN_OR_RETURN(const Cube ca, fp16_cube_of(a));
    RKNN_ASSIGN_OR_RETURN(const Operand ob, operand_of(g, op.inputs[static_cast<size_t>(b_index)], ca, true));
    const Cube& cb = ob.cube;
    if (a.shape != y.shape) return unsupported("broadcast of both operands");
    const bool per_channel = cb.c == ca.c && cb.h == 1 && cb.w == 1 && (ca.h != 1 || ca.w != 1);
    if (b.shape != y.shape && !per_channel && !ob.scalar)
        return unsupported("broadcasts other than per channel or scalar are not lowered yet");
    DpuTask t;
    t.fp16 = true;
    t.c = ca.c;
    t.h = ca.h;
    t.w = ca.w;
    t.ew.enabled = t.ew.op = t.ew.tensor = true;
    t.ew.operand_bytes = 2;
    t.ew.per_channel = per_channel;
    t.ew.op_mul = op.type == OpType::kMul;
    t.ew.algo = algo_of(op.type);
    const graph::Buffer* constant = g.constant_buffer(op.inputs[static_cast<size_t>(b_index)]);
    auto prepared = std::make_unique<DpuOp>(t, std::vector<int16_t>{}, constant != nullptr);
    if (constant != nullptr) {
        const size_t n = static_cast<size_t>(graph::num_elements(b.shape));
        if (constant->size != n * 2) return RKNN_INVALID_ARGUMENT("constant %s has %zu bytes", b.name.c_str(), constant->size);
        const std::vector<uint8_t> bytes = operand_values(*constant, ob, 2);
        std::vector<float> values(bytes.size() / 2);
        for (size_t i = 0; i < values.size(); ++i) {
            uint16_t h;
            std::memcpy(&h, bytes.data() + i * 2, 2);
            values[i] = half_to_float(h);
        }
        prepared->set_bindings({a_index}, {pack_fp16_cube(values.data(), cb.c, cb.h, cb.w, align_up(cb.c, 8))});
    } else {
        prepared->set_bindings({a_index, b_index}, {});
    }
    return std::unique_ptr<PreparedOp>(std::move(prepared));
}

StatusOr<std::unique_ptr<PreparedOp>> prepare_binary(const graph::Graph& g, const graph::Op& op) {
    if (op.inputs.size() != 2 || op.inputs[1] < 0) return unsupported("not a two-input element-wise op");
    int a_index = 0, b_index = 1;
    const auto& t0 = g.tensors[static_cast<size_t>(op.inputs[0])];
    const auto& t1 = g.tensors[static_cast<size_t>(op.inputs[1])];
    const graph::Tensor& y = g.tensors[static_cast<size_t>(op.outputs[0])];
    RKNN_ASSIGN_OR_RETURN(const Cube cy, y.dtype == DType::kFloat16 ? fp16_cube_of(y) : cube_of(y));
    // The full-size operand goes through the RDMA, a per-channel one through ERDMA.
    if (t0.shape != y.shape && t1.shape == y.shape) {
        if (op.type == OpType::kSub) return unsupported("Sub with a broadcast first operand");
        std::swap(a_index, b_index);
    }
    const graph::Tensor& a = g.tensors[static_cast<size_t>(op.inputs[static_cast<size_t>(a_index)])];
    const graph::Tensor& b = g.tensors[static_cast<size_t>(op.inputs[static_cast<size_t>(b_index)])];
    if (y.dtype == DType::kFloat16) return prepare_binary_fp16(g, op, a_index, b_index);
    RKNN_ASSIGN_OR_RETURN(const Cube ca, cube_of(a));
    if (a.shape != y.shape) return unsupported("broadcast of both operands");
    RKNN_ASSIGN_OR_RETURN(const Operand ob, operand_of(g, op.inputs[static_cast<size_t>(b_index)], cy, false));
    const Cube& cb = ob.cube;
    const bool per_channel = cb.c == cy.c && cb.h == 1 && cb.w == 1 && (cy.h != 1 || cy.w != 1);
    if (b.shape != y.shape && !per_channel && !ob.scalar)
        return unsupported("broadcasts other than per channel or scalar are not lowered yet");

    const double sa = a.quant.scale(), sb = b.quant.scale(), sy = y.quant.scale();
    DpuTask t;
    t.c = ca.c;
    t.h = ca.h;
    t.w = ca.w;
    t.bs.enabled = t.bs.alu = true;
    t.bs.alu_value = -a.quant.zero_point();
    t.ew.enabled = t.ew.op = t.ew.tensor = t.ew.cvt = true;
    t.ew.per_channel = per_channel;
    t.ew.cvt_offset = -b.quant.zero_point();
    t.out.offset = y.quant.zero_point();
    if (op.type == OpType::kMul) {
        const cpu::int8::Requant rq = cpu::int8::make_requant(sa * sb / sy);
        t.ew.op_mul = true;
        t.out.scale = static_cast<int16_t>(rq.multiplier(0));
        t.out.shift = rq.shift;
    } else {
        const cpu::int8::Requant rq = cpu::int8::make_requant({sa / sy, sb / sy});
        t.bs.mul = true;
        t.bs.mul_value = static_cast<int16_t>(rq.multiplier(0));
        t.ew.cvt_scale = static_cast<int16_t>(rq.multiplier(1));
        t.ew.algo = algo_of(op.type);
        t.out.shift = rq.shift;
    }
    const graph::Buffer* constant = g.constant_buffer(op.inputs[static_cast<size_t>(b_index)]);
    auto prepared = std::make_unique<DpuOp>(t, std::vector<int16_t>{}, constant != nullptr);
    if (constant != nullptr) {
        if (constant->size != static_cast<size_t>(graph::num_elements(b.shape)))
            return RKNN_INVALID_ARGUMENT("constant %s has %zu bytes", b.name.c_str(), constant->size);
        const std::vector<uint8_t> values = operand_values(*constant, ob, 1);
        prepared->set_bindings({a_index}, {pack_int8_cube(reinterpret_cast<const int8_t*>(values.data()), cb.c, cb.h,
                                                          cb.w, align_up(cb.c, 16), 0)});
    } else {
        prepared->set_bindings({a_index, b_index}, {});
    }
    return std::unique_ptr<PreparedOp>(std::move(prepared));
}

}  // namespace

StatusOr<std::unique_ptr<PreparedOp>> prepare_dpu_op(const graph::Graph& g, const graph::Op& op) {
    const auto valid = [&g](int32_t id) { return id >= 0 && static_cast<size_t>(id) < g.tensors.size(); };
    if (op.inputs.empty() || op.outputs.size() != 1 || !valid(op.inputs[0]) || !valid(op.outputs[0]) ||
        (op.inputs.size() > 1 && op.inputs[1] >= 0 && !valid(op.inputs[1])))
        return RKNN_INVALID_ARGUMENT("op %s has malformed inputs or outputs", op.name.c_str());
    if (g.is_constant(op.inputs[0])) return unsupported("a constant first operand (folded by the converter)");
    switch (op.type) {
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kMax:
    case OpType::kMin:
        return prepare_binary(g, op);
    case OpType::kPRelu: {
        const int32_t slope = op.inputs.size() > 1 ? op.inputs[1] : -1;
        int64_t n = 0;
        const bool one_slope = slope >= 0 && graph::checked_num_elements(g.tensors[static_cast<size_t>(slope)].shape, &n) && n == 1;
        if (!one_slope) return prepare_prelu(g, op);
        return prepare_unary(g, op);
    }
    default:
        return prepare_unary(g, op);
    }
}

}  // namespace rknn::npu
