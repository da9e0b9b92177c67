// Exported entry points of rknn_matmul_api.h.
#include "api/api_guard.h"
#include "rknn_matmul_api.h"

using rknn::Status;
using rknn::api::check_arg;
using rknn::api::check_handle;
using rknn::api::guard;
using rknn::api::HandleKind;
using rknn::api::not_implemented;

namespace {

bool is_known_matmul_type(const rknn_matmul_type& type) {
    const int raw = rknn::api::raw_enum(type);
    return (raw >= RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 && raw <= RKNN_FLOAT16_MM_INT4_TO_BFLOAT16) ||
           raw == RKNN_INT8_MM_INT4_TO_FLOAT16;
}

Status check_matmul_info(const rknn_matmul_info* info, bool check_shape) {
    RKNN_RETURN_IF_ERROR(check_arg(info != nullptr, "info is NULL"));
    if (check_shape) {
        RKNN_RETURN_IF_ERROR(check_arg(info->M > 0 && info->K > 0 && info->N > 0, "M, K and N must be positive"));
    }
    RKNN_RETURN_IF_ERROR(check_arg(is_known_matmul_type(info->type), "unknown matmul type"));
    return Status::ok();
}

Status create_dynamic(const char* function, rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                      rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]) {
    RKNN_RETURN_IF_ERROR(check_arg(ctx != nullptr, "ctx is NULL"));
    *ctx = 0;
    RKNN_RETURN_IF_ERROR(check_matmul_info(info, false));
    RKNN_RETURN_IF_ERROR(check_arg(shape_num > 0, "shape_num must be positive"));
    RKNN_RETURN_IF_ERROR(check_arg(dynamic_shapes != nullptr, "dynamic_shapes is NULL"));
    RKNN_RETURN_IF_ERROR(check_arg(io_attrs != nullptr, "io_attrs is NULL"));
    return not_implemented(function);
}

}  // namespace

RKNN_EXPORT int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr) {
    return guard("rknn_matmul_create", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_arg(ctx != nullptr, "ctx is NULL"));
        *ctx = 0;
        RKNN_RETURN_IF_ERROR(check_matmul_info(info, true));
        RKNN_RETURN_IF_ERROR(check_arg(io_attr != nullptr, "io_attr is NULL"));
        return not_implemented("rknn_matmul_create");
    });
}

RKNN_EXPORT int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                                 rknn_matmul_shape dynamic_shapes[],
                                                 rknn_matmul_io_attr io_attrs[]) {
    return guard("rknn_matmul_create_dynamic_shape", [&]() -> Status {
        return create_dynamic("rknn_matmul_create_dynamic_shape", ctx, info, shape_num, dynamic_shapes, io_attrs);
    });
}

RKNN_EXPORT int rknn_matmul_create_dyn_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                             rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]) {
    return rknn_matmul_create_dynamic_shape(ctx, info, shape_num, dynamic_shapes, io_attrs);
}

RKNN_EXPORT int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr) {
    return guard("rknn_matmul_set_io_mem", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(mem != nullptr, "mem is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(attr != nullptr, "attr is NULL"));
        return not_implemented("rknn_matmul_set_io_mem");
    });
}

RKNN_EXPORT int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask) {
    return guard("rknn_matmul_set_core_mask", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kMatmul));
        (void)core_mask;
        return not_implemented("rknn_matmul_set_core_mask");
    });
}

RKNN_EXPORT int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params) {
    return guard("rknn_matmul_set_quant_params", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(params != nullptr, "params is NULL"));
        return not_implemented("rknn_matmul_set_quant_params");
    });
}

RKNN_EXPORT int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale) {
    return guard("rknn_matmul_get_quant_params", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(params != nullptr, "params is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(scale != nullptr, "scale is NULL"));
        return not_implemented("rknn_matmul_get_quant_params");
    });
}

RKNN_EXPORT int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape) {
    return guard("rknn_matmul_set_dynamic_shape", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(shape != nullptr, "shape is NULL"));
        return not_implemented("rknn_matmul_set_dynamic_shape");
    });
}

RKNN_EXPORT int rknn_matmul_run(rknn_matmul_ctx ctx) {
    return guard("rknn_matmul_run", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        return not_implemented("rknn_matmul_run");
    });
}

RKNN_EXPORT int rknn_matmul_destroy(rknn_matmul_ctx ctx) {
    return guard("rknn_matmul_destroy", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        rknn::api::HandleTable::global().remove(ctx, HandleKind::kMatmul);
        return Status::ok();
    });
}

RKNN_EXPORT int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N,
                                                      rknn_matmul_info* info) {
    return guard("rknn_B_normal_layout_to_native_layout", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_arg(B_input != nullptr, "B_input is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(B_output != nullptr, "B_output is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(K > 0 && N > 0, "K and N must be positive"));
        RKNN_RETURN_IF_ERROR(check_matmul_info(info, false));
        return not_implemented("rknn_B_normal_layout_to_native_layout");
    });
}
