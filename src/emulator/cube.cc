#include "emulator/cube.h"

namespace rknn::emulator {

uint64_t CubeLayout::span() const {
    if (!valid()) return 0;
    return static_cast<uint64_t>(surfaces() - 1) * surf_stride + static_cast<uint64_t>(height - 1) * row_stride +
           static_cast<uint64_t>(width) * atom_bytes;
}

CubeLayout packed_cube(uint64_t base, int width, int height, int channels, int elem_bytes, int atom_bytes) {
    CubeLayout c;
    c.base = base;
    c.width = width;
    c.height = height;
    c.channels = channels;
    c.elem_bytes = elem_bytes;
    c.atom_bytes = atom_bytes;
    c.row_stride = static_cast<uint64_t>(width) * atom_bytes;
    c.surf_stride = c.row_stride * static_cast<uint64_t>(height);
    return c;
}

StatusOr<uint8_t*> map_cube(TaskContext& ctx, const CubeLayout& cube, bool for_write, const char* what) {
    if (!cube.valid()) return ctx.bad_program("%s: empty cube (%dx%dx%d)", what, cube.width, cube.height, cube.channels);
    return ctx.map(cube.base, cube.span(), for_write, what);
}

}  // namespace rknn::emulator
