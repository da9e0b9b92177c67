// MockKernel: an in-process stand-in for the NPU kernel drivers, driving the
// emulated NPU (emulator::NpuDevice). It is an IoctlTransport, so the real
// rknpu and rocket back-ends talk to it exactly as they talk to a board:
// their struct packing, call order and mmap offsets are what gets tested.
//
// Nodes it offers (open() by path):
//   kRknpuRenderNode  the vendor driver's DRM render node ("rknpu" 0.9.8)
//   kRknpuMiscNode    the vendor driver's /dev/rknpu misc device
//   kRocketNode       the mainline rocket accel node
// Device fds are fake numbers (from kFirstFd up) that only this transport
// knows; the dma-buf and fence fds it returns are real file descriptors
// (memfds, pipes) that work with ordinary close(), mmap() and poll().
//
// Model (details in the files of driver/mock/):
//   mock_memory   memfd-backed buffers with a separate NPU view for cached ones
//   address_space 4 GiB IOVA spaces: 16 shared rknpu domains, one per rocket fd
//   sram_pool     the SoC's SRAM in 4 KiB chunks (TRY_ALLOC_SRAM)
//   mock_rknpu    the vendor ioctls and their validation
//   mock_rocket   the rocket ioctls and their validation
//   job_runner    the drivers' MMIO sequences and interrupt handling
//   fault_injector  faults a test can ask for
//
// One ioctl runs at a time (a single lock), except that a SUBMIT lets go of
// it while its job waits for its cores and runs: jobs on different cores run
// at the same time, in one address space at a time (DmaPort::map has no core
// argument to tell spaces apart; core_scheduler.h).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "driver/ioctl_transport.h"
#include "driver/mock/fault_injector.h"
#include "driver/mock/mock_device.h"
#include "driver/mock/mock_file.h"
#include "emulator/dma_port.h"
#include "emulator/npu_device.h"
#include "hw/soc_profile.h"

namespace rknn::driver::mock {

// True on a thread while a mock kernel serves one of its ioctls: what the
// kernel allocates there is the device side's, not the runtime's (tests that
// count the runtime's allocations leave it out).
bool serving_kernel_call();

class MockKernel final : public IoctlTransport {
public:
    static constexpr const char* kRknpuRenderNode = "/dev/dri/renderD129";
    static constexpr const char* kRknpuMiscNode = "/dev/rknpu";
    static constexpr const char* kRocketNode = "/dev/accel/accel0";
    static constexpr int kFirstFd = 0x10000000;

    explicit MockKernel(const hw::SocProfile& soc, MockOptions options = {});
    ~MockKernel() override;
    MockKernel(const MockKernel&) = delete;
    MockKernel& operator=(const MockKernel&) = delete;

    // IoctlTransport.
    const char* name() const override { return "mock"; }
    int open(const std::string& path) override;
    int close(int fd) override;
    int dup(int fd) override;
    int ioctl(int fd, unsigned long request, void* arg) override;
    int mmap(int fd, uint64_t offset, size_t length, void** out_addr) override;
    int munmap(void* addr, size_t length) override;

    const hw::SocProfile& soc() const { return device_.soc; }
    const MockOptions& options() const { return device_.options; }
    FaultInjector& faults() { return device_.faults; }
    emulator::NpuDevice& npu() { return *npu_; }

    // What a test checks for leaks.
    size_t live_objects() const;
    size_t open_files() const;
    // Mappings in an rknpu IOMMU domain (0..15).
    size_t domain_mappings(int domain) const;
    uint64_t free_sram() const;

    // Soft reset of every core now (as RKNPU_ACT_RESET).
    void reset_device();

private:
    // The NPU's view of memory: the address space of the job that runs.
    class DeviceDma final : public emulator::DmaPort {
    public:
        explicit DeviceDma(MockDevice& device) : device_(device) {}
        uint8_t* map(uint64_t addr, uint64_t len, bool for_write) override;
        uint64_t content_version(uint64_t addr) override;

    private:
        MockDevice& device_;
    };

    // The open file, kept alive by the caller across a SUBMIT that lets go
    // of the lock (another thread may close the fd meanwhile).
    std::shared_ptr<MockFile> find(int fd) const;

    mutable std::mutex mu_;
    MockDevice device_;
    DeviceDma dma_;
    std::unique_ptr<emulator::NpuDevice> npu_;
    std::unique_ptr<JobRunner> runner_;
    std::map<int, std::shared_ptr<MockFile>> files_;
    int next_fd_ = kFirstFd;
};

}  // namespace rknn::driver::mock
