// KernelDriver: the NPU kernel driver as user space sees it, one level above
// the ioctls. Two back-ends implement it: the vendor "rknpu" driver (DRM
// render node or /dev/rknpu misc device, hw-facts 1) and mainline "rocket"
// (/dev/accel, hw-facts 2). The mock kernel (driver/mock/) speaks both ABIs,
// so the same back-end code runs against hardware and against the emulator.
//
// The interface stays a thin reflection of what the kernels offer. Where one
// kernel lacks a feature the back-end says so (kUnimplemented or
// kInvalidArgument with a message) instead of faking it:
//   - rocket has no actions, no IOMMU domains, no explicit fences, no SRAM,
//     and syncs whole buffers only;
//   - rknpu has no implicit synchronisation (in/out buffer lists are ignored).
//
// Ownership: BufferObject is a plain record of what the kernel returned; the
// caller destroys it with destroy_buffer(). File descriptors returned to the
// caller (exported dma-bufs, out-fences) belong to the caller.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "rknpu_ioctl.h"

namespace rknn::driver {

struct DriverIdentity {
    std::string name;         // "rknpu" or "rocket", as the kernel reports it
    std::string version;      // "0.9.8"
    std::string date;         // "20240828" (empty when the kernel gives none)
    std::string description;  // "RKNPU driver"
    uint32_t hw_version = 0;  // RKNPU_GET_HW_VERSION; 0 when the driver cannot tell
    std::string soc;          // "rk3588" when known, else empty
    std::string node;         // the device node the back-end opened
};

// Buffer flags. The values are the vendor ABI's RKNPU_MEM_* bits, the richer of
// the two kernels; rocket buffers are always cacheable shmem and take no flags.
namespace buffer_flag {
constexpr uint32_t kNonContiguous = RKNPU_MEM_NON_CONTIGUOUS;
constexpr uint32_t kCacheable = RKNPU_MEM_CACHEABLE;      // CPU access needs sync_buffer()
constexpr uint32_t kWriteCombine = RKNPU_MEM_WRITE_COMBINE;
constexpr uint32_t kKernelMapping = RKNPU_MEM_KERNEL_MAPPING;
constexpr uint32_t kZeroing = RKNPU_MEM_ZEROING;
constexpr uint32_t kDma32 = RKNPU_MEM_DMA32;
constexpr uint32_t kTrySram = RKNPU_MEM_TRY_ALLOC_SRAM;
constexpr uint32_t kTryNbuf = RKNPU_MEM_TRY_ALLOC_NBUF;
}  // namespace buffer_flag

struct BufferRequest {
    uint64_t size = 0;
    uint32_t flags = 0;          // buffer_flag bits
    uint64_t sram_limit = 0;     // kTrySram: most bytes to place in SRAM (0 = as much as fits)
    int32_t iommu_domain = 0;    // rknpu: address space id, 0..15
};

struct BufferObject {
    uint32_t handle = 0;         // GEM handle; on /dev/rknpu the dma-buf fd
    uint64_t size = 0;           // page-aligned, as the kernel reports it
    uint64_t dma_addr = 0;       // the address the NPU uses
    uint64_t obj_addr = 0;       // rknpu's kernel object cookie; 0 on rocket
    uint64_t mmap_offset = 0;    // fake offset on the device fd (DRM variants)
    uint32_t flags = 0;          // buffer_flag bits the buffer really has
    uint64_t sram_size = 0;      // bytes of it placed in SRAM
    int32_t iommu_domain = 0;
    bool imported = false;
    uint8_t* host = nullptr;     // CPU mapping after map_buffer()

