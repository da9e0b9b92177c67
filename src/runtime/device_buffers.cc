#include "runtime/device_buffers.h"

#include <sys/stat.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <tuple>

#include "base/log.h"

namespace rknn::runtime {
namespace {

// A dma-buf imported into one driver. DRM gives the same handle back when a
// file imports a buffer again, so each (driver, dma-buf) is imported once
// and released with its last user.
struct Import {
    std::shared_ptr<driver::OpenedDriver> driver;
    driver::BufferObject bo;
};

struct ImportTable {
    using Key = std::tuple<const driver::OpenedDriver*, uint64_t, uint64_t>;
    std::mutex mutex;
    std::condition_variable released;  // an entry was erased
    std::map<Key, std::weak_ptr<Import>> imports;
};

ImportTable& import_table() {
    static ImportTable table;
    return table;
}

StatusOr<std::shared_ptr<Import>> import_once(const std::shared_ptr<driver::OpenedDriver>& driver, int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return RKNN_INVALID_ARGUMENT("fd %d is not an open file", fd);
    const ImportTable::Key key{driver.get(), static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    ImportTable& table = import_table();
    std::unique_lock<std::mutex> lock(table.mutex);
    for (;;) {
        auto it = table.imports.find(key);
        if (it == table.imports.end()) break;
        if (std::shared_ptr<Import> existing = it->second.lock()) return existing;
        table.released.wait(lock);  // its last user is closing the handle
    }
    RKNN_ASSIGN_OR_RETURN(driver::BufferObject bo, driver->driver->import_dmabuf(fd));
    // Released under the table's lock, so that a new import of the same
    // dma-buf cannot get the handle while it is being closed.
    std::shared_ptr<Import> imported(new Import{driver, bo}, [key](Import* gone) {
        ImportTable& t = import_table();
        {
            std::lock_guard<std::mutex> release(t.mutex);
            (void)gone->driver->driver->destroy_buffer(&gone->bo);
            t.imports.erase(key);
        }
        t.released.notify_all();
        delete gone;
    });
    table.imports[key] = imported;
    return imported;
}

}  // namespace

// One object the NPU reaches: a buffer created here (destroyed with the last
// reference, while its driver is still open), or client memory: the
// runtime's own buffer under it, an import of its dma-buf, or physical
// memory, with the client memory kept alive.
struct DeviceBuffers::Backing {
    std::shared_ptr<driver::OpenedDriver> driver;  // set where `bo` is this table's to destroy
    driver::BufferObject bo;
    std::shared_ptr<Import> imported;
    std::shared_ptr<IoMemory> client;
    std::shared_ptr<IoMemory> origin;  // the runtime's buffer under the client's memory, if it is one
    uint64_t origin_offset = 0;        // where the client's memory starts in it
    uint8_t* host = nullptr;
    uint64_t device = 0;

    ~Backing() {
        if (driver && bo.size != 0) (void)driver->driver->destroy_buffer(&bo);
    }

