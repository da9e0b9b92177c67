// Exported memory functions of rknn_api.h: create/destroy/sync descriptors and
// bind them to a context.
//
// Memory is not tied to one context: clients free it through another context,
// through a matmul handle, or with ctx 0 when it was made with
// RKNN_MEM_FLAG_ALLOC_NO_CONTEXT. Descriptors are checked against the registry
// before anything reads them.
#include "api/api_guard.h"
#include "api/context_handle.h"
#include "api/matmul_handle.h"
#include "api/mem_registry.h"
#include "runtime/context.h"

using rknn::Status;
using rknn::StatusCode;
using rknn::StatusOr;
using rknn::api::check_any_handle;
using rknn::api::check_arg;
using rknn::api::check_handle;
using rknn::api::guard;
using rknn::api::guard_ptr;
using rknn::api::HandleKind;
using rknn::api::MemRecord;
using rknn::api::lookup_mem;
using rknn::api::MemRegistry;
using rknn::api::not_implemented;

StatusOr<std::shared_ptr<MemRecord>> rknn::api::lookup_mem(rknn_context ctx, const rknn_tensor_mem* mem,
                                                bool ctx_optional) {
    RKNN_RETURN_IF_ERROR(check_arg(mem != nullptr, "mem is NULL"));
    if (ctx != 0) RKNN_RETURN_IF_ERROR(check_any_handle(ctx));
    std::shared_ptr<MemRecord> record = MemRegistry::global().find(mem);
    if (!record) {
        return RKNN_INVALID_ARGUMENT("mem %p was not created by rknn_create_mem* or was already destroyed",
                                     static_cast<const void*>(mem));
    }
    if (ctx == 0 && !ctx_optional && !record->no_context) {
        return Status(StatusCode::kContextInvalid,
                      "context is 0, but this memory was not created with RKNN_MEM_FLAG_ALLOC_NO_CONTEXT");
    }
    return record;
}

namespace {

constexpr uint64_t kKnownAllocFlags = RKNN_FLAG_MEMORY_CACHEABLE | RKNN_FLAG_MEMORY_NON_CACHEABLE |
                                      RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM | RKNN_MEM_FLAG_ALLOC_NO_CONTEXT;


// A descriptor to bind to a model context, with the range of its memory it
// names now (the client may adjust offset and size within the buffer).
struct MemBinding {
    std::shared_ptr<rknn::runtime::Context> context;
    std::shared_ptr<MemRecord> record;
    uint64_t offset = 0;
    uint64_t bytes = 0;
};

StatusOr<MemBinding> check_mem_binding(rknn_context ctx, rknn_tensor_mem* mem) {
    RKNN_RETURN_IF_ERROR(check_handle(ctx, HandleKind::kContext));
    MemBinding binding;
    RKNN_ASSIGN_OR_RETURN(binding.record, lookup_mem(ctx, mem, false));
    // Read once: the client owns the descriptor and may change it meanwhile.
    const int32_t offset = binding.record->descriptor.offset;
    const uint32_t size = binding.record->descriptor.size;
    RKNN_RETURN_IF_ERROR(check_arg(offset >= 0 && static_cast<uint64_t>(offset) + size <= binding.record->memory->size(),
                                   "mem->offset + mem->size lie beyond the buffer"));
    binding.offset = static_cast<uint64_t>(offset);
    binding.bytes = size;
    RKNN_ASSIGN_OR_RETURN(binding.context, rknn::api::runtime_context(ctx));
    return binding;
}

// `memory` as a registered descriptor. For client memory the NPU address is
// the client's physical one, or 0 for an fd (it is imported when it is bound).
rknn_tensor_mem* register_mem(rknn_context ctx, std::shared_ptr<rknn::runtime::IoMemory> memory, uint64_t phys,
                              int32_t fd, int32_t offset, uint32_t size, int32_t flags, bool no_context = false) {
    auto record = std::make_shared<MemRecord>();
    record->creator = ctx;
    record->no_context = no_context;
    rknn_tensor_mem& d = record->descriptor;
    d.virt_addr = memory->host();
    d.phys_addr = phys;
    d.fd = fd;
    d.offset = offset;
    d.size = size;
    d.flags = flags;
    record->memory = std::move(memory);
    rknn_tensor_mem* descriptor = MemRegistry::global().insert(record);
    descriptor->priv_data = record.get();
    return descriptor;
}

// A device buffer of `size` bytes on the context's device, as a registered descriptor.
StatusOr<rknn_tensor_mem*> create_device_mem(rknn_context ctx, uint64_t size, bool cacheable, bool no_context) {
    if (check_handle(ctx, HandleKind::kContext).is_ok()) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::runtime::Context> context, rknn::api::runtime_context(ctx));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::runtime::IoMemory> memory, context->create_memory(size, cacheable));
        const uint64_t phys = memory->device_address();
        const int32_t fd = memory->fd();
        return register_mem(ctx, std::move(memory), phys, fd, 0, static_cast<uint32_t>(size),
                            RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, no_context);
    }
    if (ctx == 0) {
        // Before any context: on a driver opened for it, which the memory keeps
        // open. A context it is bound to imports it (as memory of another context).
        RKNN_ASSIGN_OR_RETURN(rknn::driver::OpenedDriver opened, rknn::driver::open_kernel_driver());
        auto driver = std::make_shared<rknn::driver::OpenedDriver>(std::move(opened));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::runtime::IoMemory> memory,
                              rknn::runtime::IoMemory::create(std::move(driver), size, cacheable));
        const uint64_t phys = memory->device_address();
        const int32_t fd = memory->fd();
        return register_mem(0, std::move(memory), phys, fd, 0, static_cast<uint32_t>(size),
                            RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, true);
    }
    if (auto matmul = rknn::api::find_handle<rknn::api::MatmulHandle>(ctx)) {
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::runtime::IoMemory> memory,
                              matmul->context().create_memory(size, cacheable));
        const uint64_t phys = memory->device_address();
        const int32_t fd = memory->fd();
        return register_mem(ctx, std::move(memory), phys, fd, 0, static_cast<uint32_t>(size),
                            RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, no_context);
    }
    RKNN_RETURN_IF_ERROR(check_any_handle(ctx));
    return Status(StatusCode::kInternal, "a handle of no known kind");
}

}  // namespace

