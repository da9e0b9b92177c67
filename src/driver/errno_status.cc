#include "driver/errno_status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace rknn::driver {

StatusCode status_code_for_errno(int err) {
    switch (err) {
    case EINVAL:
    case EBADF:
    case ENOTTY:
    case E2BIG: return StatusCode::kInvalidArgument;
    case ENOMEM:
    case ENOSPC: return StatusCode::kResourceExhausted;
    case ETIMEDOUT:
    case ETIME: return StatusCode::kDeadlineExceeded;
    case ENODEV:
    case ENOENT:
    case ENXIO:
    case EACCES: return StatusCode::kUnavailable;
    case EOPNOTSUPP:
    case ENOSYS: return StatusCode::kUnimplemented;
    default: return StatusCode::kInternal;
    }
}

Status errno_status(int neg_errno, const char* what) {
    const int err = neg_errno < 0 ? -neg_errno : neg_errno;
    return Status(status_code_for_errno(err),
                  std::string(what) + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")");
}

}  // namespace rknn::driver
