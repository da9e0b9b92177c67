// Per-tensor QuantizeLinear (float16 -> int8) and DequantizeLinear (int8 ->
// float16) done on the device cubes themselves. The converter puts these ops
// where int8 and float16 layers meet; both sides are NPU layers, so the CPU
// step between them would otherwise unpack a cube to NCHW, widen it to
// float32, convert, and pack it again. On RK3588 cubes an int8 atom holds
// channels 16k..16k+15 of a pixel and the float16 atoms 2k and 2k+1 hold the
// same channels, so the conversion is one pass of table lookups, atom by
// atom. The tables are sampled from the reference kernels' arithmetic
// (cpu/kernels/quantize_math.h) over every code, so the codes are the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "runtime/native_tensor.h"

namespace rknn::runtime {

class CubeRequant {
public:
    // The plan for `op` when it is a per-tensor QuantizeLinear from float16
    // to int8 or DequantizeLinear from int8 to float16 with constant
    // parameters, on RK3588 cubes of the same shape; otherwise nullopt and
    // the reason in `why_not`.
    static std::optional<CubeRequant> plan(const graph::Graph& g, const graph::Op& op, const NativeForm& form,
                                           std::string* why_not);

    // Bytes the source and destination cubes span.
    uint64_t source_bytes() const;
    uint64_t destination_bytes() const;

    // Converts the source cube into the destination cube; the destination's
    // padding lanes become zero, as pack_native leaves them.
    void run(const uint8_t* source, uint8_t* destination) const;

private:
    bool quantize_ = false;
    uint32_t channels_ = 0;
    uint64_t plane_ = 0;                 // H x W pixels
    std::vector<int8_t> int8_of_half_;   // quantize: by float16 code
    std::vector<uint16_t> half_of_int8_; // dequantize: by int8 code + 128
};

}  // namespace rknn::runtime
