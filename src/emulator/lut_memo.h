// The codes a LUT task's value-only tail gives: the LUT, the EW stage's ReLU /
// ReLUX and OUT_CVT to int8 depend on the value reaching the LUT alone, not on
// its channel or pixel. Each host thread keeps the codes of the values it has
// met, per tail configuration and table contents, across tasks and runs: a
// layer that runs again finds its codes already computed, and a value is
// evaluated once per thread however often it occurs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "emulator/fixed_point.h"
#include "emulator/kernels/lut_lookup.h"
#include "emulator/lut.h"

namespace rknn::emulator {

// Everything after the LUT's input value that decides the output code.
struct LutTail {
    LutParams lut;
    bool relu = false;             // EW ReLU
    bool relux = false;            // EW ReLUX, capped at relux_cap
    int64_t relux_cap = 0;
    int64_t out_scale = 1;         // OUT_CVT
    int out_shift = 0;
    Rounding out_round = Rounding::kHalfEven;
    int64_t out_offset = 0;

    bool operator==(const LutTail& o) const;
};

class LutMemo {
public:
    LutMemo(const LutTables& tables, const LutTail& tail);

    int8_t code(int32_t v) {
        v = std::min(std::max(v, view_.clamp_lo), view_.clamp_hi);
        const uint32_t i = static_cast<uint32_t>(v) - static_cast<uint32_t>(view_.first);
        if (i < view_.span) {
            int16_t& m = codes_[i];
            if (m == kLutMemoUnset) m = evaluate(v);
            return static_cast<int8_t>(m);
        }
        return evaluate(v);
    }

    // The codes of `count` values: looked up where known, evaluated (and
    // kept) where not.
    void codes(const int32_t* values, int count, int8_t* out) {
        int i = 0;
        while (i < count) {
            i += lut_lookup(view_, values + i, count - i, out + i);
            if (i < count) {
                out[i] = code(values[i]);
                ++i;
            }
        }
    }

    // Whether this memo serves `tail` with these table contents.
    bool serves(const LutTables& tables, const LutTail& tail) const;

private:
    int8_t evaluate(int64_t v) const;

    LutTables tables_;  // a copy: the core's tables change with the next task's loads
    LutTail tail_;
    std::vector<int16_t> codes_;  // view_.span entries and one more (lut_lookup reads 32 bits)
    LutMemoView view_;
};

// This thread's memo for the tail and tables (made when first met; the
// oldest is dropped when the thread holds too many).
LutMemo& lut_memo_for(const LutTables& tables, const LutTail& tail);

}  // namespace rknn::emulator
