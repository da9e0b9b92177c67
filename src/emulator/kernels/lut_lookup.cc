#include "emulator/kernels/lut_lookup.h"

#include <algorithm>

namespace rknn::emulator {

namespace {

using LookupFn = int (*)(const LutMemoView&, const int32_t*, int, int8_t*);

struct Choice {
    LookupFn fn;
    const char* name;
};

Choice choose() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
        return {detail::lut_lookup_avx512, "avx512"};
    if (__builtin_cpu_supports("avx2")) return {detail::lut_lookup_avx2, "avx2"};
#endif
    return {detail::lut_lookup_generic, "generic"};
}

const Choice& chosen() {
    static const Choice c = choose();
    return c;
}

}  // namespace

namespace detail {

int lut_lookup_generic(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes) {
    for (int i = 0; i < count; ++i) {
        const int32_t v = std::min(std::max(values[i], memo.clamp_lo), memo.clamp_hi);
        // Unsigned difference: values below `first` wrap to indices beyond the span.
        const uint32_t index = static_cast<uint32_t>(v) - static_cast<uint32_t>(memo.first);
        if (index >= memo.span || memo.table[index] == kLutMemoUnset) return i;
        codes[i] = static_cast<int8_t>(memo.table[index]);
    }
    return count;
}

}  // namespace detail

int lut_lookup(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes) {
    return chosen().fn(memo, values, count, codes);
}

const char* lut_lookup_isa() { return chosen().name; }

}  // namespace rknn::emulator
