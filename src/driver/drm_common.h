// The generic DRM ioctls both back-ends use on their device fd: VERSION,
// GEM_CLOSE and the two PRIME (dma-buf) conversions. The rknpu render node
// and the rocket accel node are both DRM devices and answer them alike.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "driver/ioctl_transport.h"
#include "driver/kernel_driver.h"

namespace rknn::driver {

// DRM_IOCTL_VERSION: fills name, version ("major.minor.patch"), date, description.
StatusOr<DriverIdentity> drm_query_version(IoctlTransport& transport, int fd);
Status drm_close_handle(IoctlTransport& transport, int fd, uint32_t handle);
// PRIME_HANDLE_TO_FD with DRM_CLOEXEC | DRM_RDWR: a new dma-buf fd.
StatusOr<int> drm_prime_export(IoctlTransport& transport, int fd, uint32_t handle);
// PRIME_FD_TO_HANDLE: the GEM handle this file has for the dma-buf.
StatusOr<uint32_t> drm_prime_import(IoctlTransport& transport, int fd, int dmabuf_fd);

}  // namespace rknn::driver
