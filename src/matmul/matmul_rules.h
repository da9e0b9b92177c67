// What the matmul API accepts on each SoC (runtime-spec 8.2, tables 3-13 and
// 3-14): the element types of each rknn_matmul_type, the types a SoC runs,
// the K and N limits, the layouts, and the native tile shapes, from which
// every rknn_matmul_tensor_attr is filled.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "hw/soc_profile.h"
#include "rknn_matmul_api.h"

namespace rknn::matmul {

enum class Elem : uint8_t { kInt4, kInt8, kInt16, kInt32, kFloat16, kFloat32, kBFloat16 };

int elem_bits(Elem e);
rknn_tensor_type elem_tensor_type(Elem e);
const char* elem_name(Elem e);
bool elem_is_float(Elem e);

// The element types of A, B and C for a matmul type.
struct TypeInfo {
    int raw = 0;
    Elem a = Elem::kInt8, b = Elem::kInt8, c = Elem::kInt32;
};

// false for a value that names no matmul type.
bool type_info(int raw_type, TypeInfo* out);

// Native tiles (rows of the tables in runtime-spec 8.2): A is [K/a_sub_k, M,
// a_sub_k], B is [N/b_sub_n, K/b_sub_k, b_sub_n, b_sub_k] per K segment, C is
// [N/c_sub_n, M, c_sub_n]; every division rounds up, padding is zero.
struct NativeTiles {
    int a_sub_k = 0;
    int b_sub_n = 0, b_sub_k = 0;
    int c_sub_n = 0;
    int k_segment = 0;  // B is laid out per segment of this many K rows; 0: one segment
};

// What the caller asked for, checked: the type's elements, the layouts and
// quantisation kinds as ints, and the SoC's native tiles.
struct Plan {
    TypeInfo type;
    int b_layout = RKNN_MM_LAYOUT_NORM, ac_layout = RKNN_MM_LAYOUT_NORM;
    int b_quant = RKNN_QUANT_TYPE_PER_LAYER_SYM, ac_quant = RKNN_QUANT_TYPE_PER_LAYER_SYM;
    int group_size = 0;
    NativeTiles tiles;
};

// Reads `info`'s enums as the ints the client stored and checks everything
// but the shape against `soc`: kInvalidArgument naming the rule.
Status check_info(const rknn_matmul_info& info, const hw::SocProfile& soc, Plan* plan);
// The shape rules: M positive, K and N within the SoC's limits and
// alignments for the type, group_size dividing K.
Status check_shape(const Plan& plan, const hw::SocProfile& soc, int64_t m, int64_t k, int64_t n);

// The three attrs of a checked plan and shape (dims in the chosen layouts,
// sizes in bytes with padding).
void fill_io_attr(const Plan& plan, int32_t m, int32_t k, int32_t n, rknn_matmul_io_attr* io);

// Byte sizes of the three matrices (as fill_io_attr reports them).
uint64_t a_bytes(const Plan& plan, int64_t m, int64_t k);
uint64_t b_bytes(const Plan& plan, int64_t k, int64_t n);
uint64_t c_bytes(const Plan& plan, int64_t m, int64_t n);

}  // namespace rknn::matmul
