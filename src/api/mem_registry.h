// The rknn_tensor_mem descriptors this runtime created.
//
// Clients pass rknn_tensor_mem pointers back to us (destroy, sync, bind). A
// pointer we did not hand out, or one already destroyed, must fail cleanly
// instead of being dereferenced, so every such call looks the pointer up here
// first. The record owns the descriptor; its address is the key.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>

#include "base/status.h"
#include "rknn_api.h"
#include "runtime/io_memory.h"

namespace rknn::api {

struct MemRecord {
    rknn_tensor_mem descriptor{};   // what the client sees
    bool no_context = false;        // RKNN_MEM_FLAG_ALLOC_NO_CONTEXT: any context may free it
    rknn_context creator = 0;       // the handle passed to the create call
    std::shared_ptr<runtime::IoMemory> memory;  // the device buffer, for memory the runtime allocated
};

class MemRegistry {
public:
    static MemRegistry& global();

    // Takes ownership; returns the client-visible descriptor.
    rknn_tensor_mem* insert(std::shared_ptr<MemRecord> record);
    // nullptr if `mem` was not created here or was destroyed.
    std::shared_ptr<MemRecord> find(const rknn_tensor_mem* mem) const;
    std::shared_ptr<MemRecord> remove(const rknn_tensor_mem* mem);
    // The memory whose mapping holds [p, p + bytes), or null.
    std::shared_ptr<runtime::IoMemory> memory_holding(const void* p, uint64_t bytes) const;

private:
    mutable std::mutex mutex_;
    std::unordered_map<const rknn_tensor_mem*, std::shared_ptr<MemRecord>> records_;
};

// Finds a descriptor this runtime created and checks that `ctx` (a context
// or matmul handle) may use it. With `ctx_optional`, 0 is accepted for any
// descriptor (rknn_mem_sync).
StatusOr<std::shared_ptr<MemRecord>> lookup_mem(rknn_context ctx, const rknn_tensor_mem* mem, bool ctx_optional);

}  // namespace rknn::api
