#include "driver/kernel_driver_factory.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "base/log.h"
#include "driver/ioctl_transport.h"
#include "driver/mock/mock_kernel.h"
#include "driver/rknpu_driver.h"
#include "driver/rocket_driver.h"
#include "driver/soc_identify.h"

namespace rknn::driver {

namespace {

std::string env_or(const char* name, const char* fallback) {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0' ? value : fallback;
}

// One mock kernel per emulated SoC and ABI in a process, as a board has one
// NPU driver: every context opens its own fd on it, so memory one context
// allocated can be imported by another (shared internal memory) and jobs of
// several contexts queue on one device. It goes with the last fd's driver.
std::shared_ptr<mock::MockKernel> shared_mock_kernel(const hw::SocProfile& soc, const std::string& abi) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, std::weak_ptr<mock::MockKernel>> kernels;
    std::lock_guard<std::mutex> lock(mutex);
    std::weak_ptr<mock::MockKernel>& slot = kernels[{soc.name, abi}];
    std::shared_ptr<mock::MockKernel> kernel = slot.lock();
    if (!kernel) {
        kernel = std::make_shared<mock::MockKernel>(soc);
        slot = kernel;
    }
    return kernel;
}

StatusOr<OpenedDriver> open_mock(const hw::SocProfile* soc) {
    OpenedDriver opened;
    if (soc == nullptr) {
        const std::string name = env_or("RKNN_MOCK_SOC", "rk3588");
        soc = hw::find_soc(name);
        if (soc == nullptr) return RKNN_INVALID_ARGUMENT("RKNN_MOCK_SOC=\"%s\" is not a known SoC", name.c_str());
    }
    const std::string abi = env_or("RKNN_MOCK_DRIVER", "rknpu");
    if (abi != "rknpu" && abi != "rknpu-misc" && abi != "rocket")
        return RKNN_INVALID_ARGUMENT("RKNN_MOCK_DRIVER=\"%s\" is not one of rknpu, rknpu-misc, rocket", abi.c_str());
    std::shared_ptr<mock::MockKernel> kernel = shared_mock_kernel(*soc, abi);
    if (abi == "rknpu" || abi == "rknpu-misc") {
        const bool misc = abi == "rknpu-misc";
        RKNN_ASSIGN_OR_RETURN(opened.driver,
                              RknpuDriver::open(kernel, misc ? mock::MockKernel::kRknpuMiscNode
                                                             : mock::MockKernel::kRknpuRenderNode,
                                                misc ? RknpuDriver::Variant::kMisc : RknpuDriver::Variant::kDrm,
                                                soc->name));
    } else {
        RKNN_ASSIGN_OR_RETURN(opened.driver, RocketDriver::open(kernel, mock::MockKernel::kRocketNode, soc->name));
    }
    opened.mock = std::move(kernel);
    opened.soc = soc;
    return opened;
}

}  // namespace

StatusOr<OpenedDriver> open_kernel_driver(const std::string& device, const hw::SocProfile* soc) {
    const std::string requested = device.empty() ? env_or("RKNN_DEVICE", "auto") : device;
    const std::vector<DeviceNode> nodes = requested == "mock" ? std::vector<DeviceNode>{} : probe_npu_nodes();
    RKNN_ASSIGN_OR_RETURN(DeviceChoice choice, choose_device(requested, nodes));
    OpenedDriver opened;
    if (choice.backend == "mock") {
        RKNN_ASSIGN_OR_RETURN(opened, open_mock(soc));
    } else {
        // The board's SoC sets the register dialect, cores and target checks.
        if (soc == nullptr) {
            StatusOr<const hw::SocProfile*> found = identify_board_soc();
            if (found.is_ok()) {
                soc = found.value();
            } else if (choice.backend == "rocket") {
                soc = hw::find_soc("rk3588");  // rocket drives RK3588 NPUs only
                RKNN_LOGW("%s; rocket drives RK3588 NPUs only: taking rk3588", found.status().message().c_str());
            } else {
                return found.status();
            }
        }
        const std::string soc_name = soc->name;
        auto transport = make_system_transport();
        if (choice.backend == "rknpu") {
            const auto variant = choice.node == "/dev/rknpu" ? RknpuDriver::Variant::kMisc : RknpuDriver::Variant::kDrm;
            RKNN_ASSIGN_OR_RETURN(opened.driver, RknpuDriver::open(transport, choice.node, variant, soc_name));
        } else {
            RKNN_ASSIGN_OR_RETURN(opened.driver, RocketDriver::open(transport, choice.node, soc_name));
        }
        opened.soc = soc;
    }
    opened.choice = choice;
    if (choice.warn) RKNN_LOGW("%s", choice.reason.c_str());
    RKNN_LOGI("NPU kernel driver: %s%s, %s (%s)", opened.driver->backend_name(), opened.mock ? " on the mock kernel" : "",
              opened.soc->name, choice.reason.c_str());
    return opened;
}

}  // namespace rknn::driver
