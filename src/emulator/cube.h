// Feature cubes in the NPU's NC1HWC2 layout: channels are grouped into atoms
// of 16 bytes (C2 = 16 int8, 8 fp16, 4 int32/fp32 channels; RK356x atoms are
// 8 bytes); a surface holds one atom per pixel in row-major order; surfaces
// follow each other at a programmable stride (hw-facts 3.7).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "emulator/task_context.h"
#include "hw/registers.h"

namespace rknn::emulator {

constexpr int kAtomBytes = 16;

struct CubeLayout {
    uint64_t base = 0;
    int width = 0;
    int height = 0;
    int channels = 0;      // channels present (the aligned count the unit processes)
    int elem_bytes = 1;
    int atom_bytes = kAtomBytes;
    uint64_t row_stride = 0;   // bytes between rows of one surface
    uint64_t surf_stride = 0;  // bytes between surfaces

    int c2() const { return atom_bytes / elem_bytes; }
    int surfaces() const { return (channels + c2() - 1) / c2(); }
    uint64_t offset(int c, int h, int w) const {
        return static_cast<uint64_t>(c / c2()) * surf_stride + static_cast<uint64_t>(h) * row_stride +
               static_cast<uint64_t>(w) * atom_bytes + static_cast<uint64_t>(c % c2()) * elem_bytes;
    }
    // Bytes from base to the end of the last atom touched (whole atoms are moved).
    uint64_t span() const;
    bool valid() const { return width > 0 && height > 0 && channels > 0; }
};

// A packed cube: rows back to back, surfaces back to back.
CubeLayout packed_cube(uint64_t base, int width, int height, int channels, int elem_bytes,
                       int atom_bytes = kAtomBytes);

// Maps the cube's bytes for a unit, or fails with an IOMMU fault naming `what`.
StatusOr<uint8_t*> map_cube(TaskContext& ctx, const CubeLayout& cube, bool for_write, const char* what);

}  // namespace rknn::emulator
