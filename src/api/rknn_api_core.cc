// Exported entry points of rknn_api.h: context lifetime, query, inputs, run, outputs.
//
// Each function checks its handle and pointers here, at the ABI boundary, and
// hands the rest to the runtime. Features that have not landed yet return
// RKNN_ERR_FAIL after those checks, so misuse is already caught.
#include "api/api_guard.h"
#include "api/context_handle.h"
#include "api/init_flags.h"
#include "api/mem_registry.h"
#include "base/version.h"
#include "rknn_openrknn_ext.h"
#include "runtime/context.h"
#include "runtime/frame_runner.h"

using rknn::Status;
using rknn::api::check_arg;
using rknn::api::check_handle;
using rknn::api::guard;
using rknn::api::HandleKind;
using rknn::runtime::Context;

namespace {

// What an rknn_context handle names.
class ContextHandle : public rknn::api::HandleObject {
public:
    static constexpr HandleKind kHandleKind = HandleKind::kContext;
    explicit ContextHandle(std::shared_ptr<Context> runtime)
        : context(std::move(runtime)), frames(std::make_shared<rknn::runtime::FrameRunner>(context)) {}
    ~ContextHandle() override { frames->stop(); }  // waits for a frame in flight
    HandleKind kind() const override { return kHandleKind; }
    std::shared_ptr<Context> context;
    // rknn_run / rknn_wait / rknn_outputs_get.
    std::shared_ptr<rknn::runtime::FrameRunner> frames;
};

rknn::StatusOr<std::shared_ptr<Context>> context_of(rknn_context handle) {
    return rknn::api::runtime_context(handle);
}

// The handle object: checked, and refused from a callback of its own context.
// It does not wait for a frame in flight; runtime_context does.
rknn::StatusOr<std::shared_ptr<ContextHandle>> handle_of(rknn_context handle) {
    RKNN_RETURN_IF_ERROR(check_handle(handle, HandleKind::kContext));
    std::shared_ptr<ContextHandle> object = rknn::api::find_handle<ContextHandle>(handle);
    if (object == nullptr) return Status(rknn::StatusCode::kContextInvalid, "not a model context");
    if (object->context->in_own_callbacks())
        return Status(rknn::StatusCode::kFailedPrecondition,
                      "called from a custom op callback of this same context, which holds the context until the "
                      "callback returns");
    return object;
}

}  // namespace

rknn::StatusOr<std::shared_ptr<Context>> rknn::api::runtime_context(rknn_context handle) {
    RKNN_ASSIGN_OR_RETURN(std::shared_ptr<ContextHandle> object, handle_of(handle));
    object->frames->settle();
    return object->context;
}

RKNN_EXPORT int rknn_init(rknn_context* context, void* model, uint32_t size, uint32_t flag,
                          rknn_init_extend* extend) {
    return guard("rknn_init", [&]() -> Status {
        rknn::log::reload_level_from_env();
        RKNN_LOGI("RKNN Runtime Information, %s", rknn::version::marker());
        RKNN_RETURN_IF_ERROR(check_arg(context != nullptr, "context is NULL"));
        *context = 0;
        RKNN_RETURN_IF_ERROR(check_arg(model != nullptr, "model is NULL"));
        RKNN_RETURN_IF_ERROR(rknn::api::validate_init_flags(flag, extend));
        // RKNN_FLAG_SHARE_WEIGHT_MEM: the model (converted with
        // --remove-weights) runs on the weights of extend->ctx, its master.
        std::shared_ptr<Context> master;
        if (flag & RKNN_FLAG_SHARE_WEIGHT_MEM) {
            rknn::StatusOr<std::shared_ptr<Context>> found = context_of(extend->ctx);
            if (!found.is_ok()) return found.status().with_context("extend->ctx (the master)");
            master = found.value();
        }
        // RKNN_FLAG_MODEL_BUFFER_ZERO_COPY: the model is read where it is, in
        // the client's buffer (which lives until rknn_destroy), from
        // extend->real_model_offset for real_model_size bytes (0: to the end).
        std::shared_ptr<rknn::runtime::IoMemory> model_memory;
        if (flag & RKNN_FLAG_MODEL_BUFFER_ZERO_COPY) {
            RKNN_RETURN_IF_ERROR(check_arg(size > 0, "RKNN_FLAG_MODEL_BUFFER_ZERO_COPY takes a model buffer, not a path"));
            const int64_t offset = extend->real_model_offset;
            RKNN_RETURN_IF_ERROR(check_arg(offset >= 0 && offset < static_cast<int64_t>(size),
                                           "extend->real_model_offset lies outside the model buffer"));
            const uint64_t rest = size - static_cast<uint64_t>(offset);
            const uint64_t real = extend->real_model_size != 0 ? extend->real_model_size : rest;
            RKNN_RETURN_IF_ERROR(check_arg(real <= rest, "extend->real_model_size reaches beyond the model buffer"));
            model = static_cast<uint8_t*>(model) + offset;
            size = static_cast<uint32_t>(real);
            // Memory of ours: the context holds it, so that destroying it first cannot pull the model away.
            model_memory = rknn::api::MemRegistry::global().memory_holding(model, size);
        }
        // Hints the runtime accepts but does not act on yet: said once per init.
        const uint32_t no_effect = flag & (RKNN_FLAG_SHARE_SRAM | RKNN_FLAG_EXECUTE_FALLBACK_PRIOR_DEVICE_GPU);
        if (no_effect != 0) RKNN_LOGW("rknn_init: flags 0x%x are accepted but have no effect yet", no_effect);
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> created,
                              Context::create(model, size, flag, std::move(model_memory), master.get()));
        *context = rknn::api::HandleTable::global().insert(std::make_shared<ContextHandle>(std::move(created)));
        return Status::ok();
    });
}