    bool cacheable() const { return (flags & buffer_flag::kCacheable) != 0; }
};

enum class SyncDirection { kToDevice, kFromDevice };

// One NPU task: a regcmd stream in a buffer the NPU can read.
struct Task {
    uint64_t regcmd_addr = 0;    // NPU address of the stream (16-byte aligned)
    uint32_t regcmd_words = 0;   // 64-bit words INCLUDING the 4-word tail (>= 4)
    uint32_t enable_mask = 0;    // op-enable bitmap of the task (0x18 DPU, 0x60 PPU, 0x1d conv)
    uint32_t int_mask = 0;       // interrupt bits raised at the task's end (0x300 DPU, 0xc00 PPU)
    uint32_t op_idx = 0;         // informational
};

struct TaskRange {
    uint32_t start = 0;
    uint32_t count = 0;
};

namespace submit_flag {
constexpr uint32_t kPingPong = 1u << 0;   // rknpu: TASK_PP_EN
constexpr uint32_t kFenceIn = 1u << 1;    // rknpu: wait for fence_in first
constexpr uint32_t kFenceOut = 1u << 2;   // rknpu: return an out-fence fd
}  // namespace submit_flag

constexpr int kMaxCores = 3;

struct SubmitRequest {
    std::vector<Task> tasks;
    // Tasks per physical core, for multi-core masks (each core its own range of
    // `tasks`). Ranges of cores outside core_mask are ignored. When every range
    // is empty, all tasks run on one core.
    std::array<TaskRange, kMaxCores> core_tasks{};
    uint32_t core_mask = 0;       // RKNPU_CORE*_MASK bits; 0 lets the kernel choose
    uint32_t timeout_ms = 6000;
    uint32_t flags = 0;           // submit_flag bits
    int fence_in = -1;            // with kFenceIn; still owned by the caller
    int32_t iommu_domain = 0;
    int32_t priority = 0;
    uint64_t task_base_addr = 0;  // rknpu: PC TASK_DMA_BASE_ADDR
    // rocket: handles of buffers the job reads and writes (implicit sync).
    std::vector<uint32_t> in_handles;
    std::vector<uint32_t> out_handles;
};

struct SubmitResult {
    uint32_t task_counter = 0;    // tasks the kernel reports done
    int64_t hw_elapse_ns = 0;     // rknpu only
    // The cores the job ran on, as the kernel reports them: rknpu writes the
    // core it chose back into core_mask when given 0 (AUTO). 0: not reported.
    uint32_t core_mask = 0;
    int fence_out = -1;           // with kFenceOut: the caller must close it
};

// rknpu actions (hw-facts 1.4): the code is the ABI value.
enum class Action : uint32_t {
    kGetHwVersion = RKNPU_GET_HW_VERSION,
    kGetDrvVersion = RKNPU_GET_DRV_VERSION,
    kGetFreq = RKNPU_GET_FREQ,
    kSetFreq = RKNPU_SET_FREQ,
    kGetVolt = RKNPU_GET_VOLT,
    kSetVolt = RKNPU_SET_VOLT,
    kReset = RKNPU_ACT_RESET,
    kGetBwPriority = RKNPU_GET_BW_PRIORITY,
    kSetBwPriority = RKNPU_SET_BW_PRIORITY,
    kGetBwExpect = RKNPU_GET_BW_EXPECT,
    kSetBwExpect = RKNPU_SET_BW_EXPECT,
    kGetBwTw = RKNPU_GET_BW_TW,
    kSetBwTw = RKNPU_SET_BW_TW,
    kClearTotalRwAmount = RKNPU_ACT_CLR_TOTAL_RW_AMOUNT,
    kGetDtWrAmount = RKNPU_GET_DT_WR_AMOUNT,
    kGetDtRdAmount = RKNPU_GET_DT_RD_AMOUNT,
    kGetWtRdAmount = RKNPU_GET_WT_RD_AMOUNT,
    kGetTotalRwAmount = RKNPU_GET_TOTAL_RW_AMOUNT,
    kGetIommuEnabled = RKNPU_GET_IOMMU_EN,
    kSetProcNice = RKNPU_SET_PROC_NICE,
    kPowerOn = RKNPU_POWER_ON,
    kPowerOff = RKNPU_POWER_OFF,
    kGetTotalSramSize = RKNPU_GET_TOTAL_SRAM_SIZE,
    kGetFreeSramSize = RKNPU_GET_FREE_SRAM_SIZE,
    kGetIommuDomainId = RKNPU_GET_IOMMU_DOMAIN_ID,
    kSetIommuDomainId = RKNPU_SET_IOMMU_DOMAIN_ID,
};

class KernelDriver {
public:
    virtual ~KernelDriver() = default;

    // "rknpu" (DRM render node), "rknpu-misc" (/dev/rknpu) or "rocket".
    virtual const char* backend_name() const = 0;

    // What the kernel ABI offers beyond running tasks. The vendor driver
    // offers all of it; mainline rocket (hw-facts 2.3) ends a task on the
    // DPU's interrupt only, picks each job's core and writes its index
    // itself, syncs whole buffers, and has one address space (no IOMMU
    // domains but 0).
    virtual bool completes_ppu_tasks() const { return true; }
    virtual bool has_iommu_domains() const { return true; }
    virtual bool pins_cores() const { return true; }
    virtual bool syncs_byte_ranges() const { return true; }
    virtual StatusOr<DriverIdentity> identify() = 0;

    virtual StatusOr<BufferObject> create_buffer(const BufferRequest& request) = 0;
    // Maps the whole buffer for the CPU (sets buffer->host); a no-op when mapped.
    virtual Status map_buffer(BufferObject* buffer) = 0;
    virtual Status unmap_buffer(BufferObject* buffer) = 0;
    // Unmaps, releases the kernel object and clears *buffer.
    virtual Status destroy_buffer(BufferObject* buffer) = 0;
    // Cache maintenance for cacheable buffers. rocket syncs the whole buffer.
    virtual Status sync_buffer(const BufferObject& buffer, SyncDirection direction, uint64_t offset,
                               uint64_t size) = 0;

    // dma-buf sharing. import_dmabuf leaves `fd` with the caller; the fd
    // export_dmabuf returns belongs to the caller.
    virtual StatusOr<BufferObject> import_dmabuf(int fd) = 0;
    virtual StatusOr<int> export_dmabuf(const BufferObject& buffer) = 0;

    // Runs the tasks; blocks until they finished, failed or timed out.
    virtual StatusOr<SubmitResult> submit(const SubmitRequest& request) = 0;

    // rknpu actions; rocket has none (kUnimplemented).
    virtual StatusOr<uint32_t> action(Action action, uint32_t value = 0) = 0;
};

}  // namespace rknn::driver
