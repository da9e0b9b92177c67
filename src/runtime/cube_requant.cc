#include "runtime/cube_requant.h"

#include <algorithm>
#include <cstring>

#include "base/half.h"
#include "base/parallel.h"
#include "cpu/convert.h"
#include "cpu/kernels/quantize_math.h"
#include "npu/prepared_op.h"

namespace rknn::runtime {
namespace {

constexpr uint64_t kAtomBytes = 16;
constexpr uint32_t kInt8Lanes = 16;
constexpr uint32_t kHalfLanes = 8;
constexpr int64_t kPixelsPerChunk = 8192;

// The single value of a constant parameter tensor, or nullopt.
std::optional<double> scalar_constant(const graph::Graph& g, int32_t t) {
    const graph::Buffer* buffer = g.constant_buffer(t);
    if (buffer == nullptr) return std::nullopt;
    const graph::Tensor& declared = g.tensors[static_cast<size_t>(t)];
    if (graph::num_elements(declared.shape) != 1) return std::nullopt;
    const cpu::HostTensor view = cpu::HostTensor::borrow(declared.dtype, declared.shape, buffer->data);
    return cpu::element_as_double(view, 0);
}

uint32_t surfaces(uint32_t channels, uint32_t lanes) { return (channels + lanes - 1) / lanes; }

}  // namespace

std::optional<CubeRequant> CubeRequant::plan(const graph::Graph& g, const graph::Op& op, const NativeForm& form,
                                             std::string* why_not) {
    const auto refuse = [&](const char* reason) -> std::optional<CubeRequant> {
        *why_not = reason;
        return std::nullopt;
    };
    const bool quantize = op.type == graph::OpType::kQuantizeLinear;
    if (!quantize && op.type != graph::OpType::kDequantizeLinear) return refuse("not a (de)quantisation");
    if (form.rk356x) return refuse("RK356x cubes hold no float16");
    if (op.inputs.size() < 2 || op.outputs.size() != 1 || op.inputs[0] < 0 || op.outputs[0] < 0)
        return refuse("unexpected operands");
    const graph::Tensor& in = g.tensors[static_cast<size_t>(op.inputs[0])];
    const graph::Tensor& out = g.tensors[static_cast<size_t>(op.outputs[0])];
    const graph::DType from = quantize ? graph::DType::kFloat16 : graph::DType::kInt8;
    const graph::DType to = quantize ? graph::DType::kInt8 : graph::DType::kFloat16;
    if (in.dtype != from || out.dtype != to) return refuse("only float16 <-> int8");
    int c = 0, h = 0, w = 0;  // the output's cube is the same shape (both dtypes have cubes)
    if (in.shape != out.shape || !native_cube_shape(in, &c, &h, &w)) return refuse("no matching cubes");
    if (npu::matrix_rows(in.shape) > 0) return refuse("a matrix of several rows");
    const std::optional<double> scale = scalar_constant(g, op.inputs[1]);
    std::optional<double> zero_point = 0.0;
    if (op.inputs.size() > 2 && op.inputs[2] >= 0) zero_point = scalar_constant(g, op.inputs[2]);
    if (!scale || !zero_point) return refuse("parameters are not one constant each");

    CubeRequant r;
    r.quantize_ = quantize;
    r.channels_ = static_cast<uint32_t>(c);
    r.plane_ = static_cast<uint64_t>(h) * static_cast<uint64_t>(w);
    if (quantize) {
        // Every float16 code, through the reference kernel's arithmetic.
        r.int8_of_half_.resize(1u << 16);
        for (uint32_t code = 0; code < (1u << 16); ++code)
            r.int8_of_half_[code] = static_cast<int8_t>(cpu::kernels::quantize_value(
                half_to_float(static_cast<uint16_t>(code)), *scale, *zero_point, -128.0, 127.0));
    } else {
        r.half_of_int8_.resize(256);
        for (int code = -128; code < 128; ++code)
            r.half_of_int8_[static_cast<size_t>(code + 128)] =
                float_to_half(cpu::kernels::dequantize_value(code, *scale, *zero_point));
    }
    return r;
}

uint64_t CubeRequant::source_bytes() const {
    return surfaces(channels_, quantize_ ? kHalfLanes : kInt8Lanes) * plane_ * kAtomBytes;
}

uint64_t CubeRequant::destination_bytes() const {
    return surfaces(channels_, quantize_ ? kInt8Lanes : kHalfLanes) * plane_ * kAtomBytes;
}

void CubeRequant::run(const uint8_t* source, uint8_t* destination) const {
    // Work items are the int8 atoms: surface k, pixel p.
    const uint32_t int8_surfaces = surfaces(channels_, kInt8Lanes);
    const uint32_t half_surfaces = surfaces(channels_, kHalfLanes);
    const uint64_t surface_bytes = plane_ * kAtomBytes;
    const auto n = static_cast<int64_t>(int8_surfaces * plane_);
    parallel_for(n, kPixelsPerChunk, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const uint64_t k = static_cast<uint64_t>(i) / plane_;
            const uint64_t p = static_cast<uint64_t>(i) % plane_;
            const uint32_t first = static_cast<uint32_t>(k) * kInt8Lanes;
            const uint32_t live = std::min(kInt8Lanes, channels_ - first);  // lanes that hold channels
            const bool upper = 2 * k + 1 < half_surfaces;                      // second float16 atom exists
            const uint64_t int8_at = k * surface_bytes + p * kAtomBytes;
            const uint64_t lower_half = 2 * k * surface_bytes + p * kAtomBytes;
            const uint64_t upper_half = lower_half + surface_bytes;
            uint16_t halves[kInt8Lanes] = {};
            if (quantize_) {
                std::memcpy(halves, source + lower_half, kAtomBytes);
                if (upper) std::memcpy(halves + kHalfLanes, source + upper_half, kAtomBytes);
                int8_t codes[kInt8Lanes] = {};
                for (uint32_t l = 0; l < live; ++l) codes[l] = int8_of_half_[halves[l]];
                std::memcpy(destination + int8_at, codes, kAtomBytes);
            } else {
                int8_t codes[kInt8Lanes];
                std::memcpy(codes, source + int8_at, kAtomBytes);
                for (uint32_t l = 0; l < live; ++l) halves[l] = half_of_int8_[static_cast<size_t>(codes[l] + 128)];
                std::memcpy(destination + lower_half, halves, kAtomBytes);
                if (upper) std::memcpy(destination + upper_half, halves + kHalfLanes, kAtomBytes);
            }
        }
    });
}

}  // namespace rknn::runtime
