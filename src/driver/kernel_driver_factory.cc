#include "driver/kernel_driver_factory.h"

#include <atomic>
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
struct MockKernels {
    std::mutex mutex;
    std::map<std::pair<std::string, std::string>, std::weak_ptr<mock::MockKernel>> by_soc_and_abi;
};

MockKernels& mock_kernels() {
    static MockKernels* kernels = new MockKernels();  // never destroyed: contexts may outlive statics
    return *kernels;
}

std::shared_ptr<mock::MockKernel> shared_mock_kernel(const hw::SocProfile& soc, const std::string& abi) {
    MockKernels& kernels = mock_kernels();
    std::lock_guard<std::mutex> lock(kernels.mutex);
    std::weak_ptr<mock::MockKernel>& slot = kernels.by_soc_and_abi[{soc.name, abi}];
    std::shared_ptr<mock::MockKernel> kernel = slot.lock();
    if (!kernel) {
        kernel = std::make_shared<mock::MockKernel>(soc);
        slot = kernel;
    }
    return kernel;
}

// A warning said once per process: contexts are opened by the thousand.
void warn_once(std::atomic<bool>* said, const std::string& text) {
    if (!said->exchange(true)) RKNN_LOGW("%s", text.c_str());
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

std::shared_ptr<mock::MockKernel> live_mock_kernel(const std::string& soc, const std::string& abi) {
    MockKernels& kernels = mock_kernels();
    std::lock_guard<std::mutex> lock(kernels.mutex);
    auto it = kernels.by_soc_and_abi.find({soc, abi});
    return it == kernels.by_soc_and_abi.end() ? nullptr : it->second.lock();
}

StatusOr<OpenedDriver> open_kernel_driver(const std::string& device, const hw::SocProfile* soc) {
    const std::string requested = device.empty() ? env_or("RKNN_DEVICE", "auto") : device;
    const std::vector<DeviceNode> nodes = requested == "mock" ? std::vector<DeviceNode>{} : probe_npu_nodes();
    RKNN_ASSIGN_OR_RETURN(DeviceChoice choice, choose_device(requested, nodes));
    OpenedDriver opened;
    if (choice.backend == "mock") {
        if (choice.warn && soc == nullptr && std::getenv("RKNN_MOCK_SOC") == nullptr) {
            // A board whose NPU node we may not open: emulate that board's NPU,
            // so that its models are not refused for the wrong reason.
            StatusOr<const hw::SocProfile*> board = identify_board_soc();
            if (board.is_ok()) soc = board.value();
        }
        RKNN_ASSIGN_OR_RETURN(opened, open_mock(soc));
    } else {
        // The board's SoC sets the register dialect, cores and target checks.
        if (soc == nullptr) {
            StatusOr<const hw::SocProfile*> found = identify_node_soc(choice.node);
            if (found.is_ok()) {
                soc = found.value();
            } else if (choice.backend == "rocket") {
                soc = hw::find_soc("rk3588");  // rocket drives RK3588 NPUs only
                static std::atomic<bool> said{false};
                warn_once(&said, found.status().message() + "; rocket drives RK3588 NPUs only: taking rk3588");
            } else {
                return found.status();
            }
        }
        if (choice.backend == "rocket" && !hw::runs_models_for("rk3588", soc->name))
            return Status(StatusCode::kUnavailable, std::string("the rocket driver drives RK3588 NPUs only; this is ") +
                                                        soc->name + " (use the vendor's rknpu driver)");
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
    static std::atomic<bool> said_closed{false};
    if (choice.warn) warn_once(&said_closed, choice.reason);
    RKNN_LOGI("NPU kernel driver: %s%s, %s (%s)", opened.driver->backend_name(), opened.mock ? " on the mock kernel" : "",
              opened.soc->name, choice.reason.c_str());
    return opened;
}

}  // namespace rknn::driver
