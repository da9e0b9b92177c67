// Choosing and opening the kernel driver back-end (read once, at context
// creation):
//   RKNN_DEVICE=auto|rknpu|rocket|mock   which one (device_probe.h decides);
//   RKNN_MOCK_SOC=rk3588|rk3576|...      the SoC the mock emulates (default rk3588);
//   RKNN_MOCK_DRIVER=rknpu|rknpu-misc|rocket
//                                        which kernel ABI the mock speaks
//                                        (default rknpu, the DRM render node).
// The mock is always the real back-end code over driver::mock::MockKernel.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "driver/device_probe.h"
#include "driver/kernel_driver.h"
#include "hw/soc_profile.h"

namespace rknn::driver {

namespace mock {
class MockKernel;
}

struct OpenedDriver {
    std::unique_ptr<KernelDriver> driver;
    std::shared_ptr<mock::MockKernel> mock;  // the mock kernel, when that was chosen
    const hw::SocProfile* soc = nullptr;     // the emulated SoC, or the one given
    DeviceChoice choice;
};

// `device` empty: RKNN_DEVICE. `soc`: for the mock, the SoC to emulate
// (nullptr: RKNN_MOCK_SOC); on hardware only reported by identify().
// Logs the choice once at RKNN_LOG_LEVEL >= 2.
StatusOr<OpenedDriver> open_kernel_driver(const std::string& device = "", const hw::SocProfile* soc = nullptr);

// The process's mock kernel for `soc` and `abi` (as RKNN_MOCK_DRIVER names
// it) while some context holds it open, else nullptr. For tests and tools
// that inject faults under the public API; no client path calls it.
std::shared_ptr<mock::MockKernel> live_mock_kernel(const std::string& soc, const std::string& abi = "rknpu");

}  // namespace rknn::driver
