// The boundary between the C ABI and the C++ internals.
//
// Every exported function runs its body through guard(): the body returns a
// Status (or StatusOr for functions that return a pointer), the guard maps it
// to an RKNN_ERR_* code with one table, logs the message once, and catches
// every exception so that none crosses the C API.
#pragma once

#include <cstring>
#include <exception>
#include <new>

#include "api/handle_table.h"
#include "base/log.h"
#include "base/status.h"
#include "rknn_api.h"

namespace rknn::api {

// The single mapping from internal status codes to the ABI's return codes.
int to_rknn_code(StatusCode code);

// Logs "<function>: <message>" as an error and returns the mapped code.
int report(const char* function, const Status& status);

// For a function whose feature has not landed: logs "<function>: not
// implemented" the first time it is called in the process, every call returns
// kUnimplemented (RKNN_ERR_FAIL). Later calls stay silent.
Status not_implemented(const char* function);

// kInvalidArgument with `what` as the message unless `condition` holds.
inline Status check_arg(bool condition, const char* what) {
    return condition ? Status::ok() : Status(StatusCode::kInvalidArgument, what);
}

// The integer a client actually passed for an enum parameter. Clients may pass
// any int; reading such a value through the enum type is undefined behaviour in
// C++, so the bits are copied out instead.
template <typename Enum>
int raw_enum(const Enum& value) {
    static_assert(sizeof(Enum) == sizeof(int), "ABI enums are int-sized");
    int raw = 0;
    std::memcpy(&raw, &value, sizeof(raw));
    return raw;
}

// kContextInvalid unless `handle` names a live object of `kind`.
Status check_handle(rknn_context handle, HandleKind kind);
// As above, accepting either a model context or a matmul context (the
// memory functions take both).
Status check_any_handle(rknn_context handle);

template <typename Body>
int guard(const char* function, Body&& body) noexcept {
    try {
        const Status status = body();
        return status.is_ok() ? RKNN_SUCC : report(function, status);
    } catch (const std::bad_alloc&) {
        return report(function, Status(StatusCode::kResourceExhausted, "out of memory"));
    } catch (const std::exception& e) {
        return report(function, Status(StatusCode::kInternal, e.what()));
    } catch (...) {
        return report(function, Status(StatusCode::kInternal, "unknown exception"));
    }
}

// For functions that return a pointer: nullptr on any failure.
template <typename T, typename Body>
T* guard_ptr(const char* function, Body&& body) noexcept {
    try {
        StatusOr<T*> result = body();
        if (result.is_ok()) return result.value();
        report(function, result.status());
    } catch (const std::bad_alloc&) {
        report(function, Status(StatusCode::kResourceExhausted, "out of memory"));
    } catch (const std::exception& e) {
        report(function, Status(StatusCode::kInternal, e.what()));
    } catch (...) {
        report(function, Status(StatusCode::kInternal, "unknown exception"));
    }
    return nullptr;
}

}  // namespace rknn::api

// Exported C entry points: default visibility (everything else is hidden).
#define RKNN_EXPORT extern "C" __attribute__((visibility("default")))
