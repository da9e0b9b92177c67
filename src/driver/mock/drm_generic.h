// The generic DRM ioctls the mock's DRM nodes answer (the rknpu render node
// and the rocket accel node): VERSION, GEM_CLOSE, PRIME_HANDLE_TO_FD and
// PRIME_FD_TO_HANDLE. Errors follow the DRM core: an unknown handle is
// -EINVAL for GEM_CLOSE and -ENOENT for export; a bad fd is -EBADF and an fd
// that is not a dma-buf of this device is -EINVAL for import.
#pragma once

#include <drm.h>
#include <fcntl.h>

#include <functional>
#include <memory>

#include "driver/mock/gem_handles.h"

namespace rknn::driver::mock {

struct DrmIdentity {
    int major, minor, patch;
    const char* name;
    const char* date;
    const char* desc;
};

int drm_version_ioctl(const DrmIdentity& identity, drm_version* args);
int drm_gem_close_ioctl(GemHandles& handles, drm_gem_close* args);
int drm_prime_export_ioctl(GemHandles& handles, drm_prime_handle* args);

// `adopt` makes this node's object for memory another node exported (a
// foreign dma-buf); it returns nullptr and sets *err when that fails.
using AdoptForeign = std::function<std::shared_ptr<MockObject>(const std::shared_ptr<MockObject>& exporter, int* err)>;
int drm_prime_import_ioctl(const ObjectTable& table, NodeKind kind, GemHandles& handles, const AdoptForeign& adopt,
                           drm_prime_handle* args);

// The four ioctls above for one node: decodes the command (copying the
// arguments as drm_ioctl does) and answers it; -EINVAL for any other command.
struct DrmNode {
    const DrmIdentity& identity;
    GemHandles& handles;
    const ObjectTable& objects;
    NodeKind kind;
    AdoptForeign adopt;
};
int dispatch_generic_drm(const DrmNode& node, unsigned long cmd, void* arg);

// The object whose memory the dma-buf `fd` is: -EBADF for a bad fd, -EINVAL
// when it is not one of this mock's buffers.
int find_dmabuf(const ObjectTable& table, int fd, NodeKind prefer, std::shared_ptr<MockObject>* out);

}  // namespace rknn::driver::mock
