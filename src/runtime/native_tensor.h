// The runtime's device form of a feature tensor: an NC1HWC2 cube of 16-byte
// atoms (int8: 16 channels, fp16: 8 channels per atom) with dense surfaces of
// H x W atoms, the form every NPU op reads and writes (npu/prepared_op.h);
// on RK3566/RK3568, 8-byte atoms and padded surfaces (NativeForm).
// [1, C, H, W] tensors are such cubes as they are, [1, K] rows as a one-pixel
// cube of K channels. Model inputs of 1, 3 or 4 channels may instead be
// channel-packed images (below).
#pragma once

#include <cstdint>

#include "base/status.h"
#include "cpu/host_tensor.h"
#include "graph/tensor.h"
#include "hw/soc_profile.h"

namespace rknn::runtime {

// How the SoC lays out cubes. RK3588: 16-byte atoms, dense surfaces.
// RK3566/RK3568 (`rk356x`, int8 only): 8-byte atoms, surfaces of
// align(H x W, 4) pixels (npu::rk356x_surface_bytes), room for align(C, 32)
// channels (the CNA reads channels in sixteens and a depthwise group writes
// 32), of which the NATIVE attributes show ceil(C / 8) surfaces; the only
// channel-packed images are 3-channel int8 ones, stored biased (below).
struct NativeForm {
    bool rk356x = false;
};
NativeForm native_form(const hw::SocProfile& soc);

// True when `t` is int8 or fp16 with a cube shape.
bool has_native_cube(const graph::Tensor& t);
// Bytes of the cube's device home (0 when has_native_cube is false).
uint64_t native_cube_bytes(const graph::Tensor& t, const NativeForm& form);
// [1, C1, H, W, C2] of the cube and the bytes they span, for the NATIVE_* attributes.
struct CubeDims {
    uint32_t c1 = 0, h = 0, w = 0, c2 = 0;
    uint64_t bytes = 0;
};
CubeDims native_cube_dims(const graph::Tensor& t, const NativeForm& form);
// C, H, W of the cube (false when there is none).
bool native_cube_shape(const graph::Tensor& t, int* c, int* h, int* w);

// The other device form, for graph inputs that only convolutions read:
// a [1, C, H, W] int8/fp16 image of 1, 3 or 4 channels kept channel-packed
// NHWC as the vendor keeps native inputs (npu/native_layout.h). Its row
// pitch in pixels (the NATIVE attr's w_stride), 0 for other tensors.
// RK356x: int8 images of 3 channels, which its CNA reads in ARGB mode.
uint32_t packed_image_row_pixels(const graph::Tensor& t, const NativeForm& form);
// H x pitch x C x element bytes (0 when there is no such form).
uint64_t packed_image_bytes(const graph::Tensor& t, const NativeForm& form);
// Whether the form's packed images hold uint8 bytes, each the int8 value
// + 128 (RK356x: its ARGB converter subtracts 128 from unsigned pixels). The
// NATIVE attributes then say UINT8 with the zero point + 128
// (base/sign_bits.h converts).
bool packed_image_biased(const NativeForm& form);

// Host tensor (NCHW, the tensor's dtype) -> device bytes at `dst` (padding
// lanes and pixels zeroed): the cube, or with `packed_row_pixels` > 0 the
// channel-packed image with that row pitch.
Status pack_native(const cpu::HostTensor& value, uint8_t* dst, uint64_t dst_bytes, const NativeForm& form,
                   uint32_t packed_row_pixels = 0);
// Device bytes (cube or packed image, as above) -> a host tensor shaped and typed as `declared`.
StatusOr<cpu::HostTensor> unpack_native(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& declared,
                                        const NativeForm& form, uint32_t packed_row_pixels = 0);
// The same into `out`, reusing its storage when it already has the declared
// dtype and shape. Cubes of [1, C, H, W] tensors and one-row matrices are read
// (and pack_native writes them) without temporary buffers, so a CPU step that
// runs again allocates nothing; other forms go through unpack_native.
Status unpack_native_into(const uint8_t* src, uint64_t src_bytes, const graph::Tensor& declared,
                          const NativeForm& form, uint32_t packed_row_pixels, cpu::HostTensor* out);

}  // namespace rknn::runtime
