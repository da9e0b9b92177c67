// IoctlTransport: the one door through which the kernel-driver back-ends
// reach a kernel. Every open, ioctl, mmap, munmap, dup and close of the rknpu
// and rocket back-ends goes through it, so the same back-end code runs on a
// board (SystemTransport: the real syscalls) and in tests (the mock kernel,
// driver/mock/mock_kernel.h, which implements this interface).
//
// Error convention: every call returns a negative errno on failure and never
// reports through the global errno. Successful calls return >= 0; for ioctl
// that is the kernel's return value, which is not always 0 (rocket's PREP_BO
// returns the remaining wait in jiffies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace rknn::driver {

class IoctlTransport {
public:
    virtual ~IoctlTransport() = default;

    // A short name for logs: "system" or "mock".
    virtual const char* name() const = 0;
    // open(2) with O_RDWR | O_CLOEXEC: a file descriptor, or -errno.
    virtual int open(const std::string& path) = 0;
    virtual int close(int fd) = 0;
    // fcntl(F_DUPFD_CLOEXEC): a new descriptor for the same file, or -errno.
    virtual int dup(int fd) = 0;
    // ioctl(2), retried on EINTR/EAGAIN.
    virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
    // mmap(2) of `length` bytes at `offset`, shared, read/write. On success
    // *out_addr is the mapping and the result is 0.
    virtual int mmap(int fd, uint64_t offset, size_t length, void** out_addr) = 0;
    virtual int munmap(void* addr, size_t length) = 0;
};

// The real system calls (drmIoctl for ioctls). Stateless.
std::shared_ptr<IoctlTransport> make_system_transport();

}  // namespace rknn::driver
