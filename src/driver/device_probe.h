// Finding the NPU: which kernel driver is present and which back-end to use.
//
// Nodes looked at (hw-facts 1.1, 2.1):
//   /dev/dri/renderD*  a DRM render node whose driver name is "rknpu" (vendor BSP)
//   /dev/rknpu         the vendor driver's misc char device (DMA-heap builds)
//   /dev/accel/accel*  an accel node whose driver name is "rocket" (mainline)
// The choice follows RKNN_DEVICE=auto|rknpu|rocket|mock, read by the caller once
// at context creation: auto takes real hardware when found and the mock otherwise.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace rknn::driver {

struct DeviceNode {
    std::string path;     // e.g. /dev/dri/renderD129
    std::string driver;   // "rknpu" or "rocket"; empty when the node could not be opened
    std::string version;  // driver version as the kernel reports it, e.g. "0.9.8"
    std::string error;    // why the node could not be opened (then its driver is unknown)
};

// The NPU nodes present on this machine (empty on an ordinary host), and the
// render and accel nodes that could not be opened (an NPU among them, maybe).
std::vector<DeviceNode> probe_npu_nodes();

struct DeviceChoice {
    std::string backend;  // "rknpu", "rocket" or "mock"
    std::string node;     // device path, empty for the mock
    std::string reason;   // one line saying why, for the log
    bool warn = false;    // the reason is worth a warning (the mock taken while a node was closed to us)
};

// Picks a back-end for `requested` ("" or "auto", "rknpu", "rocket", "mock").
// Asking for hardware that is absent is an error (kUnavailable), not a silent mock.
StatusOr<DeviceChoice> choose_device(const std::string& requested, const std::vector<DeviceNode>& nodes);

}  // namespace rknn::driver