RKNN_EXPORT int rknn_dup_context(rknn_context* context_in, rknn_context* context_out) {
    return guard("rknn_dup_context", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_arg(context_in != nullptr, "context_in is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(context_out != nullptr, "context_out is NULL"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> original, context_of(*context_in));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> copy, original->duplicate());
        *context_out = rknn::api::HandleTable::global().insert(std::make_shared<ContextHandle>(std::move(copy)));
        return Status::ok();
    });
}

RKNN_EXPORT int rknn_destroy(rknn_context context) {
    return guard("rknn_destroy", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kContext));
        // The object dies when the last call using it returns.
        rknn::api::HandleTable::global().remove(context, HandleKind::kContext);
        return Status::ok();
    });
}

RKNN_EXPORT int rknn_query(rknn_context context, rknn_query_cmd cmd, void* info, uint32_t size) {
    return guard("rknn_query", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kContext));
        RKNN_RETURN_IF_ERROR(check_arg(info != nullptr, "info is NULL"));
        const int raw_cmd = rknn::api::raw_enum(cmd);
        RKNN_RETURN_IF_ERROR(check_arg((raw_cmd >= 0 && raw_cmd < RKNN_QUERY_CMD_MAX) ||
                                           raw_cmd == RKNN_QUERY_OPENRKNN_INPUT_SHAPE_RANGE,
                                       "unknown query command"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> ctx, context_of(context));
        return ctx->query(raw_cmd, info, size);
    });
}

RKNN_EXPORT int rknn_inputs_set(rknn_context context, uint32_t n_inputs, rknn_input inputs[]) {
    return guard("rknn_inputs_set", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kContext));
        RKNN_RETURN_IF_ERROR(check_arg(inputs != nullptr, "inputs is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(n_inputs > 0, "n_inputs is 0"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> ctx, context_of(context));
        return ctx->inputs_set(n_inputs, inputs);
    });
}

RKNN_EXPORT int rknn_set_batch_core_num(rknn_context context, int core_num) {
    return guard("rknn_set_batch_core_num", [&]() -> Status {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> ctx, context_of(context));
        return ctx->set_batch_core_num(core_num);
    });
}

RKNN_EXPORT int rknn_set_core_mask(rknn_context context, rknn_core_mask core_mask) {
    return guard("rknn_set_core_mask", [&]() -> Status {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> ctx, context_of(context));
        return ctx->set_core_mask(static_cast<uint32_t>(rknn::api::raw_enum(core_mask)));
    });
}

// `extend` may be NULL (a blocking run); frame_runner.h says what its fields do.
RKNN_EXPORT int rknn_run(rknn_context context, rknn_run_extend* extend) {
    return guard("rknn_run", [&]() -> Status {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<ContextHandle> handle, handle_of(context));
        return handle->frames->run(extend);
    });
}

RKNN_EXPORT int rknn_wait(rknn_context context, rknn_run_extend* extend) {
    return guard("rknn_wait", [&]() -> Status {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<ContextHandle> handle, handle_of(context));
        return handle->frames->wait(extend);
    });
}

RKNN_EXPORT int rknn_outputs_get(rknn_context context, uint32_t n_outputs, rknn_output outputs[],
                                 rknn_output_extend* extend) {
    return guard("rknn_outputs_get", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kContext));
        RKNN_RETURN_IF_ERROR(check_arg(outputs != nullptr, "outputs is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(n_outputs > 0, "n_outputs is 0"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<ContextHandle> handle, handle_of(context));
        return handle->frames->outputs_get(n_outputs, outputs, extend);
    });
}

RKNN_EXPORT int rknn_outputs_release(rknn_context context, uint32_t n_ouputs, rknn_output outputs[]) {
    return guard("rknn_outputs_release", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(context, HandleKind::kContext));
        RKNN_RETURN_IF_ERROR(check_arg(outputs != nullptr || n_ouputs == 0, "outputs is NULL"));
        // Not held up by a frame in flight: the pipelined loop releases while the next frame runs.
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<ContextHandle> handle, handle_of(context));
        return handle->context->outputs_release(n_ouputs, outputs);
    });
}

RKNN_EXPORT int rknn_set_input_shape(rknn_context ctx, rknn_tensor_attr* attr) {
    // Deprecated: the shape of one input. It selects a set of a one-input
    // model (as rknn_set_input_shapes with that attr); with several inputs
    // the sets cannot be told apart from one shape.
    return guard("rknn_set_input_shape", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kContext));
        RKNN_RETURN_IF_ERROR(check_arg(attr != nullptr, "attr is NULL"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> context, context_of(ctx));
        if (context->graph().inputs.size() != 1)
            return Status(rknn::StatusCode::kInvalidArgument,
                          "rknn_set_input_shape (deprecated) selects a shape of one-input models; use "
                          "rknn_set_input_shapes");
        return context->set_input_shapes(1, attr);
    });
}

RKNN_EXPORT int rknn_set_input_shapes(rknn_context ctx, uint32_t n_inputs, rknn_tensor_attr attr[]) {
    return guard("rknn_set_input_shapes", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kContext));
        RKNN_RETURN_IF_ERROR(check_arg(attr != nullptr, "attr is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(n_inputs > 0, "n_inputs is 0"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<Context> context, context_of(ctx));
        return context->set_input_shapes(n_inputs, attr);
    });
}
