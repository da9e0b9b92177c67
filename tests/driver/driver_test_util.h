// Shared test support: a mock kernel with a back-end on top, and a bench
// that allocates, fills and reads buffers through the KernelDriver interface.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "driver/kernel_driver.h"
#include "driver/mock/mock_kernel.h"
#include "driver/rknpu_driver.h"
#include "driver/rocket_driver.h"
#include "hw/soc_profile.h"
#include "npu_programs.h"

namespace rknn::driver::testing {

#define ASSERT_OK(expr)                                               \
    do {                                                              \
        const ::rknn::Status assert_ok_status_ = (expr);              \
        ASSERT_TRUE(assert_ok_status_.is_ok()) << assert_ok_status_.message(); \
    } while (0)

template <typename T>
T take(StatusOr<T> value) {
    EXPECT_TRUE(value.is_ok()) << value.status().message();
    return std::move(value).value();
}

inline std::shared_ptr<mock::MockKernel> make_kernel(const char* soc = "rk3588", mock::MockOptions options = {}) {
    return std::make_shared<mock::MockKernel>(*hw::find_soc(soc), options);
}

inline std::unique_ptr<KernelDriver> open_rknpu(const std::shared_ptr<mock::MockKernel>& kernel, bool misc = false) {
    auto driver = RknpuDriver::open(kernel, misc ? mock::MockKernel::kRknpuMiscNode : mock::MockKernel::kRknpuRenderNode,
                                    misc ? RknpuDriver::Variant::kMisc : RknpuDriver::Variant::kDrm,
                                    kernel->soc().name);
    EXPECT_TRUE(driver.is_ok()) << driver.status().message();
    return driver.is_ok() ? std::move(driver).value() : nullptr;
}

inline std::unique_ptr<KernelDriver> open_rocket(const std::shared_ptr<mock::MockKernel>& kernel) {
    auto driver = RocketDriver::open(kernel, mock::MockKernel::kRocketNode, kernel->soc().name);
    EXPECT_TRUE(driver.is_ok()) << driver.status().message();
    return driver.is_ok() ? std::move(driver).value() : nullptr;
}

// Buffers made through a KernelDriver and destroyed with the bench.
class Bench {
public:
    explicit Bench(KernelDriver& driver) : driver_(driver) {}
    ~Bench() {
        for (auto& bo : buffers_) {
            if (bo->size != 0) {
                EXPECT_TRUE(driver_.destroy_buffer(bo.get()).is_ok());
            }
        }
    }
    Bench(const Bench&) = delete;
    Bench& operator=(const Bench&) = delete;

    // A mapped buffer; the reference stays valid for the bench's life.
    BufferObject& buffer(uint64_t size, uint32_t flags) {
        buffers_.push_back(std::make_unique<BufferObject>());
        BufferObject& bo = *buffers_.back();
        BufferRequest request;
        request.size = size;
        request.flags = flags;
        auto created = driver_.create_buffer(request);
        EXPECT_TRUE(created.is_ok()) << created.status().message();
        if (!created.is_ok()) return bo;
        bo = created.value();
        const Status mapped = driver_.map_buffer(&bo);
        EXPECT_TRUE(mapped.is_ok()) << mapped.message();
        return bo;
    }
    // Writes bytes (and syncs them to the NPU when the buffer is cached and `sync`).
    void write(const BufferObject& bo, const std::vector<uint8_t>& bytes, bool sync = true) {
        ASSERT_NE(bo.host, nullptr);
        ASSERT_LE(bytes.size(), bo.size);
        std::memcpy(bo.host, bytes.data(), bytes.size());
        if (sync && bo.cacheable()) {
            const Status s = driver_.sync_buffer(bo, SyncDirection::kToDevice, 0, bo.size);
            ASSERT_TRUE(s.is_ok()) << s.message();
        }
    }
    std::vector<uint8_t> read(const BufferObject& bo, size_t count, bool sync = true) {
        if (sync && bo.cacheable()) {
            const Status s = driver_.sync_buffer(bo, SyncDirection::kFromDevice, 0, bo.size);
            EXPECT_TRUE(s.is_ok()) << s.message();
        }
        return std::vector<uint8_t>(bo.host, bo.host + count);
    }
    // A task whose regcmd stream is written into `bo` at `offset`.
    Task task(const BufferObject& bo, uint64_t offset, const hw::RegcmdBuilder& program, uint32_t enable,
              uint32_t int_mask) {
        EXPECT_TRUE(program.finish().is_ok()) << program.finish().message();
        const std::vector<uint8_t> bytes = stream_bytes(program);
        EXPECT_LE(offset + bytes.size(), bo.size);
        std::memcpy(bo.host + offset, bytes.data(), bytes.size());
        if (bo.cacheable()) {
            EXPECT_TRUE(driver_.sync_buffer(bo, SyncDirection::kToDevice, offset, bytes.size()).is_ok());
        }
        Task t;
        t.regcmd_addr = bo.dma_addr + offset;
        t.regcmd_words = static_cast<uint32_t>(program.size());
        t.enable_mask = enable;
        t.int_mask = int_mask;
        return t;
    }

private:
    KernelDriver& driver_;
    std::vector<std::unique_ptr<BufferObject>> buffers_;
};

// An int8 add-constant job on one cube: input, output and regcmd buffers.
struct AddJob {
    CubeShape shape{4, 4, 16};
    int32_t addend = 5;
    BufferObject* in = nullptr;
    BufferObject* out = nullptr;
    BufferObject* regcmd = nullptr;
    std::vector<uint8_t> input;
    SubmitRequest request;

    void prepare(Bench& bench, uint32_t flags, int seed = 1) {
        const uint64_t bytes = cube_bytes(shape);
        in = &bench.buffer(bytes, flags);
        out = &bench.buffer(bytes, flags);
        regcmd = &bench.buffer(4096, flags);
        input = pattern_bytes(bytes, seed);
        bench.write(*in, input);
        bench.write(*out, std::vector<uint8_t>(bytes, 0));
        request.tasks = {bench.task(*regcmd, 0,
                                    dpu_add_task(static_cast<uint32_t>(in->dma_addr), static_cast<uint32_t>(out->dma_addr),
                                                 shape, addend),
                                    kDpuEnable, kDpuIntMask)};
        request.timeout_ms = 2000;
    }
    std::vector<uint8_t> expected() const { return expected_add(input, addend); }
};

}  // namespace rknn::driver::testing
