// Fault survival through the public API: a run is broken by one injected
// mock-kernel fault at one of its submits, must fail with the fault's error
// code, and the next run on the same context must give the clean run's bytes.
// Shared by fault_survival_test (small models, custom ops, matmul) and the
// fault_matrix program (mobilenet_v2 int8, 1000 cycles).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "driver/mock/mock_kernel.h"
#include "rknn_api.h"

namespace rknn::testing {

// One run through the public API: its first failing return code (RKNN_SUCC
// when all passed) and, on success, the output bytes.
using RunOnce = std::function<int(std::vector<uint8_t>* out)>;

struct InjectedFault {
    const char* name;
    int expected;  // the rknn_run error the fault must give
    void (*arm)(driver::mock::FaultInjector& faults);
};
// Input 0 as uint8 NHWC `pixels` through the general API; raw output 0.
RunOnce pixels_run(rknn_context ctx, std::vector<uint8_t> pixels);

// Submit timeout, IOMMU fault (every mapping of the job), device reset.
const std::vector<InjectedFault>& submit_faults();

// What the process holds, for leak checks.
struct Resources {
    size_t fds = 0;           // entries of /proc/self/fd
    size_t rss_kib = 0;       // resident set (/proc/self/statm)
    size_t mock_objects = 0;  // buffers the mock kernel still holds
    size_t mock_files = 0;    // fds open on the mock kernel
};
Resources resources_now(const driver::mock::MockKernel* kernel);

// The mock kernel behind contexts of the default mock (RKNN_MOCK_SOC or
// rk3588, the rknpu ABI) while one is open; nullptr otherwise.
std::shared_ptr<driver::mock::MockKernel> live_default_mock();

// How many submits one clean run makes (and checks it gives `baseline`).
int submits_per_run(driver::mock::MockKernel& kernel, const RunOnce& run, const std::vector<uint8_t>& baseline,
                    std::string* problem);

struct MatrixReport {
    int cells = 0;                      // fault x submit position
    std::vector<std::string> problems;  // empty when every cell held
};
// Every fault of submit_faults() at every submit position of a run.
MatrixReport run_fault_matrix(driver::mock::MockKernel& kernel, const RunOnce& run,
                              const std::vector<uint8_t>& baseline, int submits);

// One fault cycle (fault `cycle % faults` at submit `(cycle / faults) %
// submits`) and its recovery run; an empty string when both behaved.
std::string fault_cycle(driver::mock::MockKernel& kernel, const RunOnce& run, const std::vector<uint8_t>& baseline,
                        int submits, int cycle);

}  // namespace rknn::testing
