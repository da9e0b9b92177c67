// Highway re-includes this file once per SIMD target (foreach_target.h); the
// part under HWY_ONCE is compiled once and dispatches to the best target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "npu/atom_transpose.cc"
#include <hwy/foreach_target.h>  // must come before highway.h

#include <hwy/highway.h>

#include <cstring>

#include "npu/atom_transpose.h"

HWY_BEFORE_NAMESPACE();
namespace rknn::npu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

constexpr size_t kAtom = 16;  // bytes per atom, and per 128-bit row

// Element by element: the tail of a row, and targets without 128-bit vectors
// or with sizeless ones (SVE, RVV: no arrays of them for the transpose).
void planes_to_atoms_plain(const uint8_t* planes, size_t plane_bytes, size_t elem, size_t channels, size_t pixels,
                           uint8_t* atoms) {
    for (size_t p = 0; p < pixels; ++p) {
        std::memset(atoms + p * kAtom, 0, kAtom);
        for (size_t c = 0; c < channels; ++c)
            std::memcpy(atoms + p * kAtom + c * elem, planes + c * plane_bytes + p * elem, elem);
    }
}

void atoms_to_planes_plain(const uint8_t* atoms, size_t elem, size_t channels, size_t pixels, uint8_t* planes,
                           size_t plane_bytes) {
    for (size_t p = 0; p < pixels; ++p)
        for (size_t c = 0; c < channels; ++c)
            std::memcpy(planes + c * plane_bytes + p * elem, atoms + p * kAtom + c * elem, elem);
}

#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
using D8 = hn::Full128<uint8_t>;
using V8 = hn::Vec<D8>;

// One interleave round over `count` rows: rows 2i and 2i+1, viewed as lanes
// of type T, become their lower and upper interleaves.
template <typename T, size_t kRows>
HWY_INLINE void interleave_round(V8 (&rows)[kRows]) {
    const D8 d8;
    const hn::Repartition<T, D8> d;
    V8 next[kRows];
    for (size_t i = 0; i < kRows / 2; ++i) {
        const auto a = hn::BitCast(d, rows[i]), b = hn::BitCast(d, rows[i + kRows / 2]);
        next[2 * i] = hn::BitCast(d8, hn::InterleaveLower(d, a, b));
        next[2 * i + 1] = hn::BitCast(d8, hn::InterleaveUpper(d, a, b));
    }
    for (size_t i = 0; i < kRows; ++i) rows[i] = next[i];
}

// A square transpose of kRows rows of kRows elements (16 bytes or 8 halves
// a row). Each round pairs row i with row i + kRows/2 (a perfect shuffle of
// the row and column index bits), at twice the element width the round
// before; after the last one row j holds column j, provided the rows went in
// in bit-reversed order (load_order): the narrow first round would otherwise
// leave the columns bit-reversed within each row.
template <size_t kRows>
constexpr size_t load_order(size_t r) {
    size_t reversed = 0;
    for (size_t bit = 1, mirror = kRows / 2; bit < kRows; bit <<= 1, mirror >>= 1)
        if (r & bit) reversed |= mirror;
    return reversed;
}

template <size_t kRows>
HWY_INLINE void transpose(V8 (&rows)[kRows]) {
    if constexpr (kRows == 16) interleave_round<uint8_t>(rows);
    interleave_round<uint16_t>(rows);
    interleave_round<uint32_t>(rows);
    interleave_round<uint64_t>(rows);
}

// Channels beyond `channels` read as zero rows.
template <size_t kRows>
void planes_to_atoms_blocks(const uint8_t* planes, size_t plane_bytes, size_t channels, size_t pixels, uint8_t* atoms) {
    const D8 d8;
    constexpr size_t elem = kAtom / kRows;
    size_t p = 0;
    for (; p + kRows <= pixels; p += kRows) {  // kRows pixels of kRows channels
        V8 rows[kRows];
        for (size_t r = 0; r < kRows; ++r) {
            const size_t c = load_order<kRows>(r);
            rows[r] = c < channels ? hn::LoadU(d8, planes + c * plane_bytes + p * elem) : hn::Zero(d8);
        }
        transpose<kRows>(rows);
        for (size_t i = 0; i < kRows; ++i) hn::StoreU(rows[i], d8, atoms + (p + i) * kAtom);
    }
    planes_to_atoms_plain(planes + p * elem, plane_bytes, elem, channels, pixels - p, atoms + p * kAtom);
}

// Only the rows of the first `channels` channels are stored.
template <size_t kRows>
void atoms_to_planes_blocks(const uint8_t* atoms, size_t channels, size_t pixels, uint8_t* planes, size_t plane_bytes) {
    const D8 d8;
    constexpr size_t elem = kAtom / kRows;
    size_t p = 0;
    for (; p + kRows <= pixels; p += kRows) {
        V8 rows[kRows];
        for (size_t r = 0; r < kRows; ++r) rows[r] = hn::LoadU(d8, atoms + (p + load_order<kRows>(r)) * kAtom);
        transpose<kRows>(rows);
        for (size_t c = 0; c < channels; ++c) hn::StoreU(rows[c], d8, planes + c * plane_bytes + p * elem);
    }
    atoms_to_planes_plain(atoms + p * kAtom, elem, channels, pixels - p, planes + p * elem, plane_bytes);
}
#endif

void PlanesToAtoms(const uint8_t* planes, size_t plane_bytes, size_t elem, size_t channels, size_t pixels,
                   uint8_t* atoms) {
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
    if (elem == 1) return planes_to_atoms_blocks<16>(planes, plane_bytes, channels, pixels, atoms);
    if (elem == 2) return planes_to_atoms_blocks<8>(planes, plane_bytes, channels, pixels, atoms);
#endif
    planes_to_atoms_plain(planes, plane_bytes, elem, channels, pixels, atoms);
}

void AtomsToPlanes(const uint8_t* atoms, size_t elem, size_t channels, size_t pixels, uint8_t* planes,
                   size_t plane_bytes) {
#if HWY_TARGET != HWY_SCALAR && !HWY_HAVE_SCALABLE
    if (elem == 1) return atoms_to_planes_blocks<16>(atoms, channels, pixels, planes, plane_bytes);
    if (elem == 2) return atoms_to_planes_blocks<8>(atoms, channels, pixels, planes, plane_bytes);
#endif
    atoms_to_planes_plain(atoms, elem, channels, pixels, planes, plane_bytes);
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace rknn::npu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rknn::npu {

HWY_EXPORT(PlanesToAtoms);
HWY_EXPORT(AtomsToPlanes);
HWY_EXPORT(TargetName);

void planes_to_atoms(const uint8_t* planes, size_t plane_bytes, size_t elem_bytes, size_t channels, size_t pixels,
                     uint8_t* atoms) {
    HWY_DYNAMIC_DISPATCH(PlanesToAtoms)(planes, plane_bytes, elem_bytes, channels, pixels, atoms);
}

void atoms_to_planes(const uint8_t* atoms, size_t elem_bytes, size_t channels, size_t pixels, uint8_t* planes,
                     size_t plane_bytes) {
    HWY_DYNAMIC_DISPATCH(AtomsToPlanes)(atoms, elem_bytes, channels, pixels, planes, plane_bytes);
}

const char* atom_transpose_target() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace rknn::npu
#endif  // HWY_ONCE
