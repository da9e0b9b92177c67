// The exact form of the int8 Add lanes (DpuInt8Lanes::pairs), in Highway
// vectors: each lane pairs its source byte with its EW operand byte as two
// 16-bit values, and one pairwise multiply-add (vpmaddwd on x86, two
// multiply-long steps on NEON) gives src x bs_mul + op x ew_mul in int32.
// The base, the EW clamp, OUT_CVT's half-to-even shift and offset follow;
// the narrowing to int8 saturates, which is the final [-128, 127] clamp.
// Chosen for each CPU at run time (hwy/foreach_target.h).
#pragma once

#include <cstdint>

#include "emulator/kernels/dpu_int8_lanes.h"

namespace rknn::emulator {

// One output row of a plan with `pairs` set; arguments as dpu_int8_lanes_row.
void dpu_int8_pairs_row(const DpuInt8Lanes& lanes, const int8_t* src, uint64_t src_surf, int width, const int8_t* ew,
                        uint64_t ew_surf, uint8_t* out, uint64_t out_surf);

// The Highway target this CPU runs the kernel in ("AVX3", "AVX2", "NEON", ...).
const char* dpu_int8_pairs_target();

// Process-wide switch (on by default): off, plans with `pairs` set run the
// staged int32 lanes instead, so that tests and benchmarks compare the two.
void set_int8_pairs(bool enabled);
bool int8_pairs_enabled();

}  // namespace rknn::emulator
