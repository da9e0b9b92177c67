// rknn_info: prints the runtime version and the NPU back-end this machine would use.
//
//   rknn_info            version, device nodes found, the back-end RKNN_DEVICE selects
//   rknn_info --version  the "librknnrt version: ..." line only
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/version.h"
#include "driver/device_probe.h"
#include "driver/soc_identify.h"

namespace {

int print_devices() {
    const std::vector<rknn::driver::DeviceNode> nodes = rknn::driver::probe_npu_nodes();
    bool any_npu = false;
    for (const rknn::driver::DeviceNode& node : nodes) any_npu = any_npu || node.error.empty();
    if (!any_npu) std::printf("NPU device nodes: none\n");
    const auto soc = rknn::driver::identify_board_soc();
    if (soc.is_ok()) {
        std::printf("SoC: %s (/proc/device-tree/compatible)\n", soc.value()->name);
    } else {
        std::printf("SoC: unknown (%s)\n", soc.status().message().c_str());
    }
    for (const rknn::driver::DeviceNode& node : nodes) {
        if (!node.error.empty()) {
            std::printf("device node %s: cannot be opened (%s)\n", node.path.c_str(), node.error.c_str());
            continue;
        }
        std::printf("NPU device node: %s (driver %s, version %s)\n", node.path.c_str(), node.driver.c_str(),
                    node.version.c_str());
    }
    const char* requested = std::getenv("RKNN_DEVICE");
    auto choice = rknn::driver::choose_device(requested ? requested : "auto", nodes);
    if (!choice.is_ok()) {
        std::printf("Device: none (%s)\n", choice.status().message().c_str());
        return 1;
    }
    std::printf("Device: %s%s%s (%s)\n", choice->backend.c_str(), choice->node.empty() ? "" : " at ",
                choice->node.c_str(), choice->reason.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
        std::printf("%s\n", rknn::version::marker());
        return 0;
    }
    if (argc > 1) {
        std::fprintf(stderr, "usage: %s [--version]\n", argv[0]);
        return 2;
    }
    std::printf("OpenRKNN %s\n%s\n", rknn::version::openrknn_version(), rknn::version::marker());
    return print_devices();
}
