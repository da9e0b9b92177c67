// Stand-ins for sync_file fences (RKNPU_JOB_FENCE_IN / FENCE_OUT, hw-facts 1.6).
// A fence is the read end of a pipe: it polls readable (POLLIN) once it has
// signalled, which is how a sync_file behaves for poll(). Mock jobs complete
// before SUBMIT returns, so out-fences are created already signalled.
#pragma once

#include <cstdint>

namespace rknn::driver::mock {

// A signalled fence fd (the caller owns it), or a negative errno.
int make_signalled_fence();
// Waits for an in-fence: 0 when it signalled, -EINVAL when `fd` is not a
// fence (not a pipe), -ETIMEDOUT when it did not signal within `timeout_ms`.
int wait_fence(int fd, uint32_t timeout_ms);

}  // namespace rknn::driver::mock
