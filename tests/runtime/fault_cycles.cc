#include "runtime/fault_cycles.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "driver/kernel_driver_factory.h"
#include "rknn_api.h"

namespace rknn::testing {

using driver::mock::FaultInjector;
using driver::mock::MockKernel;

const std::vector<InjectedFault>& submit_faults() {
    static const std::vector<InjectedFault> faults = {
        {"submit timeout", RKNN_ERR_TIMEOUT, [](FaultInjector& f) { f.hang_next_submit(); }},
        {"IOMMU fault", RKNN_ERR_FAIL, [](FaultInjector& f) { f.iommu_fault_everywhere_during_next_submit(); }},
        {"device reset", RKNN_ERR_FAIL, [](FaultInjector& f) { f.reset_during_next_submit(); }},
    };
    return faults;
}

RunOnce pixels_run(rknn_context ctx, std::vector<uint8_t> pixels) {
    return [ctx, pixels](std::vector<uint8_t>* out) {
        rknn_input in{};
        in.index = 0;
        in.buf = const_cast<uint8_t*>(pixels.data());
        in.size = static_cast<uint32_t>(pixels.size());
        in.type = RKNN_TENSOR_UINT8;
        in.fmt = RKNN_TENSOR_NHWC;
        int rc = rknn_inputs_set(ctx, 1, &in);
        if (rc == RKNN_SUCC) rc = rknn_run(ctx, nullptr);
        if (rc != RKNN_SUCC) return rc;
        rknn_output o{};
        rc = rknn_outputs_get(ctx, 1, &o, nullptr);
        if (rc != RKNN_SUCC) return rc;
        out->assign(static_cast<const uint8_t*>(o.buf), static_cast<const uint8_t*>(o.buf) + o.size);
        return rknn_outputs_release(ctx, 1, &o);
    };
}

Resources resources_now(const MockKernel* kernel) {
    Resources r;
    if (DIR* dir = ::opendir("/proc/self/fd"); dir != nullptr) {
        while (const dirent* entry = ::readdir(dir))
            if (entry->d_name[0] != '.') ++r.fds;
        ::closedir(dir);
        --r.fds;  // the directory's own fd
    }
    if (FILE* f = std::fopen("/proc/self/statm", "r"); f != nullptr) {
        unsigned long size = 0, resident = 0;
        if (std::fscanf(f, "%lu %lu", &size, &resident) == 2)
            r.rss_kib = resident * static_cast<unsigned long>(::sysconf(_SC_PAGESIZE)) / 1024;
        std::fclose(f);
    }
    if (kernel != nullptr) {
        r.mock_objects = kernel->live_objects();
        r.mock_files = kernel->open_files();
    }
    return r;
}

std::shared_ptr<MockKernel> live_default_mock() {
    const char* soc = std::getenv("RKNN_MOCK_SOC");
    const char* abi = std::getenv("RKNN_MOCK_DRIVER");
    return driver::live_mock_kernel(soc != nullptr && soc[0] != '\0' ? soc : "rk3588",
                                    abi != nullptr && abi[0] != '\0' ? abi : "rknpu");
}

int submits_per_run(MockKernel& kernel, const RunOnce& run, const std::vector<uint8_t>& baseline,
                    std::string* problem) {
    const uint64_t before = kernel.faults().submits_seen();
    std::vector<uint8_t> out;
    const int rc = run(&out);
    if (rc != RKNN_SUCC || out != baseline) {
        *problem = "a clean run failed (" + std::to_string(rc) + ") or gave other bytes";
        return 0;
    }
    return static_cast<int>(kernel.faults().submits_seen() - before);
}

std::string fault_cycle(MockKernel& kernel, const RunOnce& run, const std::vector<uint8_t>& baseline, int submits,
                        int cycle) {
    const std::vector<InjectedFault>& faults = submit_faults();
    const InjectedFault& fault = faults[static_cast<size_t>(cycle) % faults.size()];
    const int position = submits > 0 ? (cycle / static_cast<int>(faults.size())) % submits : 0;
    const std::string where = std::string(fault.name) + " at submit " + std::to_string(position);
    FaultInjector& injector = kernel.faults();
    injector.clear();
    fault.arm(injector);
    injector.delay_job_faults(position);
    std::vector<uint8_t> out;
    const int rc = run(&out);
    const bool never_taken = injector.job_faults_armed();
    injector.clear();
    if (never_taken) return where + ": the run made fewer submits than that";
    if (rc != fault.expected)
        return where + ": the run returned " + std::to_string(rc) + ", not " + std::to_string(fault.expected);
    out.clear();
    const int again = run(&out);
    if (again != RKNN_SUCC) return where + ": the next run returned " + std::to_string(again);
    if (out != baseline) return where + ": the next run gave other bytes";
    return "";
}

MatrixReport run_fault_matrix(MockKernel& kernel, const RunOnce& run, const std::vector<uint8_t>& baseline,
                              int submits) {
    MatrixReport report;
    const int faults = static_cast<int>(submit_faults().size());
    for (int f = 0; f < faults; ++f)
        for (int position = 0; position < submits; ++position) {
            ++report.cells;
            const std::string problem = fault_cycle(kernel, run, baseline, submits, position * faults + f);
            if (!problem.empty()) report.problems.push_back(problem);
        }
    return report;
}

}  // namespace rknn::testing
