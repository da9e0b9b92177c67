#include "runtime/io_memory.h"

#include <linux/dma-buf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "base/log.h"

namespace rknn::runtime {
namespace {

// Memory created by the runtime, found again from a dma-buf fd.
struct CreatedMemory {
    std::mutex mutex;
    std::vector<std::weak_ptr<IoMemory>> live;
};

CreatedMemory& created_memory() {
    static CreatedMemory registry;
    return registry;
}

bool file_identity(int fd, uint64_t* device, uint64_t* inode) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) return false;
    *device = static_cast<uint64_t>(st.st_dev);
    *inode = static_cast<uint64_t>(st.st_ino);
    return true;
}

// The first live created memory `match` accepts (then `add`, if any, is
// registered); drops the dead entries on the way.
template <typename Match>
std::shared_ptr<IoMemory> find_live(const Match& match, const std::shared_ptr<IoMemory>& add = nullptr) {
    CreatedMemory& registry = created_memory();
    std::lock_guard<std::mutex> lock(registry.mutex);
    std::shared_ptr<IoMemory> found;
    registry.live.erase(std::remove_if(registry.live.begin(), registry.live.end(),
                                       [&](const std::weak_ptr<IoMemory>& entry) {
                                           std::shared_ptr<IoMemory> memory = entry.lock();
                                           if (!memory) return true;
                                           if (!found && match(*memory)) found = memory;
                                           return false;
                                       }),
                        registry.live.end());
    if (add) registry.live.push_back(add);
    return found;
}

}  // namespace

std::shared_ptr<IoMemory> IoMemory::find_created(int fd) {
    uint64_t device = 0, inode = 0;
    if (!file_identity(fd, &device, &inode)) return nullptr;
    return find_live([&](const IoMemory& m) { return m.fd_device_ == device && m.fd_inode_ == inode; });
}

std::shared_ptr<IoMemory> IoMemory::find_created(uint64_t device, const uint8_t* host, uint64_t bytes) {
    return find_live([&](const IoMemory& m) {
        const uint64_t base = m.device_address();
        return base != 0 && device >= base && device - base + bytes <= m.size() && host == m.host() + (device - base);
    });
}

StatusOr<std::shared_ptr<IoMemory>> IoMemory::create(std::shared_ptr<driver::OpenedDriver> driver, uint64_t bytes,
                                                     bool cacheable, int32_t iommu_domain) {
    if (bytes == 0) return RKNN_INVALID_ARGUMENT("a buffer of 0 bytes");
    std::shared_ptr<IoMemory> memory(new IoMemory(std::move(driver), bytes));
    driver::BufferRequest request;
    request.size = bytes;
    request.flags = driver::buffer_flag::kZeroing | (cacheable ? driver::buffer_flag::kCacheable : 0u);
    request.iommu_domain = iommu_domain;
    driver::KernelDriver& kd = *memory->driver_->driver;
    RKNN_ASSIGN_OR_RETURN(memory->bo_, kd.create_buffer(request));
    // From here on the destructor releases what was made.
    RKNN_RETURN_IF_ERROR(kd.map_buffer(&memory->bo_));
    memory->host_ = memory->bo_.host;
    StatusOr<int> fd = kd.export_dmabuf(memory->bo_);
    if (fd.is_ok()) {
        memory->fd_ = fd.value();
        memory->owns_fd_ = true;
        (void)file_identity(memory->fd_, &memory->fd_device_, &memory->fd_inode_);
    } else {
        RKNN_LOG_AT(3, "rknn_create_mem: no dma-buf fd for the buffer (%s); fd is -1", fd.status().message().c_str());
    }
    // Registered, so that a client's wrapper of it can be found.
    (void)find_live([](const IoMemory&) { return false; }, memory);
    return memory;
}

StatusOr<std::shared_ptr<IoMemory>> IoMemory::wrap(int fd, void* virt, uint64_t bytes, uint64_t phys) {
    if (bytes == 0) return RKNN_INVALID_ARGUMENT("memory of 0 bytes");
    std::shared_ptr<IoMemory> memory(new IoMemory(nullptr, bytes));
    memory->fd_ = fd;
    memory->phys_ = phys;
    if (virt == nullptr) {
        if (fd < 0) return RKNN_INVALID_ARGUMENT("neither a mapping nor an fd to map");
        void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            return make_status(StatusCode::kInvalidArgument, "mapping fd %d (%llu bytes): %s", fd,
                               static_cast<unsigned long long>(bytes), std::strerror(errno));
        memory->mapped_ = p;
        virt = p;
    }
    memory->host_ = static_cast<uint8_t*>(virt);
    return memory;
}

IoMemory::~IoMemory() {
    if (mapped_ != nullptr) ::munmap(mapped_, bytes_);
    if (owns_fd_ && fd_ >= 0) ::close(fd_);
    if (driver_ && bo_.size != 0) (void)driver_->driver->destroy_buffer(&bo_);
}

Status IoMemory::sync(driver::SyncDirection direction, uint64_t offset, uint64_t bytes) const {
    if (driver_) {
        if (!bo_.cacheable() || bytes == 0) return Status::ok();
        return driver_->driver->sync_buffer(bo_, direction, offset, bytes);
    }
    if (fd_ < 0) return Status::ok();  // physical memory: the client's allocator keeps it coherent
    // A client dma-buf: one begin/end pair in the asked direction.
    const uint64_t rw = direction == driver::SyncDirection::kToDevice ? DMA_BUF_SYNC_WRITE : DMA_BUF_SYNC_READ;
    for (uint64_t phase : {DMA_BUF_SYNC_START, DMA_BUF_SYNC_END}) {
        dma_buf_sync sync{phase | rw};
        if (::ioctl(fd_, DMA_BUF_IOCTL_SYNC, &sync) != 0) {
            if (errno == ENOTTY) return Status::ok();  // not a dma-buf (a plain shared file): coherent already
            return make_status(StatusCode::kInternal, "DMA_BUF_IOCTL_SYNC on fd %d: %s", fd_, std::strerror(errno));
        }
    }
    return Status::ok();
}

}  // namespace rknn::runtime
