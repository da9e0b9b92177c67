#include "emulator/kernels/depthwise_s8.h"

#include <cstring>

namespace rknn::emulator {

namespace {

using RowFn = void (*)(const DepthwiseRow&);

struct Choice {
    RowFn fn;
    const char* name;
};

Choice choose() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
        return {detail::depthwise_row_s8_avx512, "avx512"};
    if (__builtin_cpu_supports("avx2")) return {detail::depthwise_row_s8_avx2, "avx2"};
#endif
    return {detail::depthwise_row_s8_generic, "generic"};
}

const Choice& chosen() {
    static const Choice c = choose();
    return c;
}

}  // namespace

namespace detail {

void depthwise_row_s8_generic(const DepthwiseRow& row) {
    constexpr int kMaxLanes = 16;
    for (int x = 0; x < row.width; ++x) {
        int32_t acc[kMaxLanes] = {};
        const uint8_t* window = row.origin + x * row.step;
        for (int t = 0; t < row.taps; ++t) {
            const auto* px = reinterpret_cast<const int8_t*>(window + row.tap_offsets[t]);
            const int32_t* w = row.weights + static_cast<size_t>(t) * row.lanes;
            for (int l = 0; l < row.lanes; ++l) acc[l] += px[l] * w[l];
        }
        std::memcpy(row.out + static_cast<size_t>(x) * row.out_stride, acc, sizeof(int32_t) * row.store_lanes);
    }
}

}  // namespace detail

void depthwise_row_s8(const DepthwiseRow& row) { chosen().fn(row); }

const char* depthwise_s8_isa() { return chosen().name; }

}  // namespace rknn::emulator
