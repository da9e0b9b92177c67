#include "driver/drm_common.h"

#include <drm.h>
#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "driver/errno_status.h"

namespace rknn::driver {
namespace {

// Strings DRM_IOCTL_VERSION reports are short; the kernel tells the full
// length in *_len, so a second call would fetch a longer one.
constexpr size_t kVersionField = 128;

std::string field(const std::vector<char>& buffer, size_t reported) {
    return std::string(buffer.data(), std::min(reported, buffer.size()));
}

}  // namespace

StatusOr<DriverIdentity> drm_query_version(IoctlTransport& transport, int fd) {
    std::vector<char> name(kVersionField), date(kVersionField), desc(kVersionField);
    drm_version version{};
    version.name = name.data();
    version.name_len = name.size();
    version.date = date.data();
    version.date_len = date.size();
    version.desc = desc.data();
    version.desc_len = desc.size();
    const int ret = transport.ioctl(fd, DRM_IOCTL_VERSION, &version);
    if (ret < 0) return errno_status(ret, "DRM_IOCTL_VERSION");
    DriverIdentity id;
    id.name = field(name, version.name_len);
    id.date = field(date, version.date_len);
    id.description = field(desc, version.desc_len);
    id.version = std::to_string(version.version_major) + "." + std::to_string(version.version_minor) + "." +
                 std::to_string(version.version_patchlevel);
    return id;
}

Status drm_close_handle(IoctlTransport& transport, int fd, uint32_t handle) {
    drm_gem_close args{};
    args.handle = handle;
    const int ret = transport.ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args);
    return ret < 0 ? errno_status(ret, "DRM_IOCTL_GEM_CLOSE") : Status::ok();
}

StatusOr<int> drm_prime_export(IoctlTransport& transport, int fd, uint32_t handle) {
    drm_prime_handle args{};
    args.handle = handle;
    args.flags = DRM_CLOEXEC | DRM_RDWR;
    args.fd = -1;
    const int ret = transport.ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args);
    if (ret < 0) return errno_status(ret, "DRM_IOCTL_PRIME_HANDLE_TO_FD");
    return static_cast<int>(args.fd);
}

StatusOr<uint32_t> drm_prime_import(IoctlTransport& transport, int fd, int dmabuf_fd) {
    drm_prime_handle args{};
    args.fd = dmabuf_fd;
    const int ret = transport.ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args);
    if (ret < 0) return errno_status(ret, "DRM_IOCTL_PRIME_FD_TO_HANDLE");
    return args.handle;
}

}  // namespace rknn::driver
