// The DPU lookup table (hw-facts 4.1): two tables of 513 signed 16-bit
// entries, LE (table 0) and LO (table 1), loaded through LUT_ACCESS_CFG and
// auto-incrementing LUT_ACCESS_DATA writes. Table contents are not part of
// the register groups; they persist until overwritten or reset.
//
// Evaluation model (int pipeline), documented in docs/emulator.md:
//   x <  LO_START: LE table, index domain starts at LE_START
//   x >= LO_START: LO table, index domain starts at LO_START
//   u = x - start, i = u >> sel, f = u & (2^sel - 1)
//   y = T[i] + round((T[i+1] - T[i]) * f / 2^sel)
// Inputs below LE_START read LE[0], above LO_END read LO[512] (the slope
// registers extrapolate: y += (distance * SLOPE_SCALE) >> SLOPE_SHIFT).
#pragma once

#include <array>
#include <cstdint>

namespace rknn::emulator {

class RegisterFile;

// The LUT registers of one task, read once (they cannot change while it runs).
struct LutParams {
    int64_t le_start = 0, lo_start = 0, lo_end = 0;
    int le_select = 0, lo_select = 0;
    int64_t le_uflow_scale = 0, lo_oflow_scale = 0;
    int le_uflow_shift = 0, lo_oflow_shift = 0;
};
LutParams read_lut_params(const RegisterFile& regs);

class LutTables {
public:
    static constexpr int kEntries = 513;

    void reset();
    // Side effects of the two access registers, applied when written.
    void write_access_cfg(uint32_t value);
    void write_access_data(uint32_t value);

    int16_t entry(int table, int index) const { return tables_[table][index]; }
    bool same_contents(const LutTables& other) const { return tables_ == other.tables_; }
    // The stage's output for x, with the LUT registers of the executer group.
    int64_t evaluate(const LutParams& p, int64_t x) const;

private:
    std::array<std::array<int16_t, kEntries>, 2> tables_{};
    int table_ = 0;
    int address_ = 0;
    bool writing_ = false;
};

}  // namespace rknn::emulator
