#include "matmul/matmul_rules.h"

#include <cstring>

namespace rknn::matmul {

namespace {

Status rule(const std::string& message) {
    return Status(StatusCode::kInvalidArgument, message);
}

// The enum fields as the ints the client stored: reading another value
// through the enum type is undefined, and a client may store any int.
template <typename Enum>
int raw_of(const Enum& value) {
    int raw = 0;
    std::memcpy(&raw, &value, sizeof(raw));
    return raw;
}

enum class Family { k3588, k3576, k3562, k356x, kNone };

Family family_of(const hw::SocProfile& soc) {
    const std::string name = soc.name;
    if (name == "rk3588" || name == "rk3583") return Family::k3588;
    if (name == "rk3576") return Family::k3576;
    if (name == "rk3562") return Family::k3562;
    if (name == "rk3566" || name == "rk3568") return Family::k356x;
    return Family::kNone;
}

// Table 3-13. RK3576's mixed types (an fp16 or int8 A with an int8 or int4
// B) wait for the facts of their B layout and are refused as not built.
bool soc_runs(Family f, int raw) {
    switch (f) {
        case Family::k3588:
            return raw == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 || raw == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 ||
                   raw == RKNN_INT8_MM_INT8_TO_INT32 || raw == RKNN_INT8_MM_INT8_TO_FLOAT32 ||
                   raw == RKNN_INT8_MM_INT8_TO_INT8 || raw == RKNN_INT4_MM_INT4_TO_INT16;
        case Family::k3576:
            return raw == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 || raw == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 ||
                   raw == RKNN_INT8_MM_INT8_TO_INT32;
        case Family::k3562:
        case Family::k356x:
            return raw == RKNN_INT8_MM_INT8_TO_INT32 || raw == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
        case Family::kNone:
            return false;
    }
    return false;
}

bool vendor_lists_on_3576(int raw) {
    return raw == RKNN_FLOAT16_MM_INT8_TO_FLOAT32 || raw == RKNN_FLOAT16_MM_INT4_TO_FLOAT16 ||
           raw == RKNN_FLOAT16_MM_INT4_TO_FLOAT32 || raw == RKNN_INT8_MM_INT4_TO_INT32;
}

// The native tables of runtime-spec 8.2 for A and B of one type. C's atom
// is 16 bytes on every SoC (4 int32/fp32, 8 int16/fp16, 16 int8): the table
// gives the 32- and 16-bit rows, and int8 and fp16 C follow the NPU's cube
// atom (our choice where the table is silent).
NativeTiles tiles_of(Family f, const TypeInfo& t) {
    NativeTiles tiles;
    const bool wide = f == Family::k3588 || f == Family::k3576;
    switch (t.a) {
        case Elem::kInt4:
            tiles.a_sub_k = 32;
            break;
        case Elem::kInt8:
            tiles.a_sub_k = f == Family::k356x ? 8 : 16;
            break;
        default:
            tiles.a_sub_k = f == Family::k356x ? 4 : 8;
            break;
    }
    switch (t.b) {
        case Elem::kInt4:
            tiles.b_sub_n = 64;
            tiles.b_sub_k = 32;
            break;
        case Elem::kInt8:
            tiles.b_sub_n = wide ? 32 : 16;
            tiles.b_sub_k = 32;
            break;
        default:
            tiles.b_sub_n = wide ? 16 : 8;
            tiles.b_sub_k = f == Family::k356x ? 16 : 32;
            break;
    }
    tiles.c_sub_n = 128 / elem_bits(t.c);
    tiles.k_segment = f == Family::k3588 ? 8192 : f == Family::k3576 ? 4096 : 0;
    return tiles;
}

uint64_t ceil_div(int64_t a, int64_t b) {
    return static_cast<uint64_t>((a + b - 1) / b);
}

uint64_t bytes_of(uint64_t elements, Elem e) {
    return (elements * static_cast<uint64_t>(elem_bits(e)) + 7) / 8;
}

void set_attr(const char* name, Elem e, std::initializer_list<uint64_t> dims, uint64_t bytes,
              rknn_matmul_tensor_attr* attr) {
    std::memset(attr, 0, sizeof(*attr));
    std::strncpy(attr->name, name, sizeof(attr->name) - 1);
    attr->n_dims = static_cast<uint32_t>(dims.size());
    uint32_t i = 0;
    for (uint64_t d : dims) attr->dims[i++] = static_cast<uint32_t>(d);
    attr->size = static_cast<uint32_t>(bytes);
    attr->type = elem_tensor_type(e);
}

}  // namespace

int elem_bits(Elem e) {
    switch (e) {
        case Elem::kInt4:
            return 4;
        case Elem::kInt8:
            return 8;
        case Elem::kInt16:
        case Elem::kFloat16:
        case Elem::kBFloat16:
            return 16;
        case Elem::kInt32:
        case Elem::kFloat32:
            return 32;
    }
    return 8;
}

rknn_tensor_type elem_tensor_type(Elem e) {
    switch (e) {
        case Elem::kInt4:
            return RKNN_TENSOR_INT4;
        case Elem::kInt8:
            return RKNN_TENSOR_INT8;
        case Elem::kInt16:
            return RKNN_TENSOR_INT16;
        case Elem::kInt32:
            return RKNN_TENSOR_INT32;
        case Elem::kFloat16:
            return RKNN_TENSOR_FLOAT16;
        case Elem::kFloat32:
            return RKNN_TENSOR_FLOAT32;
        case Elem::kBFloat16:
            return RKNN_TENSOR_BFLOAT16;
    }
    return RKNN_TENSOR_INT8;
}

const char* elem_name(Elem e) {
    switch (e) {
        case Elem::kInt4:
            return "int4";
        case Elem::kInt8:
            return "int8";
        case Elem::kInt16:
            return "int16";
        case Elem::kInt32:
            return "int32";
        case Elem::kFloat16:
            return "float16";
        case Elem::kFloat32:
            return "float32";
        case Elem::kBFloat16:
            return "bfloat16";
    }
    return "?";
}

bool elem_is_float(Elem e) {
    return e == Elem::kFloat16 || e == Elem::kFloat32 || e == Elem::kBFloat16;
}

bool type_info(int raw, TypeInfo* out) {
    using E = Elem;
    struct Row {
        int raw;
        E a, b, c;
    };
    static constexpr Row kRows[] = {
        {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, E::kFloat16, E::kFloat16, E::kFloat32},
        {RKNN_INT8_MM_INT8_TO_INT32, E::kInt8, E::kInt8, E::kInt32},
        {RKNN_INT8_MM_INT8_TO_INT8, E::kInt8, E::kInt8, E::kInt8},
        {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, E::kFloat16, E::kFloat16, E::kFloat16},
        {RKNN_FLOAT16_MM_INT8_TO_FLOAT32, E::kFloat16, E::kInt8, E::kFloat32},
        {RKNN_FLOAT16_MM_INT8_TO_FLOAT16, E::kFloat16, E::kInt8, E::kFloat16},
        {RKNN_FLOAT16_MM_INT4_TO_FLOAT32, E::kFloat16, E::kInt4, E::kFloat32},
        {RKNN_FLOAT16_MM_INT4_TO_FLOAT16, E::kFloat16, E::kInt4, E::kFloat16},
        {RKNN_INT8_MM_INT8_TO_FLOAT32, E::kInt8, E::kInt8, E::kFloat32},
        {RKNN_INT4_MM_INT4_TO_INT16, E::kInt4, E::kInt4, E::kInt16},
        {RKNN_INT8_MM_INT4_TO_INT32, E::kInt8, E::kInt4, E::kInt32},
        {RKNN_FLOAT16_MM_INT4_TO_BFLOAT16, E::kFloat16, E::kInt4, E::kBFloat16},
        {RKNN_INT8_MM_INT4_TO_FLOAT16, E::kInt8, E::kInt4, E::kFloat16},
    };
    for (const Row& row : kRows)
        if (row.raw == raw) {
            *out = {row.raw, row.a, row.b, row.c};
            return true;
        }
    return false;
}

Status check_info(const rknn_matmul_info& info, const hw::SocProfile& soc, Plan* plan) {
    const int raw = raw_of(info.type);
    if (!type_info(raw, &plan->type)) return rule("matmul type " + std::to_string(raw) + " is no rknn_matmul_type");
    const std::string type_name = get_matmul_type_string(static_cast<rknn_matmul_type>(raw));
    const Family family = family_of(soc);
    if (family == Family::kNone) return rule(std::string("the matmul API does not run on ") + soc.name);
    if (!soc_runs(family, raw)) {
        if (family == Family::k3576 && vendor_lists_on_3576(raw))
            return Status(StatusCode::kUnimplemented,
                          type_name + " on rk3576 (a B type other than A's): not implemented");
        return rule(type_name + " does not run on " + soc.name + " (runtime-spec 8.2, table 3-13)");
    }
    plan->b_layout = info.B_layout;
    plan->ac_layout = info.AC_layout;
    plan->b_quant = info.B_quant_type;
    plan->ac_quant = info.AC_quant_type;
    plan->group_size = info.group_size;
    if (plan->ac_layout != RKNN_MM_LAYOUT_NORM && plan->ac_layout != RKNN_MM_LAYOUT_NATIVE)
        return rule("AC_layout " + std::to_string(plan->ac_layout) + " is neither NORM (0) nor NATIVE (1)");
    if (plan->b_layout != RKNN_MM_LAYOUT_NORM && plan->b_layout != RKNN_MM_LAYOUT_NATIVE &&
        plan->b_layout != RKNN_MM_LAYOUT_TP_NORM)
        return rule("B_layout " + std::to_string(plan->b_layout) + " is not NORM (0), NATIVE (1) or TP_NORM (2)");
    if (plan->b_layout == RKNN_MM_LAYOUT_TP_NORM && family == Family::k356x)
        return rule(std::string("B_layout TP_NORM does not run on ") + soc.name);
    if (plan->ac_quant != RKNN_QUANT_TYPE_PER_LAYER_SYM && plan->ac_quant != RKNN_QUANT_TYPE_PER_LAYER_ASYM)
        return rule("AC_quant_type " + std::to_string(plan->ac_quant) + ": A and C take per-layer quantisation only");
    if (plan->b_quant < RKNN_QUANT_TYPE_PER_LAYER_SYM || plan->b_quant > RKNN_QUANT_TYPE_PER_GROUP_ASYM)
        return rule("B_quant_type " + std::to_string(plan->b_quant) + " is no rknn_matmul_quant_type");
    const bool b_integer = !elem_is_float(plan->type.b);
    if (!b_integer && plan->b_quant > RKNN_QUANT_TYPE_PER_LAYER_ASYM)
        return rule("B_quant_type " + std::to_string(plan->b_quant) +
                    ": a float B takes no per-channel or per-group "
                    "quantisation");
    if (plan->b_quant >= RKNN_QUANT_TYPE_PER_GROUP_SYM && plan->group_size <= 0)
        return rule("per-group quantisation of B needs group_size > 0");
    plan->tiles = tiles_of(family, plan->type);
    return Status::ok();
}

Status check_shape(const Plan& plan, const hw::SocProfile& soc, int64_t m, int64_t k, int64_t n) {
    const Family family = family_of(soc);
    const std::string at = " (M " + std::to_string(m) + ", K " + std::to_string(k) + ", N " + std::to_string(n) + ")";
    if (m <= 0 || k <= 0 || n <= 0) return rule("M, K and N must be positive" + at);
    // Table 3-14.
    const bool small = family == Family::k3562 || family == Family::k356x;
    const int64_t k_max = small ? 10240 : 0;
    const int64_t n_align = plan.type.b == Elem::kInt4 ? 64 : small ? 16 : 32;
    const int64_t n_max = plan.type.b == Elem::kInt4 ? 8192 : 4096;
    if (k % 32 != 0) return rule("K must be a multiple of 32 on " + std::string(soc.name) + at);
    if (k_max > 0 && k > k_max) return rule("K must be at most " + std::to_string(k_max) + " on " + soc.name + at);
    if (n % n_align != 0)
        return rule("N must be a multiple of " + std::to_string(n_align) + " for a " + elem_name(plan.type.b) +
                    " B on " + soc.name + at);
    if (n > n_max) return rule("N must be at most " + std::to_string(n_max) + " on " + std::string(soc.name) + at);
    if (plan.b_quant >= RKNN_QUANT_TYPE_PER_GROUP_SYM && k % plan.group_size != 0)
        return rule("group_size " + std::to_string(plan.group_size) + " must divide K" + at);
    // Each matrix's size is a uint32 in rknn_matmul_tensor_attr.
    constexpr uint64_t kMaxBytes = UINT32_MAX;
    if (m > static_cast<int64_t>(kMaxBytes) || a_bytes(plan, m, k) > kMaxBytes || b_bytes(plan, k, n) > kMaxBytes ||
        c_bytes(plan, m, n) > kMaxBytes)
        return rule("a matrix would take 4 GiB or more" + at);
    return Status::ok();
}

uint64_t a_bytes(const Plan& plan, int64_t m, int64_t k) {
    const NativeTiles& t = plan.tiles;
    const uint64_t elements = plan.ac_layout == RKNN_MM_LAYOUT_NATIVE
                                  ? ceil_div(k, t.a_sub_k) * static_cast<uint64_t>(m) * static_cast<uint64_t>(t.a_sub_k)
                                  : static_cast<uint64_t>(m) * static_cast<uint64_t>(k);
    return bytes_of(elements, plan.type.a);
}

uint64_t b_bytes(const Plan& plan, int64_t k, int64_t n) {
    const NativeTiles& t = plan.tiles;
    const uint64_t elements = plan.b_layout == RKNN_MM_LAYOUT_NATIVE
                                  ? ceil_div(n, t.b_sub_n) * ceil_div(k, t.b_sub_k) * static_cast<uint64_t>(t.b_sub_n) *
                                        static_cast<uint64_t>(t.b_sub_k)
                                  : static_cast<uint64_t>(k) * static_cast<uint64_t>(n);
    return bytes_of(elements, plan.type.b);
}

uint64_t c_bytes(const Plan& plan, int64_t m, int64_t n) {
    const NativeTiles& t = plan.tiles;
    const uint64_t elements = plan.ac_layout == RKNN_MM_LAYOUT_NATIVE
                                  ? ceil_div(n, t.c_sub_n) * static_cast<uint64_t>(m) * static_cast<uint64_t>(t.c_sub_n)
                                  : static_cast<uint64_t>(m) * static_cast<uint64_t>(n);
    return bytes_of(elements, plan.type.c);
}

void fill_io_attr(const Plan& plan, int32_t m, int32_t k, int32_t n, rknn_matmul_io_attr* io) {
    const NativeTiles& t = plan.tiles;
    const uint64_t M = static_cast<uint64_t>(m), K = static_cast<uint64_t>(k), N = static_cast<uint64_t>(n);
    if (plan.ac_layout == RKNN_MM_LAYOUT_NATIVE) {
        set_attr("A", plan.type.a, {ceil_div(k, t.a_sub_k), M, static_cast<uint64_t>(t.a_sub_k)}, a_bytes(plan, m, k),
                 &io->A);
        set_attr("C", plan.type.c, {ceil_div(n, t.c_sub_n), M, static_cast<uint64_t>(t.c_sub_n)}, c_bytes(plan, m, n),
                 &io->C);
    } else {
        set_attr("A", plan.type.a, {M, K}, a_bytes(plan, m, k), &io->A);
        set_attr("C", plan.type.c, {M, N}, c_bytes(plan, m, n), &io->C);
    }
    if (plan.b_layout == RKNN_MM_LAYOUT_NATIVE) {
        set_attr("B", plan.type.b,
                 {ceil_div(n, t.b_sub_n), ceil_div(k, t.b_sub_k), static_cast<uint64_t>(t.b_sub_n),
                  static_cast<uint64_t>(t.b_sub_k)},
                 b_bytes(plan, k, n), &io->B);
    } else if (plan.b_layout == RKNN_MM_LAYOUT_TP_NORM) {
        set_attr("B", plan.type.b, {N, K}, b_bytes(plan, k, n), &io->B);
    } else {
        set_attr("B", plan.type.b, {K, N}, b_bytes(plan, k, n), &io->B);
    }
}

}  // namespace rknn::matmul
