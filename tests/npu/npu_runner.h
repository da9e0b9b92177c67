// Runs generated NPU programs the way the runtime will: buffers created and
// mapped through the vendor back-end (RknpuDriver) on the mock kernel, the
// program linked against their device addresses, submitted with its per-core
// task ranges, and the results read back.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "driver/kernel_driver.h"
#include "driver/mock/mock_kernel.h"
#include "cpu/host_tensor.h"
#include "graph/graph.h"
#include "npu/program.h"

namespace rknn::npu::testing {

class NpuRunner {
public:
    explicit NpuRunner(const char* soc = "rk3588");
    ~NpuRunner();
    NpuRunner(const NpuRunner&) = delete;
    NpuRunner& operator=(const NpuRunner&) = delete;

    bool ready() const { return driver_ != nullptr; }
    const hw::SocProfile& soc() const { return kernel_->soc(); }
    // A device buffer holding `bytes`; returns its buffer id (BufferRef::buffer).
    int add(const void* bytes, size_t size);
    int zeros(size_t size);
    // Links and submits `program`; tasks_done receives the kernel's count.
    Status run(const Program& program, uint32_t* tasks_done = nullptr);
    const uint8_t* data(int buffer) const { return buffers_[static_cast<size_t>(buffer)].host; }
    // How many programs a core ran (the mock NPU's counters).
    uint64_t programs_on_core(int core) const;
    // Why the last program on `core` stopped early ("" when it completed).
    std::string last_fault(int core) const;

private:
    std::shared_ptr<driver::mock::MockKernel> kernel_;
    std::unique_ptr<driver::KernelDriver> driver_;
    std::vector<driver::BufferObject> buffers_;
};

// One graph op through the whole NPU path: prepare_op, lowering against
// buffers of a fresh runner, the run, and the output unpacked to NCHW.
struct OpRun {
    std::vector<uint8_t> output;  // NCHW, in the output tensor's dtype (int8 or fp16)
    size_t tasks = 0, regcmd_bytes = 0;
    double codegen_ms = 0;  // prepare_op + lowering
};
// `value_of(tensor id)` gives each feature input as an int8 or fp16 NCHW tensor.
// `packed_input`: the first feature as a channel-packed NHWC image (the op
// must reads_packed_input()), as the runtime keeps 1/3/4-channel inputs.
// Cubes and constants in the forms of `soc`, run on a mock of it.
StatusOr<OpRun> run_graph_op(const graph::Graph& g, const graph::Op& op,
                             const std::function<const cpu::HostTensor&(int32_t)>& value_of, uint32_t core_mask = 0,
                             bool packed_input = false, const char* soc = "rk3588");

}  // namespace rknn::npu::testing
