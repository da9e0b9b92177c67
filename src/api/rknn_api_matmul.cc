// Exported entry points of rknn_matmul_api.h: arguments checked here, the
// rest in matmul::MatmulContext (src/matmul/).
#include <vector>

#include "api/api_guard.h"
#include "api/matmul_handle.h"
#include "api/mem_registry.h"
#include "driver/kernel_driver_factory.h"
#include "matmul/matmul_context.h"
#include "matmul/matmul_layout.h"
#include "rknn_matmul_api.h"

using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;
using rknn::api::check_arg;
using rknn::api::check_handle;
using rknn::api::guard;
using rknn::api::HandleKind;
using rknn::api::MatmulHandle;

namespace {

// Called after the handle's kind and the pointer arguments are checked.
StatusOr<std::shared_ptr<MatmulHandle>> matmul_of(rknn_matmul_ctx ctx) {
    std::shared_ptr<MatmulHandle> handle = rknn::api::find_handle<MatmulHandle>(ctx);
    if (!handle) return Status(StatusCode::kContextInvalid, "invalid matmul context");
    return handle;
}

Status create(rknn_matmul_ctx* ctx, const rknn_matmul_info* info, const std::vector<rknn_matmul_shape>& shapes,
              rknn_matmul_io_attr* io) {
    RKNN_ASSIGN_OR_RETURN(std::unique_ptr<rknn::matmul::MatmulContext> context,
                          rknn::matmul::MatmulContext::create(*info, shapes, io));
    *ctx = rknn::api::HandleTable::global().insert(std::make_shared<MatmulHandle>(std::move(context)));
    return Status::ok();
}

Status create_dynamic(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num, rknn_matmul_shape dynamic_shapes[],
                      rknn_matmul_io_attr io_attrs[]) {
    RKNN_RETURN_IF_ERROR(check_arg(ctx != nullptr, "ctx is NULL"));
    *ctx = 0;
    RKNN_RETURN_IF_ERROR(check_arg(info != nullptr, "info is NULL"));
    RKNN_RETURN_IF_ERROR(check_arg(shape_num > 0 && shape_num <= 1024, "shape_num must be within 1-1024"));
    RKNN_RETURN_IF_ERROR(check_arg(dynamic_shapes != nullptr, "dynamic_shapes is NULL"));
    RKNN_RETURN_IF_ERROR(check_arg(io_attrs != nullptr, "io_attrs is NULL"));
    const std::vector<rknn_matmul_shape> shapes(dynamic_shapes, dynamic_shapes + shape_num);
    return create(ctx, info, shapes, io_attrs);
}

}  // namespace

RKNN_EXPORT int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr) {
    return guard("rknn_matmul_create", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_arg(ctx != nullptr, "ctx is NULL"));
        *ctx = 0;
        RKNN_RETURN_IF_ERROR(check_arg(info != nullptr, "info is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(io_attr != nullptr, "io_attr is NULL"));
        return create(ctx, info, {rknn_matmul_shape{info->M, info->K, info->N}}, io_attr);
    });
}

RKNN_EXPORT int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                                 rknn_matmul_shape dynamic_shapes[],
                                                 rknn_matmul_io_attr io_attrs[]) {
    return guard("rknn_matmul_create_dynamic_shape",
                 [&]() -> Status { return create_dynamic(ctx, info, shape_num, dynamic_shapes, io_attrs); });
}

RKNN_EXPORT int rknn_matmul_create_dyn_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                             rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]) {
    return guard("rknn_matmul_create_dyn_shape",
                 [&]() -> Status { return create_dynamic(ctx, info, shape_num, dynamic_shapes, io_attrs); });
}

RKNN_EXPORT int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr) {
    return guard("rknn_matmul_set_io_mem", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(mem != nullptr, "mem is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(attr != nullptr, "attr is NULL"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<MatmulHandle> handle, matmul_of(ctx));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::api::MemRecord> record, rknn::api::lookup_mem(ctx, mem, false));
        // The range the descriptor names now (a client may move offset and
        // size within the buffer, as rk-llama.cpp does with one weight buffer).
        // Read once: the client owns the descriptor and may change it meanwhile.
        const int32_t offset = record->descriptor.offset;
        const uint32_t size = record->descriptor.size;
        RKNN_RETURN_IF_ERROR(check_arg(offset >= 0 && static_cast<uint64_t>(offset) + size <= record->memory->size(),
                                       "mem->offset + mem->size lie beyond the buffer"));
        const rknn_matmul_tensor_attr attr_copy = *attr;
        return handle->context().bind(attr_copy, record->memory, static_cast<uint64_t>(offset), size);
    });
}

RKNN_EXPORT int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask) {
    return guard("rknn_matmul_set_core_mask", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kMatmul));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<MatmulHandle> handle, matmul_of(context));
        return handle->context().set_core_mask(rknn::api::raw_enum(core_mask));
    });
}

RKNN_EXPORT int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params) {
    return guard("rknn_matmul_set_quant_params", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(params != nullptr, "params is NULL"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<MatmulHandle> handle, matmul_of(context));
        return handle->context().set_quant_params(*params);
    });
}

RKNN_EXPORT int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale) {
    return guard("rknn_matmul_get_quant_params", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(params != nullptr, "params is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(scale != nullptr, "scale is NULL"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<MatmulHandle> handle, matmul_of(ctx));
        return handle->context().get_quant_params(params, scale);
    });
}

RKNN_EXPORT int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape) {
    return guard("rknn_matmul_set_dynamic_shape", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        RKNN_RETURN_IF_ERROR(check_arg(shape != nullptr, "shape is NULL"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<MatmulHandle> handle, matmul_of(ctx));
        return handle->context().set_dynamic_shape(*shape);
    });
}

RKNN_EXPORT int rknn_matmul_run(rknn_matmul_ctx ctx) {
    return guard("rknn_matmul_run", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kMatmul));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<MatmulHandle> handle, matmul_of(ctx));
        return handle->context().run();
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
        RKNN_RETURN_IF_ERROR(check_arg(info != nullptr, "info is NULL"));
        // The SoC this process's NPU is (or the mock emulates), on the device
        // the matmul contexts share.
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::driver::OpenedDriver> opened, rknn::matmul::shared_matmul_driver());
        rknn::matmul::Plan plan;
        RKNN_RETURN_IF_ERROR(rknn::matmul::check_info(*info, *opened->soc, &plan));
        plan.b_layout = RKNN_MM_LAYOUT_NATIVE;
        RKNN_RETURN_IF_ERROR(rknn::matmul::check_shape(plan, *opened->soc, 1, K, N));
        rknn::matmul::b_norm_to_native(plan, static_cast<const uint8_t*>(B_input), static_cast<uint8_t*>(B_output), K, N);
        return Status::ok();
    });
}
