// The LUT memo's lookup loop (lut_memo.h): each value is clamped to
// [clamp_lo, clamp_hi] (outside it the code is constant), and its code is
// table[value - first] when that lies inside the table and is filled. The loop
// stops at the first value that is outside the table or not yet filled, and
// returns how many values it looked up; the caller evaluates that one and goes
// on. Gather instructions do 16 (AVX-512) or 8 (AVX2) lookups a step.
#pragma once

#include <cstdint>
#include <climits>

namespace rknn::emulator {

// The value of an entry not yet filled.
constexpr int16_t kLutMemoUnset = 0x7fff;

struct LutMemoView {
    const int16_t* table = nullptr;  // `span` entries and one more readable int16 (gathers load 32 bits)
    int32_t first = 0;               // the value of entry 0
    uint32_t span = 0;
    int32_t clamp_lo = INT32_MIN, clamp_hi = INT32_MAX;
};

int lut_lookup(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes);

// Which implementation lut_lookup uses on this CPU ("avx512", "avx2", "generic").
const char* lut_lookup_isa();

namespace detail {
int lut_lookup_generic(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes);
#if defined(__x86_64__)
int lut_lookup_avx2(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes);
int lut_lookup_avx512(const LutMemoView& memo, const int32_t* values, int count, int8_t* codes);
#endif
}  // namespace detail

}  // namespace rknn::emulator
