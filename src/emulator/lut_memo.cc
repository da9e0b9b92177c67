#include "emulator/lut_memo.h"

#include <algorithm>
#include <climits>
#include <memory>

namespace rknn::emulator {

namespace {

// Largest LUT window (LE_START to LO_END) that is memoised; wider ones are
// evaluated value by value.
constexpr int64_t kMaxLutMemo = int64_t{1} << 17;
// Memos per host thread: one per LUT layer of a large model. Each holds two
// bytes per value of its window: 64 KiB for the code generator's 32769-value
// window, 256 KiB at most (kMaxLutMemo).
constexpr size_t kMemosPerThread = 128;

bool same_params(const LutParams& a, const LutParams& b) {
    return a.le_start == b.le_start && a.lo_start == b.lo_start && a.lo_end == b.lo_end && a.le_select == b.le_select &&
           a.lo_select == b.lo_select && a.le_uflow_scale == b.le_uflow_scale && a.lo_oflow_scale == b.lo_oflow_scale &&
           a.le_uflow_shift == b.le_uflow_shift && a.lo_oflow_shift == b.lo_oflow_shift;
}

struct ThreadMemos {
    std::vector<std::unique_ptr<LutMemo>> memos;
    size_t next_victim = 0;
};

}  // namespace

bool LutTail::operator==(const LutTail& o) const {
    return same_params(lut, o.lut) && relu == o.relu && relux == o.relux && relux_cap == o.relux_cap &&
           out_scale == o.out_scale && out_shift == o.out_shift && out_round == o.out_round &&
           out_offset == o.out_offset;
}

// The memo covers the LUT window [LE_START, LO_END], widened by one value on
// each side where every value beyond the window gives the same code: there
// all of them are clamped to that one value. Below LE_START the LE table's
// first entry is extrapolated with the underflow slope (constant when its
// scale is 0); above LO_END the LO table's last entry with the overflow slope,
// provided the LO window reaches that entry (values short of it interpolate).
LutMemo::LutMemo(const LutTables& tables, const LutTail& tail) : tables_(tables), tail_(tail) {
    const LutParams& p = tail.lut;
    const int64_t span = p.lo_end - p.le_start + 1;
    if (span > 0 && span <= kMaxLutMemo) {
        const bool flat_below = p.le_uflow_scale == 0 && p.le_start < p.lo_start && p.le_start > INT32_MIN;
        const bool flat_above = p.lo_oflow_scale == 0 && p.lo_end >= p.lo_start && p.lo_end < INT32_MAX &&
                                ((p.lo_end + 1 - p.lo_start) >> p.lo_select) >= LutTables::kEntries - 1;
        const int64_t first = flat_below ? p.le_start - 1 : p.le_start;
        const int64_t last = flat_above ? p.lo_end + 1 : p.lo_end;
        view_.first = static_cast<int32_t>(first);
        view_.span = static_cast<uint32_t>(last - first + 1);
        if (flat_below) view_.clamp_lo = static_cast<int32_t>(first);
        if (flat_above) view_.clamp_hi = static_cast<int32_t>(last);
    }
    codes_.assign(static_cast<size_t>(view_.span) + 1, kLutMemoUnset);
    view_.table = codes_.data();
}

bool LutMemo::serves(const LutTables& tables, const LutTail& tail) const {
    return tail_ == tail && tables_.same_contents(tables);
}

int8_t LutMemo::evaluate(int64_t v) const {
    v = tables_.evaluate(tail_.lut, v);
    if (tail_.relu && v < 0) v = 0;
    if (tail_.relux) v = std::min(v, tail_.relux_cap);
    return static_cast<int8_t>(
        saturate(shift_round(v * tail_.out_scale, tail_.out_shift, tail_.out_round) + tail_.out_offset, -128, 127));
}

LutMemo& lut_memo_for(const LutTables& tables, const LutTail& tail) {
    thread_local ThreadMemos mine;
    for (auto& m : mine.memos) {
        if (m->serves(tables, tail)) return *m;
    }
    auto memo = std::make_unique<LutMemo>(tables, tail);
    if (mine.memos.size() < kMemosPerThread) {
        mine.memos.push_back(std::move(memo));
        return *mine.memos.back();
    }
    std::unique_ptr<LutMemo>& slot = mine.memos[mine.next_victim];
    mine.next_victim = (mine.next_victim + 1) % kMemosPerThread;
    slot = std::move(memo);
    return *slot;
}

}  // namespace rknn::emulator
