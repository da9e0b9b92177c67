// The OpenCL side of GPU custom ops (runtime-spec 7.5): the device a
// context's GPU ops share, each type's program built from the op's
// cl_kernel_source, and per node the kernel and, where the device cannot
// import dma-bufs, a cl_mem mirroring the node's tensors.
//
// The vendor's GPU ops wrap each tensor's dma-buf themselves with
// clImportMemoryARM (Mali's cl_arm_import_memory). Where the device lacks
// that extension (PoCL, NVIDIA, ...), the runtime makes one cl_mem as large
// as the dma-buf the tensors' fd names and puts it in every tensor's
// mem.priv_data; an op indexes it with mem.offset exactly as it would the
// imported buffer. The runtime writes the inputs into it before `prepare`
// and reads the outputs back after `compute`.
//
// The header names no OpenCL type, so that the runtime builds where the
// OpenCL headers are missing (GPU ops then fail to register, with a reason).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "rknn_custom_op.h"

namespace rknn::runtime {

class GpuDevice;   // the OpenCL device, context and queue
class GpuProgram;  // one op type's built program

// Loads OpenCL and opens a device (a GPU, else any device, logged).
StatusOr<std::shared_ptr<GpuDevice>> open_gpu_device();
// "platform / device (GPU)", for log lines.
std::string gpu_device_description(const GpuDevice& device);

// Builds op's program from cl_kernel_source (its text when cl_source_size
// > 0, else the path of a file) with cl_build_options, and checks that it
// has cl_kernel_name. The error carries the build log.
StatusOr<std::shared_ptr<GpuProgram>> build_gpu_program(const std::shared_ptr<GpuDevice>& device, const rknn_custom_op& op);

class GpuNode {
public:
    static StatusOr<std::unique_ptr<GpuNode>> create(std::shared_ptr<GpuProgram> program);
    ~GpuNode();
    GpuNode(const GpuNode&) = delete;
    GpuNode& operator=(const GpuNode&) = delete;

    // The runtime's cl_context, queue and this node's kernel.
    void fill(rknn_gpu_op_context* gpu_ctx) const;
    // Points the tensors' mem.priv_data at the mirror of the `bytes` the
    // staging holds (made or grown here), unless the op can import the
    // staging itself: the device has cl_arm_import_memory and `dma_buf`
    // (the tensors' fd is one). Remembers where each tensor is, as the
    // runtime described them, for the copies.
    Status bind(uint64_t bytes, bool dma_buf, std::vector<rknn_custom_op_tensor>& inputs,
                std::vector<rknn_custom_op_tensor>& outputs);
    // Whether the op imports the staging's dma-buf (no mirror).
    bool imports() const;
    // Copies the inputs from the staging at `base` to the mirror (upload),
    // or the outputs back (download); nothing without a mirror.
    Status upload(const uint8_t* base) const;
    Status download(uint8_t* base) const;

    struct State;

private:
    explicit GpuNode(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace rknn::runtime
