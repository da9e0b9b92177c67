// Which SoC a board is, for a real NPU node: the device tree's compatible list
// (the file /proc/device-tree/compatible, NUL-separated "vendor,model" strings,
// which RKNN-Toolkit-Lite2 reads too; runtime-spec 10.1).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "hw/soc_profile.h"

namespace rknn::driver {

// The SoC a compatible list names ("rockchip,rk3588" or "rockchip,rk3588s" ->
// rk3588, ...), or nullptr when it names none this runtime knows.
const hw::SocProfile* soc_from_compatible(std::string_view compatible);

// The board's SoC from the file at `path`; kUnavailable, with what the file
// says, when it is missing or names no known SoC.
StatusOr<const hw::SocProfile*> identify_board_soc(const std::string& path = "/proc/device-tree/compatible");

// The SoC whose NPU a kernel's uevent text names (its OF_COMPATIBLE_<n>= lines,
// e.g. "rockchip,rk3588-rknpu", matched with SocProfile::compatible), or
// nullptr. Containers often hide /proc/device-tree but not /sys/class.
const hw::SocProfile* soc_from_uevent(std::string_view uevent);

// The uevent file of a device node (/dev/dri/renderD129 ->
// /sys/class/drm/renderD129/device/uevent; accel and misc nodes likewise).
std::string uevent_path_of(const std::string& node);

// The SoC under a real NPU node: the device tree, else the node's uevent;
// identify_board_soc's error when neither names one.
StatusOr<const hw::SocProfile*> identify_node_soc(const std::string& node);

}  // namespace rknn::driver
