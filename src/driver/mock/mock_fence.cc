#include "driver/mock/mock_fence.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace rknn::driver::mock {

int make_signalled_fence() {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return -errno;
    const char signalled = 1;
    const ssize_t written = ::write(ends[1], &signalled, 1);
    ::close(ends[1]);
    if (written != 1) {
        ::close(ends[0]);
        return -EIO;
    }
    return ends[0];
}

int wait_fence(int fd, uint32_t timeout_ms) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return -EINVAL;
    pollfd p{fd, POLLIN, 0};
    int ret;
    do {
        ret = ::poll(&p, 1, static_cast<int>(timeout_ms));
    } while (ret < 0 && errno == EINTR);
    if (ret < 0) return -errno;
    return (ret > 0 && (p.revents & POLLIN)) ? 0 : -ETIMEDOUT;
}

}  // namespace rknn::driver::mock
