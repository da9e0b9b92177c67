#include "runtime/run_fence.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

namespace rknn::runtime {
namespace {

void close_fd(int* fd) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
}

}  // namespace

StatusOr<OutFence> OutFence::create() {
    const int client = ::eventfd(0, EFD_CLOEXEC);
    if (client < 0)
        return make_status(StatusCode::kResourceExhausted, "no fd for an out-fence: %s", std::strerror(errno));
    const int ours = ::fcntl(client, F_DUPFD_CLOEXEC, 0);
    if (ours < 0) {
        const int err = errno;
        ::close(client);
        return make_status(StatusCode::kResourceExhausted, "no fd for an out-fence: %s", std::strerror(err));
    }
    OutFence fence;
    fence.client_fd_ = client;
    fence.write_fd_ = ours;
    return fence;
}

OutFence::OutFence(OutFence&& other) noexcept
    : client_fd_(std::exchange(other.client_fd_, -1)), write_fd_(std::exchange(other.write_fd_, -1)) {}

OutFence& OutFence::operator=(OutFence&& other) noexcept {
    if (this != &other) {
        signal();
        close_fd(&client_fd_);
        client_fd_ = std::exchange(other.client_fd_, -1);
        write_fd_ = std::exchange(other.write_fd_, -1);
    }
    return *this;
}

OutFence::~OutFence() {
    signal();
    close_fd(&client_fd_);
}

int OutFence::take_client_fd() { return std::exchange(client_fd_, -1); }

void OutFence::signal() {
    if (write_fd_ < 0) return;
    const uint64_t one = 1;
    ssize_t written;
    do {
        written = ::write(write_fd_, &one, sizeof(one));
    } while (written < 0 && errno == EINTR);
    close_fd(&write_fd_);
}

StatusOr<int> import_fence(int fd) {
    if (fd < 0) return make_status(StatusCode::kInvalidArgument, "fence fd %d is not a file descriptor", fd);
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0)
        return make_status(StatusCode::kInvalidArgument, "fence fd %d: %s (closed, or never opened)", fd,
                           std::strerror(errno));
    return copy;
}

Status wait_for_fence(int fd, int timeout_ms, int cancel_fd) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        pollfd fds[2] = {{fd, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0 && timeout_ms > 0) break;
        const int ret = ::poll(fds, cancel_fd >= 0 ? 2 : 1, static_cast<int>(left < 0 ? 0 : left));
        if (ret < 0 && errno == EINTR) continue;
        if (ret < 0) return make_status(StatusCode::kInternal, "poll on fence fd %d: %s", fd, std::strerror(errno));
        if (ret == 0) break;
        if (fds[0].revents & POLLIN) return Status::ok();
        if (fds[0].revents & (POLLERR | POLLNVAL))
            return make_status(StatusCode::kInvalidArgument, "fence fd %d cannot be waited on (poll error)", fd);
        if (fds[0].revents & POLLHUP) return Status::ok();  // a pipe whose writer is gone: signalled
        if (cancel_fd >= 0 && (fds[1].revents & POLLIN))
            return Status(StatusCode::kFailedPrecondition, "the context is being destroyed");
    }
    return make_status(StatusCode::kDeadlineExceeded, "in-fence fd %d did not signal within %d ms", fd, timeout_ms);
}

}  // namespace rknn::runtime
