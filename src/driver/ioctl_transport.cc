#include "driver/ioctl_transport.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include <cerrno>

namespace rknn::driver {
namespace {

int negative_errno() { return errno > 0 ? -errno : -EIO; }

class SystemTransport final : public IoctlTransport {
public:
    const char* name() const override { return "system"; }

    int open(const std::string& path) override {
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        return fd >= 0 ? fd : negative_errno();
    }

    int close(int fd) override { return ::close(fd) == 0 ? 0 : negative_errno(); }

    int dup(int fd) override {
        const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
        return copy >= 0 ? copy : negative_errno();
    }

    int ioctl(int fd, unsigned long request, void* arg) override {
        // drmIoctl restarts on EINTR and EAGAIN, as libdrm users expect.
        const int ret = drmIoctl(fd, request, arg);
        return ret >= 0 ? ret : negative_errno();
    }

    int mmap(int fd, uint64_t offset, size_t length, void** out_addr) override {
        *out_addr = nullptr;
        void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
        if (p == MAP_FAILED) return negative_errno();
        *out_addr = p;
        return 0;
    }

    int munmap(void* addr, size_t length) override { return ::munmap(addr, length) == 0 ? 0 : negative_errno(); }
};

}  // namespace

std::shared_ptr<IoctlTransport> make_system_transport() { return std::make_shared<SystemTransport>(); }

}  // namespace rknn::driver
