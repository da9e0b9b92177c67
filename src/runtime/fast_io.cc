#include "runtime/fast_io.h"

#include <cstring>

#include "cpu/convert.h"
#include "cpu/graph_executor.h"
#include "rknn_api.h"
#include "runtime/io_convert.h"

namespace rknn::runtime {
namespace {

constexpr int kAtom = 16;  // int8 lanes per cube atom

}  // namespace

StatusOr<std::vector<int8_t>> make_pixel_codes(const graph::Tensor& declared, const graph::InputPreprocess* pre) {
    if (declared.shape.size() != 4 || declared.dtype != graph::DType::kInt8)
        return RKNN_INVALID_ARGUMENT("pixel tables are for 4-D int8 inputs");
    const int64_t channels = declared.shape[1];
    // Every pixel value once per channel, as a [1, C, 1, 256] NCHW image.
    graph::Tensor probe = declared;
    probe.shape = {1, channels, 1, 256};
    std::vector<uint8_t> values(static_cast<size_t>(channels) * 256);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i % 256);
    rknn_input in{};
    in.buf = values.data();
    in.size = static_cast<uint32_t>(values.size());
    in.type = RKNN_TENSOR_UINT8;
    in.fmt = RKNN_TENSOR_NCHW;
    RKNN_ASSIGN_OR_RETURN(cpu::HostTensor codes, convert_input(in, probe, pre));
    return std::vector<int8_t>(codes.data<int8_t>(), codes.data<int8_t>() + codes.numel());
}

StatusOr<std::vector<float>> make_dequant_table(const graph::Tensor& declared) {
    if (declared.dtype != graph::DType::kInt8 || declared.quant.per_channel())
        return RKNN_INVALID_ARGUMENT("dequantisation tables are for per-tensor int8 outputs");
    graph::Tensor probe = declared;
    probe.shape = {256};
    cpu::HostTensor codes = cpu::make_tensor_like(probe, probe.shape);
    for (int i = 0; i < 256; ++i) codes.data<int8_t>()[i] = static_cast<int8_t>(i - 128);
    const cpu::HostTensor floats = cpu::to_float32(codes);
    return std::vector<float>(floats.data<float>(), floats.data<float>() + 256);
}

void pixels_to_cube(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, uint8_t* cube) {
    const size_t plane = static_cast<size_t>(h) * w;
    const size_t surface = plane * kAtom;
    for (int ch = 0; ch < c; ++ch) {
        const int8_t* table = codes + static_cast<size_t>(ch) * 256;
        uint8_t* lanes = cube + static_cast<size_t>(ch / kAtom) * surface + ch % kAtom;
        if (nhwc) {
            const uint8_t* src = pixels + ch;
            for (size_t p = 0; p < plane; ++p) lanes[p * kAtom] = static_cast<uint8_t>(table[src[p * c]]);
        } else {
            const uint8_t* src = pixels + static_cast<size_t>(ch) * plane;
            for (size_t p = 0; p < plane; ++p) lanes[p * kAtom] = static_cast<uint8_t>(table[src[p]]);
        }
    }
}

void pixels_to_nchw(const uint8_t* pixels, bool nhwc, int c, int h, int w, const int8_t* codes, int8_t* nchw) {
    const size_t plane = static_cast<size_t>(h) * w;
    for (int ch = 0; ch < c; ++ch) {
        const int8_t* table = codes + static_cast<size_t>(ch) * 256;
        int8_t* dst = nchw + static_cast<size_t>(ch) * plane;
        const uint8_t* src = nhwc ? pixels + ch : pixels + static_cast<size_t>(ch) * plane;
        const size_t step = nhwc ? static_cast<size_t>(c) : 1;
        for (size_t p = 0; p < plane; ++p) dst[p] = table[src[p * step]];
    }
}

void cube_to_float_nchw(const uint8_t* cube, int c, int h, int w, const float* table, float* nchw) {
    const size_t plane = static_cast<size_t>(h) * w;
    const size_t surface = plane * kAtom;
    for (int ch = 0; ch < c; ++ch) {
        const uint8_t* lanes = cube + static_cast<size_t>(ch / kAtom) * surface + ch % kAtom;
        float* dst = nchw + static_cast<size_t>(ch) * plane;
        for (size_t p = 0; p < plane; ++p) dst[p] = table[static_cast<uint8_t>(lanes[p * kAtom] ^ 0x80)];
    }
}

}  // namespace rknn::runtime
