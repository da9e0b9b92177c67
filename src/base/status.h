// Status and StatusOr: how every internal layer reports failure.
//
// Internal code never throws across a layer boundary and never asserts on a
// runtime failure (ioctl, mmap, allocation, bad model); it returns a Status.
// The C API (src/api/) turns the code into an RKNN_ERR_* value and logs the
// message once, there.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace rknn {

// A small canonical set; src/api/api_guard.cc maps each one to a return code.
enum class StatusCode {
    kOk = 0,
    kInvalidArgument,    // a caller passed a bad value or pointer
    kContextInvalid,     // an unknown or destroyed handle
    kModelInvalid,       // the model file is malformed or unsupported
    kInputInvalid,       // inputs missing or not convertible
    kOutputInvalid,      // outputs missing or not convertible
    kResourceExhausted,  // allocation failed
    kDeadlineExceeded,   // a submit or wait timed out
    kUnavailable,        // no device, or the device went away
    kTargetMismatch,     // model built for another SoC
    kFailedPrecondition, // call made in the wrong order
    kUnimplemented,      // the feature has not landed yet
    kInternal,           // anything else
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

    static Status ok() { return Status(); }

    bool is_ok() const { return code_ == StatusCode::kOk; }
    StatusCode code() const { return code_; }
    const std::string& message() const { return message_; }

    // Prefixes context on the way up ("layer 12 conv: " + message).
    Status with_context(const std::string& context) const {
        if (is_ok()) return *this;
        return Status(code_, context + ": " + message_);
    }

private:
    StatusCode code_ = StatusCode::kOk;
    std::string message_;
};

// printf-style constructors for the common codes.
Status make_status(StatusCode code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
#define RKNN_INVALID_ARGUMENT(...) ::rknn::make_status(::rknn::StatusCode::kInvalidArgument, __VA_ARGS__)
#define RKNN_INTERNAL_ERROR(...) ::rknn::make_status(::rknn::StatusCode::kInternal, __VA_ARGS__)

template <typename T>
class [[nodiscard]] StatusOr {
public:
    StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
    StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
        if (status_.is_ok()) status_ = Status(StatusCode::kInternal, "StatusOr built from an ok Status");
    }

    bool is_ok() const { return status_.is_ok(); }
    const Status& status() const { return status_; }
    T& value() & { return *value_; }
    const T& value() const& { return *value_; }
    T&& value() && { return std::move(*value_); }
    T* operator->() { return &*value_; }
    const T* operator->() const { return &*value_; }

private:
    Status status_;
    std::optional<T> value_;
};

}  // namespace rknn

#define RKNN_STATUS_CONCAT_INNER(a, b) a##b
#define RKNN_STATUS_CONCAT(a, b) RKNN_STATUS_CONCAT_INNER(a, b)

#define RKNN_RETURN_IF_ERROR(expr)                  \
    do {                                            \
        ::rknn::Status rknn_status_ = (expr);       \
        if (!rknn_status_.is_ok()) return rknn_status_; \
    } while (0)

#define RKNN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
    auto tmp = (expr);                             \
    if (!tmp.is_ok()) return tmp.status();         \
    lhs = std::move(tmp).value()

#define RKNN_ASSIGN_OR_RETURN(lhs, expr) \
    RKNN_ASSIGN_OR_RETURN_IMPL(RKNN_STATUS_CONCAT(rknn_statusor_, __LINE__), lhs, expr)
