// The table behind every rknn_context / rknn_matmul_ctx value handed to clients.
//
// Clients hold plain integers, compare them with 0 and pass them back after
// destroying them, so a handle must never be 0, never dereferenced unchecked and
// never reused: lookups of unknown or destroyed values simply fail. Objects are
// held by shared_ptr so that a call in progress keeps its object alive even if
// another thread destroys the handle meanwhile.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "rknn_api.h"

namespace rknn::api {

enum class HandleKind { kContext, kMatmul };

// Base of everything a handle can name.
class HandleObject {
public:
    virtual ~HandleObject() = default;
    virtual HandleKind kind() const = 0;
};

class HandleTable {
public:
    // The process-wide table used by the exported C functions.
    static HandleTable& global();

    // Stores `object` and returns its new handle (never 0, never a former handle).
    rknn_context insert(std::shared_ptr<HandleObject> object);

    // nullptr when `handle` is unknown, destroyed, or names another kind.
    std::shared_ptr<HandleObject> find(rknn_context handle, HandleKind kind) const;
    // nullptr when unknown or destroyed; any kind.
    std::shared_ptr<HandleObject> find_any(rknn_context handle) const;

    // Removes and returns the object (nullptr if unknown or of another kind).
    std::shared_ptr<HandleObject> remove(rknn_context handle, HandleKind kind);

    size_t size() const;

private:
    rknn_context next_handle_locked();

    mutable std::mutex mutex_;
    std::unordered_map<rknn_context, std::shared_ptr<HandleObject>> objects_;
    uint32_t counter_ = 0;
};

template <typename T>
std::shared_ptr<T> find_handle(rknn_context handle) {
    // dynamic: tests place other objects of the same kind in the table.
    return std::dynamic_pointer_cast<T>(HandleTable::global().find(handle, T::kHandleKind));
}

}  // namespace rknn::api
