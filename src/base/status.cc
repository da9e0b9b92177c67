#include "base/status.h"

#include <cstdarg>
#include <vector>

namespace rknn {

const char* status_code_name(StatusCode code) {
    switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kContextInvalid: return "invalid context";
    case StatusCode::kModelInvalid: return "invalid model";
    case StatusCode::kInputInvalid: return "invalid input";
    case StatusCode::kOutputInvalid: return "invalid output";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kTargetMismatch: return "target platform mismatch";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kUnimplemented: return "not implemented";
    case StatusCode::kInternal: return "internal error";
    }
    return "unknown";
}

Status make_status(StatusCode code, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    va_list copy;
    va_copy(copy, args);
    const int needed = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::string message;
    if (needed > 0) {
        std::vector<char> buffer(static_cast<size_t>(needed) + 1);
        std::vsnprintf(buffer.data(), buffer.size(), fmt, args);
        message.assign(buffer.data(), static_cast<size_t>(needed));
    }
    va_end(args);
    return Status(code, std::move(message));
}

}  // namespace rknn
