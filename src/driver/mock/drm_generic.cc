#include "driver/mock/drm_generic.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "driver/mock/ioctl_args.h"

namespace rknn::driver::mock {
namespace {

// drm_copy_field: copies at most the user's buffer and reports the full length.
void copy_field(const char* value, char* buffer, __kernel_size_t* length) {
    const size_t full = std::strlen(value);
    const size_t n = full < *length ? full : *length;
    if (buffer != nullptr && n > 0) std::memcpy(buffer, value, n);
    *length = full;
}

}  // namespace

int drm_version_ioctl(const DrmIdentity& identity, drm_version* args) {
    args->version_major = identity.major;
    args->version_minor = identity.minor;
    args->version_patchlevel = identity.patch;
    copy_field(identity.name, args->name, &args->name_len);
    copy_field(identity.date, args->date, &args->date_len);
    copy_field(identity.desc, args->desc, &args->desc_len);
    return 0;
}

int drm_gem_close_ioctl(GemHandles& handles, drm_gem_close* args) {
    return handles.erase(args->handle) ? 0 : -EINVAL;
}

int drm_prime_export_ioctl(GemHandles& handles, drm_prime_handle* args) {
    if (args->flags & ~static_cast<uint32_t>(DRM_CLOEXEC | DRM_RDWR)) return -EINVAL;
    auto object = handles.find(args->handle);
    if (!object) return -ENOENT;
    const int fd = ::fcntl(object->memory->memfd(), (args->flags & DRM_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
    if (fd < 0) return -errno;
    args->fd = fd;
    return 0;
}

int find_dmabuf(const ObjectTable& table, int fd, NodeKind prefer, std::shared_ptr<MockObject>* out) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) return -EBADF;
    *out = table.find_file(st.st_dev, st.st_ino, prefer);
    return *out ? 0 : -EINVAL;
}

int drm_prime_import_ioctl(const ObjectTable& table, NodeKind kind, GemHandles& handles, const AdoptForeign& adopt,
                           drm_prime_handle* args) {
    std::shared_ptr<MockObject> found;
    const int err = find_dmabuf(table, args->fd, kind, &found);
    if (err != 0) return err;
    if (found->kind != kind) {
        int adopt_err = 0;
        found = adopt(found, &adopt_err);
        if (!found) return adopt_err;
    }
    args->handle = handles.insert(found);
    return 0;
}

int dispatch_generic_drm(const DrmNode& node, unsigned long cmd, void* arg) {
    switch (_IOC_NR(cmd)) {
    case _IOC_NR(DRM_IOCTL_VERSION):
        return drm_call<drm_version>(cmd, DRM_IOCTL_VERSION, arg,
                                     [&node](drm_version* a) { return drm_version_ioctl(node.identity, a); });
    case _IOC_NR(DRM_IOCTL_GEM_CLOSE):
        return drm_call<drm_gem_close>(cmd, DRM_IOCTL_GEM_CLOSE, arg,
                                       [&node](drm_gem_close* a) { return drm_gem_close_ioctl(node.handles, a); });
    case _IOC_NR(DRM_IOCTL_PRIME_HANDLE_TO_FD):
        return drm_call<drm_prime_handle>(cmd, DRM_IOCTL_PRIME_HANDLE_TO_FD, arg, [&node](drm_prime_handle* a) {
            return drm_prime_export_ioctl(node.handles, a);
        });
    case _IOC_NR(DRM_IOCTL_PRIME_FD_TO_HANDLE):
        return drm_call<drm_prime_handle>(cmd, DRM_IOCTL_PRIME_FD_TO_HANDLE, arg, [&node](drm_prime_handle* a) {
            return drm_prime_import_ioctl(node.objects, node.kind, node.handles, node.adopt, a);
        });
    default: return -EINVAL;  // FLINK/OPEN and the rest are not offered on these nodes
    }
}

}  // namespace rknn::driver::mock
