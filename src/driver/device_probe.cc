#include "driver/device_probe.h"

#include <fcntl.h>
#include <unistd.h>
#include <xf86drm.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rknn::driver {
namespace {

// Asks the kernel for the driver behind a DRM or accel node (DRM_IOCTL_VERSION).
bool query_drm_driver(const std::string& path, DeviceNode* out) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        out->path = path;
        out->error = std::strerror(errno);
        return false;
    }
    drmVersionPtr version = drmGetVersion(fd);
    ::close(fd);
    if (version == nullptr) return false;
    out->path = path;
    out->driver.assign(version->name ? version->name : "", version->name_len > 0 ? version->name_len : 0);
    out->version = std::to_string(version->version_major) + "." + std::to_string(version->version_minor) + "." +
                   std::to_string(version->version_patchlevel);
    drmFreeVersion(version);
    return true;
}

std::vector<std::string> list_nodes(const char* directory, const char* prefix) {
    std::vector<std::string> paths;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) == 0) paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
    return paths;
}

const DeviceNode* find_driver(const std::vector<DeviceNode>& nodes, const std::string& driver) {
    for (const DeviceNode& node : nodes) {
        if (node.driver == driver) return &node;
    }
    return nullptr;
}

}  // namespace

std::vector<DeviceNode> probe_npu_nodes() {
    std::vector<DeviceNode> found;
    for (const std::string& path : list_nodes("/dev/dri", "renderD")) {
        DeviceNode node;
        if (query_drm_driver(path, &node) ? node.driver == "rknpu" : !node.error.empty()) found.push_back(node);
    }
    if (::access("/dev/rknpu", F_OK) == 0) found.push_back({"/dev/rknpu", "rknpu", "misc", ""});
    for (const std::string& path : list_nodes("/dev/accel", "accel")) {
        DeviceNode node;
        if (query_drm_driver(path, &node) ? node.driver == "rocket" : !node.error.empty()) found.push_back(node);
    }
    return found;
}

StatusOr<DeviceChoice> choose_device(const std::string& requested, const std::vector<DeviceNode>& nodes) {
    if (requested == "mock") return DeviceChoice{"mock", "", "RKNN_DEVICE=mock"};
    // Nodes we may not open may be the NPU: their names go into what we say.
    std::string closed;
    for (const DeviceNode& node : nodes) {
        if (node.driver.empty() && !node.error.empty())
            closed += (closed.empty() ? "" : ", ") + node.path + " (" + node.error + ")";
    }
    if (requested == "rknpu" || requested == "rocket") {
        const DeviceNode* node = find_driver(nodes, requested);
        if (node == nullptr) {
            return Status(StatusCode::kUnavailable,
                          "RKNN_DEVICE=" + requested + " but no " + requested + " device node was found" +
                              (closed.empty() ? "" : "; " + closed + " could not be opened"));
        }
        return DeviceChoice{requested, node->path, "RKNN_DEVICE=" + requested};
    }
    if (!requested.empty() && requested != "auto") {
        return Status(StatusCode::kInvalidArgument,
                      "RKNN_DEVICE=\"" + requested + "\" is not one of auto, rknpu, rocket, mock");
    }
    // Vendor driver first: it supports every SoC; rocket covers RK3588 only.
    for (const char* driver : {"rknpu", "rocket"}) {
        if (const DeviceNode* node = find_driver(nodes, driver)) {
            return DeviceChoice{driver, node->path, std::string("found ") + driver + " at " + node->path};
        }
    }
    if (closed.empty()) return DeviceChoice{"mock", "", "no RKNPU device node found; using the emulated NPU"};
    return DeviceChoice{"mock", "",
                        "no RKNPU device node found, but " + closed +
                            " could not be opened: if one is the NPU, give this user access to it (often the "
                            "render group); using the emulated NPU",
                        true};
}

}  // namespace rknn::driver
