// dma-buf sharing through the mock: exported fds are real file descriptors,
// importing them (in another open file, or on the /dev/rknpu variant) gives
// access to the same bytes, for the CPU and for the NPU.
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <gtest/gtest.h>

#include "driver_test_util.h"
#include "raw_ioctl.h"

namespace rknn::driver::testing {
namespace {

TEST(DmaBuf, DrmExportImportIntoASecondDriver) {
    auto kernel = make_kernel();
    auto first = open_rknpu(kernel);
    auto second = open_rknpu(kernel);
    Bench bench(*first);
    BufferObject& shared = bench.buffer(8192, 0);
    const std::vector<uint8_t> bytes = pattern_bytes(8192, 4);
    bench.write(shared, bytes);
    const int fd = take(first->export_dmabuf(shared));
    ASSERT_GE(fd, 0);
    BufferObject imported = take(second->import_dmabuf(fd));
    ::close(fd);  // the import holds its own reference
    EXPECT_TRUE(imported.imported);
    EXPECT_EQ(imported.size, shared.size);
    EXPECT_EQ(imported.dma_addr, shared.dma_addr);  // the same object in the shared domain
    EXPECT_EQ(imported.obj_addr, shared.obj_addr);
    ASSERT_OK(second->map_buffer(&imported));
    EXPECT_EQ(std::vector<uint8_t>(imported.host, imported.host + bytes.size()), bytes);
    imported.host[0] = 0xee;  // and the other way round
    EXPECT_EQ(shared.host[0], 0xee);
    ASSERT_OK(second->destroy_buffer(&imported));
    EXPECT_EQ(kernel->live_objects(), 1u);  // still held by the first driver
}

TEST(DmaBuf, ImportedBufferFeedsAJobOnTheMiscDevice) {
    // Data written and synced through the render node, consumed by an NPU job
    // submitted on /dev/rknpu.
    auto kernel = make_kernel();
    auto drm = open_rknpu(kernel);
    auto misc = open_rknpu(kernel, /*misc=*/true);
    Bench drm_bench(*drm);
    Bench misc_bench(*misc);
    AddJob job;
    job.prepare(misc_bench, buffer_flag::kCacheable);
    BufferObject& source = drm_bench.buffer(job.input.size(), buffer_flag::kCacheable);
    const std::vector<uint8_t> fresh = pattern_bytes(job.input.size(), 77);
    drm_bench.write(source, fresh);  // synced to the device view
    const int fd = take(drm->export_dmabuf(source));
    BufferObject imported = take(misc->import_dmabuf(fd));
    ::close(fd);
    ASSERT_OK(misc->map_buffer(&imported));
    EXPECT_EQ(std::vector<uint8_t>(imported.host, imported.host + fresh.size()), fresh);
    SubmitRequest request = job.request;
    request.tasks = {misc_bench.task(*job.regcmd, 2048,
                                     dpu_add_task(static_cast<uint32_t>(imported.dma_addr),
                                                  static_cast<uint32_t>(job.out->dma_addr), job.shape, job.addend),
                                     kDpuEnable, kDpuIntMask)};
    ASSERT_TRUE(misc->submit(request).is_ok());
    EXPECT_EQ(misc_bench.read(*job.out, fresh.size()), expected_add(fresh, job.addend));
    ASSERT_OK(misc->destroy_buffer(&imported));
}

// dma_buf_mmap refuses a range past the buffer's end, as the kernel does; a
// memfd would map it, and the first touch there would raise SIGBUS (found by
// mock_ioctl_fuzzer: tests/fuzz/ioctl-corpus/regression-dmabuf-mmap-*).
TEST(DmaBuf, MappingPastTheEndIsRefused) {
    auto kernel = make_kernel();
    auto driver = open_rknpu(kernel);
    Bench bench(*driver);
    BufferObject& buffer = bench.buffer(8192, 0);
    const int fd = take(driver->export_dmabuf(buffer));
    ASSERT_GE(fd, 0);
    void* p = nullptr;
    EXPECT_EQ(kernel->mmap(fd, 0, 3 * 4096, &p), -EINVAL);
    EXPECT_EQ(kernel->mmap(fd, 4096, 8192, &p), -EINVAL);
    EXPECT_EQ(kernel->mmap(fd, 1u << 20, 4096, &p), -EINVAL);
    EXPECT_EQ(kernel->mmap(fd, 0, 0, &p), -EINVAL);
    EXPECT_EQ(p, nullptr);
    ASSERT_EQ(kernel->mmap(fd, 4096, 4096, &p), 0) << "the last page is inside";
    static_cast<uint8_t*>(p)[4095] = 1;
    EXPECT_EQ(kernel->munmap(p, 4096), 0);
    ::close(fd);
}

TEST(DmaBuf, MiscExportImportIntoTheRenderNode) {
    auto kernel = make_kernel();
    auto misc = open_rknpu(kernel, /*misc=*/true);
    auto drm = open_rknpu(kernel);
    Bench bench(*misc);
    BufferObject& bo = bench.buffer(4096, 0);
    bench.write(bo, pattern_bytes(4096, 8));
    const int fd = take(misc->export_dmabuf(bo));
    BufferObject imported = take(drm->import_dmabuf(fd));
    ::close(fd);
    ASSERT_OK(drm->map_buffer(&imported));
    EXPECT_EQ(std::vector<uint8_t>(imported.host, imported.host + 4096), pattern_bytes(4096, 8));
    ASSERT_OK(drm->destroy_buffer(&imported));
}

TEST(DmaBuf, RocketExportsToTheVendorDriver) {
    auto kernel = make_kernel();
    auto rocket = open_rocket(kernel);
    auto rknpu = open_rknpu(kernel);
    Bench bench(*rocket);
    BufferObject& bo = bench.buffer(4096, 0);
    bench.write(bo, pattern_bytes(4096, 12));
    const int fd = take(rocket->export_dmabuf(bo));
    BufferObject imported = take(rknpu->import_dmabuf(fd));
    ::close(fd);
    EXPECT_NE(imported.obj_addr, 0u);  // a new vendor object around the same memory
    ASSERT_OK(rknpu->map_buffer(&imported));
    EXPECT_EQ(std::vector<uint8_t>(imported.host, imported.host + 4096), pattern_bytes(4096, 12));
    // Foreign imports are not CACHEABLE objects: MEM_SYNC is refused.
    EXPECT_FALSE(rknpu->sync_buffer(imported, SyncDirection::kToDevice, 0, 4096).is_ok());
    ASSERT_OK(rknpu->destroy_buffer(&imported));
}

TEST(DmaBuf, ImportOutlivesTheExporter) {
    auto kernel = make_kernel();
    auto first = open_rknpu(kernel, /*misc=*/true);
    auto second = open_rknpu(kernel, /*misc=*/true);
    BufferRequest request;
    request.size = 4096;
    BufferObject bo = take(first->create_buffer(request));
    ASSERT_OK(first->map_buffer(&bo));
    bo.host[10] = 0x42;
    const int fd = take(first->export_dmabuf(bo));
    BufferObject imported = take(second->import_dmabuf(fd));
    ::close(fd);
    ASSERT_OK(first->destroy_buffer(&bo));
    ASSERT_OK(second->map_buffer(&imported));
    EXPECT_EQ(imported.host[10], 0x42);
    ASSERT_OK(second->destroy_buffer(&imported));
    EXPECT_EQ(kernel->live_objects(), 0u);
}

TEST(DmaBuf, UnknownFdsAreRefusedWithoutLeaks) {
    auto kernel = make_kernel();
    auto drm = open_rknpu(kernel);
    auto misc = open_rknpu(kernel, /*misc=*/true);
    const int fds_before = count_open_fds();
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    for (KernelDriver* driver : {drm.get(), misc.get()}) {
        auto not_ours = driver->import_dmabuf(ends[0]);
        ASSERT_FALSE(not_ours.is_ok());
        EXPECT_EQ(not_ours.status().code(), StatusCode::kInvalidArgument) << not_ours.status().message();
        EXPECT_FALSE(driver->import_dmabuf(-1).is_ok());
    }
    ::close(ends[0]);
    ::close(ends[1]);
    EXPECT_EQ(count_open_fds(), fds_before);
    EXPECT_EQ(kernel->live_objects(), 0u);
}

TEST(DmaBuf, SelfImportReturnsTheSameHandle) {
    auto kernel = make_kernel();
    RawRknpu raw(kernel);
    const rknpu_mem_create bo = raw.create(4096, 0);
    drm_prime_handle prime{};
    prime.handle = bo.handle;
    prime.flags = DRM_CLOEXEC | DRM_RDWR;
    ASSERT_EQ(raw.ioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime), 0);
    const int fd = prime.fd;
    prime = drm_prime_handle{};
    prime.fd = fd;
    ASSERT_EQ(raw.ioctl(DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime), 0);
    EXPECT_EQ(prime.handle, bo.handle);
    prime.flags = 0x100;  // unknown export flags
    EXPECT_EQ(raw.ioctl(DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime), -EINVAL);
    ::close(fd);
    EXPECT_EQ(raw.destroy(bo), 0);
}

}  // namespace
}  // namespace rknn::driver::testing
