// The vendor "rknpu" back-end (Rockchip BSP driver 0.9.x, hw-facts 1), used
// the way librknnrt uses it on a board. Two variants of the same driver:
//
//   kDrm   DRM render node (/dev/dri/renderD*): DRM_IOCTL_RKNPU_* numbers,
//          buffers named by GEM handles, mapped with mmap on the device fd at
//          the MEM_MAP fake offset, shared with PRIME and released with
//          MEM_DESTROY;
//   kMisc  /dev/rknpu (DMA-heap builds): IOCTL_RKNPU_* numbers, every buffer
//          is a dma-buf fd (the "handle"), mapped by mmap of that fd; MEM_MAP
//          is not available there.
//
// Submit writes one rknpu_task record per task into a task buffer of the
// back-end's own (KERNEL_MAPPING: the driver reads it from the kernel) and
// issues SUBMIT with RKNPU_JOB_PC and the per-core ranges of hw-facts 1.7.
// Submits are serialised because that buffer is reused. The vendor driver's
// NONBLOCK mode is not offered: nothing would keep the task buffer alive.
#pragma once

#include <memory>
#include <mutex>
#include <vector>
#include <string>

#include "driver/ioctl_transport.h"
#include "driver/kernel_driver.h"

namespace rknn::driver {

class RknpuDriver final : public KernelDriver {
public:
    enum class Variant { kDrm, kMisc };

    // Opens `node` through `transport`. `soc` (e.g. "rk3588") is reported by
    // identify(); the driver cannot tell it.
    static StatusOr<std::unique_ptr<RknpuDriver>> open(std::shared_ptr<IoctlTransport> transport,
                                                       const std::string& node, Variant variant,
                                                       const std::string& soc = "");
    ~RknpuDriver() override;

    const char* backend_name() const override { return variant_ == Variant::kDrm ? "rknpu" : "rknpu-misc"; }
    StatusOr<DriverIdentity> identify() override;
    StatusOr<BufferObject> create_buffer(const BufferRequest& request) override;
    Status map_buffer(BufferObject* buffer) override;
    Status unmap_buffer(BufferObject* buffer) override;
    Status destroy_buffer(BufferObject* buffer) override;
    Status sync_buffer(const BufferObject& buffer, SyncDirection direction, uint64_t offset, uint64_t size) override;
    StatusOr<BufferObject> import_dmabuf(int fd) override;
    StatusOr<int> export_dmabuf(const BufferObject& buffer) override;
    StatusOr<SubmitResult> submit(const SubmitRequest& request) override;
    StatusOr<uint32_t> action(Action action, uint32_t value = 0) override;

    Variant variant() const { return variant_; }
    int fd() const { return fd_; }

private:
    RknpuDriver(std::shared_ptr<IoctlTransport> transport, int fd, Variant variant, std::string node, std::string soc);

    // The ioctl number for `nr` in this variant.
    unsigned long command(unsigned nr) const;
    Status call(unsigned nr, void* arg, const char* what);
    StatusOr<BufferObject> mem_create(uint32_t handle, const BufferRequest& request);
    // A task buffer for `tasks` records, taken from the free ones (or created),
    // and its return: submits from several threads each fill their own.
    StatusOr<BufferObject> take_task_buffer(size_t tasks);
    void return_task_buffer(const BufferObject& buffer);
    Status fill_submit(const SubmitRequest& request, const BufferObject& task_buffer, struct rknpu_submit* out) const;

    std::shared_ptr<IoctlTransport> transport_;
    int fd_;
    Variant variant_;
    std::string node_;
    std::string soc_;
    std::mutex task_buffers_mu_;
    std::vector<BufferObject> free_task_buffers_;
};

}  // namespace rknn::driver
