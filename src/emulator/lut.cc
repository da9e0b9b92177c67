#include "emulator/lut.h"

#include "emulator/fixed_point.h"
#include "emulator/register_file.h"

namespace rknn::emulator {

namespace f = hw::field;

void LutTables::reset() {
    for (auto& t : tables_) t.fill(0);
    table_ = 0;
    address_ = 0;
    writing_ = false;
}

void LutTables::write_access_cfg(uint32_t value) {
    address_ = static_cast<int>(f::DPU_LUT_ACCESS_CFG_LUT_ADDR.get(value));
    table_ = static_cast<int>(f::DPU_LUT_ACCESS_CFG_LUT_TABLE_ID.get(value));
    writing_ = f::DPU_LUT_ACCESS_CFG_LUT_ACCESS_TYPE.get(value) != 0;
}

void LutTables::write_access_data(uint32_t value) {
    if (!writing_ || address_ >= kEntries) return;  // reads and overruns change nothing
    tables_[table_][address_++] = static_cast<int16_t>(value & 0xffff);
}

LutParams read_lut_params(const RegisterFile& regs) {
    LutParams p;
    p.le_start = static_cast<int32_t>(regs.exec(hw::reg::DPU_LUT_LE_START));
    p.lo_start = static_cast<int32_t>(regs.exec(hw::reg::DPU_LUT_LO_START));
    p.lo_end = static_cast<int32_t>(regs.exec(hw::reg::DPU_LUT_LO_END));
    p.lo_select = static_cast<int>(regs.exec(f::DPU_LUT_INFO_LUT_LO_INDEX_SELECT)) & 31;
    p.le_select = static_cast<int>(regs.exec(f::DPU_LUT_INFO_LUT_LE_INDEX_SELECT)) & 31;
    p.le_uflow_scale = static_cast<int16_t>(regs.exec(f::DPU_LUT_LE_SLOPE_SCALE_LUT_LE_SLOPE_UFLOW_SCALE));
    p.le_uflow_shift = static_cast<int>(regs.exec(f::DPU_LUT_LE_SLOPE_SHIFT_LUT_LE_SLOPE_UFLOW_SHIFT));
    p.lo_oflow_scale = static_cast<int16_t>(regs.exec(f::DPU_LUT_LO_SLOPE_SCALE_LUT_LO_SLOPE_OFLOW_SCALE));
    p.lo_oflow_shift = static_cast<int>(regs.exec(f::DPU_LUT_LO_SLOPE_SHIFT_LUT_LO_SLOPE_OFLOW_SHIFT));
    return p;
}

int64_t LutTables::evaluate(const LutParams& p, int64_t x) const {
    const bool use_lo = x >= p.lo_start;
    const int sel = use_lo ? p.lo_select : p.le_select;
    const int64_t start = use_lo ? p.lo_start : p.le_start;
    const auto& table = tables_[use_lo ? 1 : 0];
    if (x < start) return table[0] + shift_round(mul_wide(x - start, p.le_uflow_scale), p.le_uflow_shift);  // LE underflow
    const int64_t u = x - start;
    const int64_t i = u >> sel;
    if (i >= kEntries - 1) {  // at or beyond the table's last entry
        const int64_t last_x = start + (int64_t{kEntries - 1} << sel);
        const int64_t end = use_lo ? p.lo_end : last_x;
        int64_t y = table[kEntries - 1];
        if (use_lo && x > end) y += shift_round(mul_wide(x - end, p.lo_oflow_scale), p.lo_oflow_shift);
        return y;
    }
    const int64_t frac = u & ((int64_t{1} << sel) - 1);
    const int64_t a = table[static_cast<size_t>(i)];
    const int64_t b = table[static_cast<size_t>(i) + 1];
    return a + shift_round((b - a) * frac, sel);
}

}  // namespace rknn::emulator
