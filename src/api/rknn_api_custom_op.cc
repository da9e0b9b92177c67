// Exported entry points of rknn_custom_op.h.
#include <cstring>

#include "api/api_guard.h"
#include "api/context_handle.h"
#include "runtime/context.h"
#include "runtime/custom_ops.h"
#include "rknn_custom_op.h"

using rknn::Status;
using rknn::api::check_arg;
using rknn::api::check_handle;
using rknn::api::guard;
using rknn::api::HandleKind;

RKNN_EXPORT int rknn_register_custom_ops(rknn_context ctx, rknn_custom_op* op, uint32_t custom_op_num) {
    return guard("rknn_register_custom_ops", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kContext));
        RKNN_RETURN_IF_ERROR(check_arg(op != nullptr, "op is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(custom_op_num > 0, "custom_op_num is 0"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::runtime::Context> context, rknn::api::runtime_context(ctx));
        return context->register_custom_ops(op, custom_op_num);
    });
}

// Returns void in the ABI, so failures are logged and leave `op_attr` empty
// (n_elems 0, data NULL): a plugin that checks n_elems sees "no such attribute".
RKNN_EXPORT void rknn_custom_op_get_op_attr(rknn_custom_op_context* op_ctx, const char* attr_name,
                                            rknn_custom_op_attr* op_attr) {
    (void)guard("rknn_custom_op_get_op_attr", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_arg(op_attr != nullptr, "op_attr is NULL"));
        std::memset(op_attr, 0, sizeof(*op_attr));
        RKNN_RETURN_IF_ERROR(check_arg(op_ctx != nullptr, "op_ctx is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(attr_name != nullptr, "attr_name is NULL"));
        return rknn::runtime::custom_op_attr(op_ctx, attr_name, op_attr);
    });
}