    Status sync(driver::SyncDirection direction, uint64_t offset, uint64_t bytes) const {
        // The runtime's own buffer under client memory is synced as its creator knows it.
        if (origin) return origin->sync(direction, origin_offset + offset, bytes);
        if (imported) {
            // An import does not say whether the memory is cacheable; the
            // kernel refuses to sync memory that is not (nothing to do then).
            const Status synced = imported->driver->driver->sync_buffer(imported->bo, direction, offset, bytes);
            return synced.code() == StatusCode::kInvalidArgument ? Status::ok() : synced;
        }
        if (driver) {
            if (!bo.cacheable()) return Status::ok();
            return driver->driver->sync_buffer(bo, direction, offset, bytes);
        }
        return client ? client->sync(direction, offset, bytes) : Status::ok();
    }
};

struct DeviceBuffers::Slot {
    std::shared_ptr<Backing> backing;  // null: nothing, or a view
    int32_t parent = -1;               // a view of this id
    uint64_t offset = 0;               // in the backing or the parent
    uint64_t bytes = 0;                // as requested
};

DeviceBuffers::~DeviceBuffers() = default;

std::shared_ptr<const DeviceBuffers::Slot> DeviceBuffers::own(const driver::BufferObject& bo, uint64_t bytes) const {
    auto slot = std::make_shared<Slot>();
    slot->bytes = bytes;
    if (bo.size == 0) return slot;
    slot->backing = std::make_shared<Backing>();
    slot->backing->driver = driver_;
    slot->backing->bo = bo;
    slot->backing->host = bo.host;
    slot->backing->device = bo.dma_addr;
    return slot;
}

StatusOr<driver::BufferObject> DeviceBuffers::create_detached(uint64_t bytes, uint32_t extra_flags,
                                                              uint64_t sram_limit) const {
    driver::BufferObject bo;
    if (bytes == 0) return bo;
    driver::BufferRequest request;
    request.size = bytes;
    request.sram_limit = sram_limit;
    request.flags = driver::buffer_flag::kCacheable | driver::buffer_flag::kZeroing | extra_flags;
    RKNN_ASSIGN_OR_RETURN(bo, driver_->driver->create_buffer(request));
    const Status mapped = driver_->driver->map_buffer(&bo);
    if (!mapped.is_ok()) {
        (void)driver_->driver->destroy_buffer(&bo);
        return mapped;
    }
    return bo;
}

StatusOr<std::unique_ptr<DeviceBuffers>> DeviceBuffers::create(std::shared_ptr<driver::OpenedDriver> driver,
                                                               const std::vector<uint64_t>& bytes, int32_t sram_id,
                                                               uint64_t sram_limit) {
    std::unique_ptr<DeviceBuffers> buffers(new DeviceBuffers(std::move(driver)));
    for (size_t id = 0; id < bytes.size(); ++id) {
        const bool sram = static_cast<int32_t>(id) == sram_id && sram_limit > 0;
        RKNN_ASSIGN_OR_RETURN(driver::BufferObject bo,
                              buffers->create_detached(bytes[id], sram ? driver::buffer_flag::kTrySram : 0u,
                                                       sram ? sram_limit : 0));
        buffers->slots_.push_back(buffers->own(bo, bytes[id]));
    }
    return buffers;
}

uint64_t DeviceBuffers::sram_bytes(int32_t id) const {
    const Slot& s = *slots_[static_cast<size_t>(id)];
    return s.parent < 0 && s.backing && s.backing->driver ? s.backing->bo.sram_size : 0;
}

uint8_t* DeviceBuffers::host(int32_t id) const {
    const Slot& s = *slots_[static_cast<size_t>(id)];
    if (s.parent >= 0) {
        uint8_t* base = host(s.parent);
        return base != nullptr ? base + s.offset : nullptr;
    }
    return s.backing ? s.backing->host + s.offset : nullptr;
}

uint64_t DeviceBuffers::device_address(int32_t id) const {
    const Slot& s = *slots_[static_cast<size_t>(id)];
    if (s.parent >= 0) {
        const uint64_t base = device_address(s.parent);
        return base != 0 ? base + s.offset : 0;
    }
    return s.backing ? s.backing->device + s.offset : 0;
}

uint64_t DeviceBuffers::size(int32_t id) const { return slots_[static_cast<size_t>(id)]->bytes; }

bool DeviceBuffers::is_view(int32_t id) const { return slots_[static_cast<size_t>(id)]->parent >= 0; }

void DeviceBuffers::discard(driver::BufferObject* buffer) const {
    if (buffer->size != 0) (void)driver_->driver->destroy_buffer(buffer);
}

Status DeviceBuffers::flush_detached(const driver::BufferObject& buffer) const {
    if (buffer.size == 0 || !buffer.cacheable()) return Status::ok();
    return driver_->driver->sync_buffer(buffer, driver::SyncDirection::kToDevice, 0, buffer.size);
}

void DeviceBuffers::install(int32_t id, const driver::BufferObject& buffer, uint64_t bytes) {
    slots_[static_cast<size_t>(id)] = own(buffer, bytes);  // the old one goes with its last reference
}

Status DeviceBuffers::share(int32_t id, const DeviceBuffers& other) {
    if (other.driver_ != driver_) return RKNN_INTERNAL_ERROR("buffers of two drivers cannot be shared");
    const auto index = static_cast<size_t>(id);
    if (index >= slots_.size() || index >= other.slots_.size()) return RKNN_INTERNAL_ERROR("no buffer %d to share", id);
    slots_[index] = other.slots_[index];
    return Status::ok();
}

bool DeviceBuffers::shares(int32_t id, const DeviceBuffers& other) const {
    const auto index = static_cast<size_t>(id);
    return index < slots_.size() && index < other.slots_.size() && slots_[index] == other.slots_[index] &&
           slots_[index]->backing != nullptr;
}

Status DeviceBuffers::attach_client(int32_t id, std::shared_ptr<IoMemory> memory, uint64_t offset, uint64_t bytes) {
    if (offset + bytes > memory->size())
        return RKNN_INVALID_ARGUMENT("%llu bytes from offset %llu lie beyond the memory's %llu",
                                     static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(offset),
                                     static_cast<unsigned long long>(memory->size()));
    auto backing = std::make_shared<Backing>();
    backing->host = memory->host();
    // The runtime's own buffer, maybe wrapped by the client from its fd or
    // physical address (importing one of this driver's buffers would give
    // back, and later close, the buffer's own handle).
    std::shared_ptr<IoMemory> origin = memory->opened_driver() != nullptr ? memory
                                       : memory->fd() >= 0 ? IoMemory::find_created(memory->fd())
                                                           : IoMemory::find_created(memory->physical_address(),
                                                                                    memory->host(), memory->size());
    if (origin) {
        // A dma-buf wrapper starts where its fd does; physical memory where its address is.
        if (origin != memory && memory->fd() < 0) backing->origin_offset = memory->physical_address() - origin->device_address();
        if (backing->origin_offset + offset + bytes > origin->size())
            return RKNN_INVALID_ARGUMENT("the client's memory reaches beyond the buffer under it");
    }
    if (origin && origin->opened_driver() == driver_.get()) {
        backing->device = origin->device_address() + backing->origin_offset;
    } else if (memory->fd() >= 0) {
        StatusOr<std::shared_ptr<Import>> imported = import_once(driver_, memory->fd());
        if (!imported.is_ok())
            return make_status(StatusCode::kInvalidArgument, "the NPU cannot reach this memory: importing fd %d: %s",
                               memory->fd(), imported.status().message().c_str());
        backing->imported = std::move(imported).value();
        backing->device = backing->imported->bo.dma_addr;
    } else if (memory->physical_address() != 0) {
        backing->device = memory->physical_address();  // the client vouches for it
    } else {
        return RKNN_INVALID_ARGUMENT("the NPU cannot reach this memory: it has neither a dma-buf fd nor a physical address");
    }
    backing->origin = std::move(origin);
    backing->client = std::move(memory);
    auto slot = std::make_shared<Slot>();
    slot->backing = std::move(backing);
    slot->offset = offset;
    slot->bytes = bytes;
    slots_[static_cast<size_t>(id)] = std::move(slot);
    return Status::ok();
}

void DeviceBuffers::attach_view(int32_t id, int32_t parent, uint64_t offset, uint64_t bytes) {
    auto slot = std::make_shared<Slot>();
    slot->parent = parent;
    slot->offset = offset;
    slot->bytes = bytes;
    slots_[static_cast<size_t>(id)] = std::move(slot);
}

std::vector<uint64_t> DeviceBuffers::bases() const {
    std::vector<uint64_t> bases;
    for (size_t id = 0; id < slots_.size(); ++id) bases.push_back(device_address(static_cast<int32_t>(id)));
    return bases;
}

uint64_t DeviceBuffers::total_allocated() const {
    uint64_t total = 0;
    for (const auto& slot : slots_)
        if (slot->backing && slot->backing->driver) total += slot->backing->bo.size;
    return total;
}

uint64_t DeviceBuffers::allocated(int32_t id) const {
    const auto index = static_cast<size_t>(id);
    if (index >= slots_.size()) return 0;
    const auto& slot = slots_[index];
    return slot->backing && slot->backing->driver ? slot->backing->bo.size : 0;
}

Status DeviceBuffers::sync(int32_t id, driver::SyncDirection direction, uint64_t offset, uint64_t bytes) const {
    const Slot* s = slots_[static_cast<size_t>(id)].get();
    if (offset >= s->bytes) return Status::ok();
    bytes = std::min(bytes, s->bytes - offset);
    while (s->parent >= 0) {  // a view: its range of what its parent stands for
        offset += s->offset;
        s = slots_[static_cast<size_t>(s->parent)].get();
    }
    if (!s->backing || bytes == 0) return Status::ok();
    return s->backing->sync(direction, offset + s->offset, bytes);
}

Status DeviceBuffers::flush(int32_t id) const { return sync(id, driver::SyncDirection::kToDevice, 0, size(id)); }

Status DeviceBuffers::invalidate(int32_t id) const { return sync(id, driver::SyncDirection::kFromDevice, 0, size(id)); }

Status DeviceBuffers::flush(int32_t id, uint64_t offset, uint64_t bytes) const {
    return sync(id, driver::SyncDirection::kToDevice, offset, bytes);
}

Status DeviceBuffers::invalidate(int32_t id, uint64_t offset, uint64_t bytes) const {
    return sync(id, driver::SyncDirection::kFromDevice, offset, bytes);
}

}  // namespace rknn::runtime
