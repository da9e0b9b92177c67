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

bool band_kernel_runs() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi");
#else
    return false;
#endif
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

size_t depthwise_band_weight_words(int kh, int kw) {
    constexpr int kLanes = 16;
    return static_cast<size_t>(kh) * ((kw + 3) / 4) * kLanes + kLanes;
}

void pack_depthwise_band_weights(const int32_t* widened, int kh, int kw, int32_t* out) {
    constexpr int kLanes = 16;
    const int groups = (kw + 3) / 4;
    int32_t* start = out + static_cast<size_t>(kh) * groups * kLanes;
    std::memset(out, 0, depthwise_band_weight_words(kh, kw) * sizeof(int32_t));
    auto* bytes = reinterpret_cast<int8_t*>(out);
    for (int ky = 0; ky < kh; ++ky)
        for (int kx = 0; kx < kw; ++kx)
            for (int c = 0; c < kLanes; ++c) {
                const int32_t w = widened[(ky * kw + kx) * kLanes + c];
                bytes[((ky * groups + kx / 4) * kLanes + c) * 4 + kx % 4] = static_cast<int8_t>(w);
                start[c] -= 128 * w;
            }
}

bool depthwise_band_s8_available() {
    static const bool runs = band_kernel_runs();
    return runs;
}

void depthwise_band_s8(const DepthwiseBand& band) {
#if defined(__x86_64__)
    detail::depthwise_band_s8_vnni(band);
#else
    (void)band;  // callers ask depthwise_band_s8_available() first
#endif
}

}  // namespace rknn::emulator
