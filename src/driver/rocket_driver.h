// The mainline "rocket" back-end (Linux 6.18 accel driver, hw-facts 2).
//
// What rocket offers and how the KernelDriver calls map onto it:
//   create_buffer   CREATE_BO (size only: buffers are always cached shmem,
//                   the request's flags are not used; size < 4 GiB)
//   map_buffer      mmap on the accel fd at CREATE_BO's offset
//   sync_buffer     FINI_BO (to device) / PREP_BO (from device, waits for the
//                   NPU first); always the whole buffer, offset/size unused
//   destroy_buffer  GEM_CLOSE
//   export_dmabuf   PRIME_HANDLE_TO_FD
//   submit          SUBMIT: one job per participating core's task range (or
//                   one job of all tasks); tasks carry 32-bit regcmd
//                   addresses and regcmd_count INCLUDING the 4-word tail; the
//                   in/out handles go to every job. rocket reports no task
//                   counter: on success it is the number of tasks submitted.
// Not offered by rocket: actions, explicit fences, IOMMU domains, importing a
// dma-buf with a known NPU address (there is no ioctl to learn it) -> errors.
#pragma once

#include <memory>
#include <string>

#include "driver/ioctl_transport.h"
#include "driver/kernel_driver.h"

namespace rknn::driver {

class RocketDriver final : public KernelDriver {
public:
    static StatusOr<std::unique_ptr<RocketDriver>> open(std::shared_ptr<IoctlTransport> transport,
                                                        const std::string& node, const std::string& soc = "");
    ~RocketDriver() override;

    const char* backend_name() const override { return "rocket"; }
    bool completes_ppu_tasks() const override { return false; }
    bool has_iommu_domains() const override { return false; }
    bool pins_cores() const override { return false; }
    bool syncs_byte_ranges() const override { return false; }
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

    int fd() const { return fd_; }
    // How long sync_buffer(kFromDevice) lets PREP_BO wait for the NPU.
    static constexpr int64_t kPrepTimeoutNs = 5'000'000'000;

private:
    RocketDriver(std::shared_ptr<IoctlTransport> transport, int fd, std::string node, std::string soc);

    std::shared_ptr<IoctlTransport> transport_;
    int fd_;
    std::string node_;
    std::string soc_;
};

}  // namespace rknn::driver
