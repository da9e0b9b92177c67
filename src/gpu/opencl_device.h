// One OpenCL device, with the context and in-order command queue the
// runtime hands to GPU custom ops (rknn_gpu_op_context), and the programs,
// kernels and buffers made on it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "base/status.h"
#include "gpu/opencl_api.h"

namespace rknn::gpu {

// A counted OpenCL object; the last reference releases it.
template <typename Handle>
using ClRef = std::shared_ptr<std::remove_pointer_t<Handle>>;

class OpenClDevice {
public:
    // Loads OpenCL and picks the first GPU device of any platform; without
    // one, the first device of any kind (PoCL's CPU device on a host), with a
    // log line saying so. kUnavailable when there is no library, platform or
    // device.
    static StatusOr<std::unique_ptr<OpenClDevice>> open();
    ~OpenClDevice();
    OpenClDevice(const OpenClDevice&) = delete;
    OpenClDevice& operator=(const OpenClDevice&) = delete;

    cl_context context() const { return context_; }
    cl_command_queue queue() const { return queue_; }
    // "platform / device (type)", for log lines.
    const std::string& description() const { return description_; }
    // Whether the device has cl_arm_import_memory, so that a GPU op can wrap
    // a tensor's dma-buf fd itself (clImportMemoryARM), as on Mali.
    bool imports_dma_buf() const { return imports_dma_buf_; }

    // Builds `source` with `options`; a failure's message carries the build log.
    StatusOr<ClRef<cl_program>> build(const std::string& source, const std::string& options) const;
    StatusOr<ClRef<cl_kernel>> create_kernel(const ClRef<cl_program>& program, const std::string& name) const;
    StatusOr<ClRef<cl_mem>> create_buffer(uint64_t bytes) const;
    // Blocking copies between host memory and `buffer` at `offset`.
    Status write(cl_mem buffer, uint64_t offset, uint64_t bytes, const void* from) const;
    Status read(cl_mem buffer, uint64_t offset, uint64_t bytes, void* to) const;

private:
    OpenClDevice() = default;

    const ClApi* api_ = nullptr;
    cl_device_id device_ = nullptr;
    cl_context context_ = nullptr;
    cl_command_queue queue_ = nullptr;
    std::string description_;
    bool imports_dma_buf_ = false;
};

}  // namespace rknn::gpu
