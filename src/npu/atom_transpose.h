// Moves between channel planes (NCHW) and 16-byte atoms (the NPU cube's
// NC1HWC2 surfaces) for one surface whose channels are all present: 16 int8
// or 8 float16 channels. A block of pixels of every channel is a small
// matrix whose transpose is the block's atoms, so a vector transpose (4 or 3
// rounds of interleaves on 128-bit vectors, Highway) replaces a strided
// store per element. Used by pack_native / unpack_native_into for every CPU
// step that reads or writes a cube, and by native_layout's int8 cubes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rknn::npu {

// `pixels` pixels of `channels` channels (up to an atom: 16 of 1 byte or 8
// of 2 bytes) from planes `plane_bytes` apart starting at `planes` into
// atoms back to back at `atoms`; the lanes beyond `channels` become zero.
void planes_to_atoms(const uint8_t* planes, size_t plane_bytes, size_t elem_bytes, size_t channels, size_t pixels,
                     uint8_t* atoms);

// The reverse: the first `channels` lanes of atoms back to back into the
// channel planes.
void atoms_to_planes(const uint8_t* atoms, size_t elem_bytes, size_t channels, size_t pixels, uint8_t* planes,
                     size_t plane_bytes);

// The Highway target the two run in ("AVX3", "NEON", ...).
const char* atom_transpose_target();

}  // namespace rknn::npu