RKNN_EXPORT rknn_tensor_mem* rknn_create_mem_from_phys(rknn_context ctx, uint64_t phys_addr,
                                                       void* virt_addr, uint32_t size) {
    return guard_ptr<rknn_tensor_mem>("rknn_create_mem_from_phys", [&]() -> StatusOr<rknn_tensor_mem*> {
        RKNN_RETURN_IF_ERROR(check_any_handle(ctx));
        RKNN_RETURN_IF_ERROR(check_arg(virt_addr != nullptr, "virt_addr is NULL"));
        RKNN_RETURN_IF_ERROR(check_arg(size > 0, "size is 0"));
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::runtime::IoMemory> memory,
                              rknn::runtime::IoMemory::wrap(-1, virt_addr, size, phys_addr));
        return register_mem(ctx, std::move(memory), phys_addr, -1, 0, size, RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS);
    });
}

RKNN_EXPORT rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr,
                                                     uint32_t size, int32_t offset) {
    return guard_ptr<rknn_tensor_mem>("rknn_create_mem_from_fd", [&]() -> StatusOr<rknn_tensor_mem*> {
        RKNN_RETURN_IF_ERROR(check_any_handle(ctx));
        RKNN_RETURN_IF_ERROR(check_arg(fd >= 0, "fd is negative"));
        RKNN_RETURN_IF_ERROR(check_arg(size > 0, "size is 0"));
        RKNN_RETURN_IF_ERROR(check_arg(offset >= 0, "offset is negative"));
        // virt_addr is the start of the fd (the data at offset); NULL: mapped here.
        const uint64_t span = static_cast<uint64_t>(offset) + size;
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<rknn::runtime::IoMemory> memory,
                              rknn::runtime::IoMemory::wrap(fd, virt_addr, span));
        return register_mem(ctx, std::move(memory), 0, fd, offset, size, RKNN_TENSOR_MEMORY_FLAGS_FROM_FD);
    });
}

// Rockchip MPI buffers do not exist outside the vendor BSP; the vendor runtime
// never exported this either. It is here so that sources declaring it link.
RKNN_EXPORT rknn_tensor_mem* rknn_create_mem_from_mb_blk(rknn_context ctx, void* mb_blk, int32_t offset) {
    return guard_ptr<rknn_tensor_mem>("rknn_create_mem_from_mb_blk", [&]() -> StatusOr<rknn_tensor_mem*> {
        RKNN_RETURN_IF_ERROR(check_any_handle(ctx));
        RKNN_RETURN_IF_ERROR(check_arg(mb_blk != nullptr, "mb_blk is NULL"));
        (void)offset;
        return Status(StatusCode::kUnimplemented,
                      "MB_BLK memory is not supported on any platform; use rknn_create_mem_from_fd");
    });
}

RKNN_EXPORT rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size) {
    return guard_ptr<rknn_tensor_mem>("rknn_create_mem", [&]() -> StatusOr<rknn_tensor_mem*> {
        RKNN_RETURN_IF_ERROR(check_any_handle(ctx));
        RKNN_RETURN_IF_ERROR(check_arg(size > 0, "size is 0"));
        return create_device_mem(ctx, size, true, false);  // cacheable, as the vendor's
    });
}

