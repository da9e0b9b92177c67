#include "api/api_guard.h"

#include <mutex>
#include <set>
#include <string>

namespace rknn::api {
namespace {

// Functions that already said "not implemented" once in this process.
struct NotImplementedRegistry {
    std::mutex mutex;
    std::set<std::string> reported;
};

NotImplementedRegistry& not_implemented_registry() {
    static NotImplementedRegistry registry;
    return registry;
}

}  // namespace

int to_rknn_code(StatusCode code) {
    switch (code) {
    case StatusCode::kOk: return RKNN_SUCC;
    case StatusCode::kInvalidArgument: return RKNN_ERR_PARAM_INVALID;
    case StatusCode::kContextInvalid: return RKNN_ERR_CTX_INVALID;
    case StatusCode::kModelInvalid: return RKNN_ERR_MODEL_INVALID;
    case StatusCode::kInputInvalid: return RKNN_ERR_INPUT_INVALID;
    case StatusCode::kOutputInvalid: return RKNN_ERR_OUTPUT_INVALID;
    case StatusCode::kResourceExhausted: return RKNN_ERR_MALLOC_FAIL;
    case StatusCode::kDeadlineExceeded: return RKNN_ERR_TIMEOUT;
    case StatusCode::kUnavailable: return RKNN_ERR_DEVICE_UNAVAILABLE;
    case StatusCode::kTargetMismatch: return RKNN_ERR_TARGET_PLATFORM_UNMATCH;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kUnimplemented:
    case StatusCode::kInternal: return RKNN_ERR_FAIL;
    }
    return RKNN_ERR_FAIL;
}

// What not_implemented() returns; any other kUnimplemented status (a model
// using what the runtime lacks) carries its own reason and is logged.
constexpr const char* kStubMessage = "not implemented";

int report(const char* function, const Status& status) {
    // A stub was already named once by not_implemented().
    if (status.code() != StatusCode::kUnimplemented || status.message() != kStubMessage) {
        RKNN_LOGE("%s: %s", function, status.message().c_str());
    }
    return to_rknn_code(status.code());
}

Status not_implemented(const char* function) {
    NotImplementedRegistry& registry = not_implemented_registry();
    bool first = false;
    {
        std::lock_guard<std::mutex> lock(registry.mutex);
        first = registry.reported.insert(function).second;
    }
    if (first) RKNN_LOGE("%s: not implemented in this build of OpenRKNN", function);
    return Status(StatusCode::kUnimplemented, kStubMessage);
}

Status check_handle(rknn_context handle, HandleKind kind) {
    if (HandleTable::global().find(handle, kind)) return Status::ok();
    const char* what = kind == HandleKind::kMatmul ? "matmul context" : "context";
    return make_status(StatusCode::kContextInvalid, "invalid %s 0x%llx (unknown, destroyed or 0)", what,
                       static_cast<unsigned long long>(handle));
}

Status check_any_handle(rknn_context handle) {
    if (HandleTable::global().find_any(handle)) return Status::ok();
    return make_status(StatusCode::kContextInvalid, "invalid context 0x%llx (unknown, destroyed or 0)",
                       static_cast<unsigned long long>(handle));
}

}  // namespace rknn::api
