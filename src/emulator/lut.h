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

class LutTables {
public:
    static constexpr int kEntries = 513;

    void reset();
    // Side effects of the two access registers, applied when written.
    void write_access_cfg(uint32_t value);
    void write_access_data(uint32_t value);

    int16_t entry(int table, int index) const { return tables_[table][index]; }
    // The stage's output for x, with the LUT registers of the executer group.
    int64_t evaluate(const RegisterFile& regs, int64_t x) const;

private:
    std::array<std::array<int16_t, kEntries>, 2> tables_{};
    int table_ = 0;
    int address_ = 0;
    bool writing_ = false;
};

}  // namespace rknn::emulator