RKNN_EXPORT rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags) {
    return guard_ptr<rknn_tensor_mem>("rknn_create_mem2", [&]() -> StatusOr<rknn_tensor_mem*> {
        const bool no_context = (alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) != 0;
        if (ctx != 0 || !no_context) RKNN_RETURN_IF_ERROR(check_any_handle(ctx));
        RKNN_RETURN_IF_ERROR(check_arg(size > 0, "size is 0"));
        RKNN_RETURN_IF_ERROR(check_arg(size <= UINT32_MAX, "size does not fit rknn_tensor_mem.size (32 bits)"));
        RKNN_RETURN_IF_ERROR(check_arg((alloc_flags & ~kKnownAllocFlags) == 0, "unknown alloc_flags bits"));
        RKNN_RETURN_IF_ERROR(check_arg(!((alloc_flags & RKNN_FLAG_MEMORY_CACHEABLE) &&
                                         (alloc_flags & RKNN_FLAG_MEMORY_NON_CACHEABLE)),
                                       "CACHEABLE and NON_CACHEABLE are exclusive"));
        // TRY_ALLOC_SRAM is a wish: ordinary memory satisfies it.
        return create_device_mem(ctx, size, (alloc_flags & RKNN_FLAG_MEMORY_NON_CACHEABLE) == 0, no_context);
    });
}

RKNN_EXPORT int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem) {
    return guard("rknn_destroy_mem", [&]() -> Status {
        // Memory outlives the context it was made on: freeing it through that
        // (now destroyed) handle must still work, or the buffer would leak.
        std::shared_ptr<MemRecord> own = mem != nullptr ? MemRegistry::global().find(mem) : nullptr;
        if (own && ctx != 0 && own->creator == ctx) {
            MemRegistry::global().remove(mem);
            return Status::ok();
        }
        RKNN_RETURN_IF_ERROR(lookup_mem(ctx, mem, false).status());
        MemRegistry::global().remove(mem);
        return Status::ok();
    });
}

RKNN_EXPORT int rknn_destory_mem(rknn_context ctx, rknn_tensor_mem* mem) { return rknn_destroy_mem(ctx, mem); }

RKNN_EXPORT int rknn_set_weight_mem(rknn_context ctx, rknn_tensor_mem* mem) {
    return guard("rknn_set_weight_mem", [&]() -> Status {
        RKNN_ASSIGN_OR_RETURN(MemBinding binding, check_mem_binding(ctx, mem));
        return binding.context->set_weight_memory(binding.record->memory, binding.offset, binding.bytes);
    });
}

RKNN_EXPORT int rknn_set_internal_mem(rknn_context ctx, rknn_tensor_mem* mem) {
    return guard("rknn_set_internal_mem", [&]() -> Status {
        RKNN_ASSIGN_OR_RETURN(MemBinding binding, check_mem_binding(ctx, mem));
        return binding.context->set_internal_memory(binding.record->memory, binding.offset, binding.bytes);
    });
}

RKNN_EXPORT int rknn_set_io_mem(rknn_context ctx, rknn_tensor_mem* mem, rknn_tensor_attr* attr) {
    return guard("rknn_set_io_mem", [&]() -> Status {
        RKNN_RETURN_IF_ERROR(check_arg(attr != nullptr, "attr is NULL"));
        RKNN_ASSIGN_OR_RETURN(MemBinding binding, check_mem_binding(ctx, mem));
        rknn::runtime::IoMemory& memory = *binding.record->memory;
        return binding.context->bind_io_memory(binding.record->memory, memory.host() + binding.offset, binding.bytes, *attr);
    });
}

RKNN_EXPORT int rknn_mem_sync(rknn_context context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode) {
    return guard("rknn_mem_sync", [&]() -> Status {
        const int raw_mode = rknn::api::raw_enum(mode);
        RKNN_RETURN_IF_ERROR(check_arg(raw_mode >= RKNN_MEMORY_SYNC_TO_DEVICE && raw_mode <= RKNN_MEMORY_SYNC_BIDIRECTIONAL,
                                       "unknown sync mode"));
        // The context may be 0 here on every platform we support.
        RKNN_ASSIGN_OR_RETURN(std::shared_ptr<MemRecord> record, lookup_mem(context, mem, true));
        if (raw_mode & RKNN_MEMORY_SYNC_TO_DEVICE)
            RKNN_RETURN_IF_ERROR(record->memory->sync(rknn::driver::SyncDirection::kToDevice));
        if (raw_mode & RKNN_MEMORY_SYNC_FROM_DEVICE)
            RKNN_RETURN_IF_ERROR(record->memory->sync(rknn::driver::SyncDirection::kFromDevice));
        return Status::ok();
    });
}
