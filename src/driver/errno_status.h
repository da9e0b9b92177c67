// Turning a kernel error (a negative errno from IoctlTransport) into a Status,
// with one table for every back-end (STYLE.md "Error path"):
//   EINVAL, EBADF, ENOTTY, E2BIG      -> kInvalidArgument
//   ENOMEM, ENOSPC                    -> kResourceExhausted
//   ETIMEDOUT, ETIME                  -> kDeadlineExceeded
//   ENODEV, ENOENT, ENXIO, EACCES     -> kUnavailable
//   EOPNOTSUPP, ENOSYS                -> kUnimplemented
//   anything else (EFAULT, EIO, ...)  -> kInternal
// The message names the call and keeps the errno number, e.g.
// "DRM_IOCTL_RKNPU_SUBMIT: Connection timed out (errno 110)".
#pragma once

#include "base/status.h"

namespace rknn::driver {

StatusCode status_code_for_errno(int err);
// `neg_errno` is the transport's negative return value.
Status errno_status(int neg_errno, const char* what);

}  // namespace rknn::driver
