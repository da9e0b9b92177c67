#include "driver/mock/mock_memory.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rknn::driver::mock {
namespace {

// Versions come from one counter, so no two buffers (or states) share one.
std::atomic<uint64_t> next_version{1};

uint8_t* map_bytes(int fd, uint64_t size) {
    const int flags = fd >= 0 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, flags, fd, 0);
    return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

}  // namespace

std::shared_ptr<MockMemory> MockMemory::create(uint64_t size, bool separate_device_view, int* out_err) {
    std::shared_ptr<MockMemory> m(new MockMemory());
    m->size_ = size;
    m->memfd_ = ::memfd_create("openrknn-mock-bo", MFD_CLOEXEC);
    struct stat st {};
    if (m->memfd_ < 0 || ::ftruncate(m->memfd_, static_cast<off_t>(size)) != 0 || ::fstat(m->memfd_, &st) != 0) {
        *out_err = errno > 0 ? -errno : -ENOMEM;
        return nullptr;
    }
    m->dev_ = st.st_dev;
    m->ino_ = st.st_ino;
    m->cpu_ = map_bytes(m->memfd_, size);
    m->device_ = separate_device_view ? map_bytes(-1, size) : m->cpu_;
    m->note_device_write();
    if (m->cpu_ == nullptr || m->device_ == nullptr) {
        *out_err = -ENOMEM;
        return nullptr;
    }
    return m;
}

MockMemory::~MockMemory() {
    if (device_ != nullptr && device_ != cpu_) ::munmap(device_, size_);
    if (cpu_ != nullptr) ::munmap(cpu_, size_);
    if (memfd_ >= 0) ::close(memfd_);
}

void MockMemory::sync_to_device(uint64_t offset, uint64_t length) {
    if (device_ == cpu_ || offset >= size_) return;
    if (length > size_ - offset) length = size_ - offset;
    std::memcpy(device_ + offset, cpu_ + offset, length);
    note_device_write();
}

void MockMemory::note_device_write() { device_version_.store(next_version.fetch_add(1)); }

void MockMemory::sync_from_device(uint64_t offset, uint64_t length) {
    if (device_ == cpu_ || offset >= size_) return;
    if (length > size_ - offset) length = size_ - offset;
    std::memcpy(cpu_ + offset, device_ + offset, length);
}

}  // namespace rknn::driver::mock
