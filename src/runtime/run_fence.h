// Fences of rknn_run (RKNN_FLAG_FENCE_IN_OUTSIDE / FENCE_OUT_OUTSIDE).
//
// An out-fence is an eventfd: it polls readable (POLLIN) once the run is
// over, as a sync_file does, and stays so while nobody reads it. The runtime
// signals through its own copy of the fd, so a client that closed its fence
// early costs nothing (a pipe would raise SIGPIPE). The runtime makes it rather
// than the kernel driver because a run is more than its NPU submits (CPU
// steps, conversions). An in-fence is any fd that polls readable when
// signalled: a sync_file from a driver, or another context's out-fence.
#pragma once

#include <cstdint>

#include "base/status.h"

namespace rknn::runtime {

// Our copy signals; the client's fd is handed out, and the client closes it.
class OutFence {
public:
    static StatusOr<OutFence> create();
    OutFence() = default;
    OutFence(OutFence&& other) noexcept;
    OutFence& operator=(OutFence&& other) noexcept;
    OutFence(const OutFence&) = delete;
    OutFence& operator=(const OutFence&) = delete;
    ~OutFence();  // signals, so that no waiter is left hanging

    // The fd for the client (once); -1 after.
    int take_client_fd();
    // Marks the fence signalled (idempotent).
    void signal();
    bool valid() const { return write_fd_ >= 0 || client_fd_ >= 0; }

private:
    int client_fd_ = -1;
    int write_fd_ = -1;
};

// A copy of the client's in-fence `fd` (which the client keeps), or
// kInvalidArgument when `fd` is closed or not a file descriptor.
StatusOr<int> import_fence(int fd);
// Waits until `fd` polls readable, at most `timeout_ms` (> 0); `cancel_fd`
// (-1: none) ends the wait early (kFailedPrecondition) when it becomes
// readable. kDeadlineExceeded after the timeout, kInvalidArgument when `fd`
// cannot be polled.
Status wait_for_fence(int fd, int timeout_ms, int cancel_fd);

}  // namespace rknn::runtime
