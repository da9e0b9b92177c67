// libFuzzer target: the runtime's I/O conversions and the matmul B re-layout
// with random attributes.
//   convert_input      a client's rknn_input (any type, format, size and
//                      pass-through flag) into a model input that a loaded
//                      model could declare (int8/uint8/fp16/float32, 1-4 dims,
//                      per-tensor or per-channel quantisation, mean/std);
//   convert_output     a value into a client buffer of any size;
//   pack_native / unpack_native
//                      the device cube and packed-image forms, for every
//                      SoC's form, into and out of buffers of any size;
//   rknn_B_normal_layout_to_native_layout
//                      any matmul info, K and N (buffers as large as the
//                      biggest layout needs: a client must size them).
// Every buffer is as large as the size passed with it; nothing may crash,
// and a status says when a size or an attribute does not fit.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/log.h"
#include "cpu/host_tensor.h"
#include "fuzz_bytes.h"
#include "graph/graph.h"
#include "hw/soc_profile.h"
#include "rknn_api.h"
#include "rknn_matmul_api.h"
#include "runtime/io_convert.h"
#include "runtime/native_tensor.h"

namespace {

namespace graph = rknn::graph;
using rknn::cpu::HostTensor;
using rknn::fuzz::FuzzBytes;

constexpr graph::DType kModelTypes[] = {graph::DType::kInt8, graph::DType::kUInt8, graph::DType::kFloat16,
                                        graph::DType::kFloat32, graph::DType::kInt16};
constexpr const char* kSocs[] = {"rk3588", "rk3568", "rk3562", "rk3576", "rv1106"};

// A model input as the loader would accept it.
graph::Tensor declared_tensor(FuzzBytes& in) {
    graph::Tensor t;
    t.name = "x";
    t.dtype = kModelTypes[in.below(sizeof(kModelTypes) / sizeof(kModelTypes[0]))];
    const uint32_t rank = 1 + in.below(4);
    for (uint32_t d = 0; d < rank; ++d) t.shape.push_back(1 + in.below(d == 0 ? 2 : 24));
    if (t.dtype == graph::DType::kInt8 || t.dtype == graph::DType::kUInt8 || t.dtype == graph::DType::kInt16) {
        const bool per_channel = rank >= 2 && in.chance(64);
        const size_t n = per_channel ? static_cast<size_t>(t.shape[1]) : 1;
        for (size_t c = 0; c < n; ++c) {
            t.quant.scales.push_back(0.001f + static_cast<float>(in.below(1000)) / 100.0f);
            t.quant.zero_points.push_back(static_cast<int32_t>(in.below(256)) - 128);
        }
        if (per_channel) t.quant.axis = 1;
    }
    return t;
}

void fuzz_convert_input(FuzzBytes& in) {
    const graph::Tensor declared = declared_tensor(in);
    graph::InputPreprocess pre;
    const bool with_pre = in.chance(128);
    if (with_pre) {
        const size_t channels = declared.shape.size() == 4 ? static_cast<size_t>(declared.shape[1]) : 1;
        for (size_t c = 0; c < channels && c < 4; ++c) {
            pre.mean.push_back(static_cast<float>(in.below(256)));
            pre.std.push_back(1.0f + static_cast<float>(in.below(100)));
        }
        pre.reverse_channels = in.chance(64);
        pre.user_layout = in.chance(128) ? graph::Layout::kNHWC : graph::Layout::kNCHW;
        pre.user_dtype = in.chance(128) ? graph::DType::kUInt8 : graph::DType::kFloat32;
    }
    std::vector<uint8_t> data = in.bytes(1 << 16);
    rknn_input input{};
    input.index = 0;
    input.buf = data.empty() ? nullptr : data.data();
    input.size = static_cast<uint32_t>(data.size());
    input.pass_through = in.u8() & 1;
    input.type = static_cast<rknn_tensor_type>(in.below(14));
    input.fmt = static_cast<rknn_tensor_format>(in.below(7));
    auto converted = rknn::runtime::convert_input(input, declared, with_pre ? &pre : nullptr);
    if (!converted.is_ok()) return;
    // What came out has the declared shape and type.
    if (converted.value().shape() != declared.shape || converted.value().dtype() != declared.dtype) std::abort();
}

void fuzz_convert_output(FuzzBytes& in) {
    graph::Tensor declared = declared_tensor(in);
    HostTensor value(declared.dtype, declared.shape);
    value.quant = declared.quant;
    in.fill(value.raw(), value.byte_size());
    const bool want_float = in.u8() & 1;
    const size_t needed = rknn::runtime::output_bytes(declared, want_float);
    const size_t given = in.chance(192) ? needed : in.below(static_cast<uint32_t>(needed) + 64);
    std::vector<uint8_t> dst(given);
    const rknn::Status status = rknn::runtime::convert_output(value, want_float, dst.data(), dst.size());
    if (given < needed && status.is_ok()) std::abort();  // a short buffer must be refused
}

// Bit for bit, except that any fp16 NaN equals any other (a row may pass
// through float32 on its way, which keeps NaNs but not their payloads).
bool same_values(const HostTensor& a, const HostTensor& b) {
    if (a.byte_size() != b.byte_size()) return false;
    if (a.dtype() != graph::DType::kFloat16) return std::memcmp(a.raw(), b.raw(), a.byte_size()) == 0;
    const auto* x = static_cast<const uint16_t*>(a.raw());
    const auto* y = static_cast<const uint16_t*>(b.raw());
    auto is_nan = [](uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; };
    for (int64_t i = 0; i < a.numel(); ++i)
        if (x[i] != y[i] && !(is_nan(x[i]) && is_nan(y[i]))) return false;
    return true;
}

void fuzz_native(FuzzBytes& in) {
    const rknn::hw::SocProfile* soc = rknn::hw::find_soc(kSocs[in.below(sizeof(kSocs) / sizeof(kSocs[0]))]);
    if (soc == nullptr) return;
    const rknn::runtime::NativeForm form = rknn::runtime::native_form(*soc);
    graph::Tensor declared = declared_tensor(in);
    if (declared.dtype != graph::DType::kInt8 && declared.dtype != graph::DType::kFloat16) return;
    if (!rknn::runtime::has_native_cube(declared)) return;
    const uint32_t packed = in.chance(64) ? rknn::runtime::packed_image_row_pixels(declared, form) : 0;
    const uint64_t needed = packed > 0 ? rknn::runtime::packed_image_bytes(declared, form)
                                       : rknn::runtime::native_cube_bytes(declared, form);
    if (needed > (8u << 20)) return;
    const uint64_t given = in.chance(192) ? needed : in.below(static_cast<uint32_t>(needed) + 64);
    std::vector<uint8_t> device(given);
    in.fill(device.data(), device.size());
    HostTensor value(declared.dtype, declared.shape);
    in.fill(value.raw(), value.byte_size());
    const rknn::Status packed_status = rknn::runtime::pack_native(value, device.data(), device.size(), form, packed);
    auto unpacked = rknn::runtime::unpack_native(device.data(), device.size(), declared, form, packed);
    // A buffer below the cube's size may still hold what is written (RK356x
    // cubes leave room for 32-channel groups): ASan checks nothing is written
    // or read past `given`, the exact size of `device`.
    if (given >= needed && packed_status.is_ok() && unpacked.is_ok() && !same_values(value, unpacked.value())) {
        std::abort();  // packing and unpacking give the value back
    }
}

void fuzz_b_layout(FuzzBytes& in) {
    rknn_matmul_info info;
    std::memset(&info, 0, sizeof(info));
    in.fill(&info, sizeof(info));  // every field, the reserved bytes too
    const int k = static_cast<int>(in.below(1100)) - 2;
    const int n = static_cast<int>(in.below(1100)) - 2;
    info.K = in.chance(200) ? k : info.K;
    info.N = in.chance(200) ? n : info.N;
    // The largest B a layout of K x N takes: 4-byte elements, both sides
    // padded to 64 (a client sizes these from rknn_matmul_io_attr).
    const size_t kk = static_cast<size_t>(std::max(k, 0)) + 64, nn = static_cast<size_t>(std::max(n, 0)) + 64;
    std::vector<uint8_t> src(kk * nn * 4), dst(kk * nn * 4);
    in.fill(src.data(), std::min<size_t>(src.size(), 4096));
    (void)rknn_B_normal_layout_to_native_layout(src.data(), dst.data(), k, n, &info);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool quiet = [] {
        if (std::getenv("RKNN_FUZZ_LOG") == nullptr)
            rknn::log::set_sink([](const std::string&) {});  // RKNN_FUZZ_LOG=1 to debug
        return true;
    }();
    (void)quiet;
    FuzzBytes in(data, size);
    switch (in.below(4)) {
        case 0:
            fuzz_convert_input(in);
            break;
        case 1:
            fuzz_convert_output(in);
            break;
        case 2:
            fuzz_native(in);
            break;
        default:
            fuzz_b_layout(in);
            break;
    }
    return 0;
}
