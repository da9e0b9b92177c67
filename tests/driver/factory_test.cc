// open_kernel_driver and the pieces of the mock that stand alone.
#include <cerrno>
#include <cstdlib>

#include <gtest/gtest.h>

#include "driver/errno_status.h"
#include "driver/kernel_driver_factory.h"
#include "driver/mock/iova_allocator.h"
#include "driver/mock/sram_pool.h"
#include "driver_test_util.h"

namespace rknn::driver::testing {
namespace {

// Sets environment variables for one test and restores them afterwards.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = old;
            had_ = true;
        }
        ::setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (had_) {
            ::setenv(name_, old_.c_str(), 1);
        } else {
            ::unsetenv(name_);
        }
    }

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

TEST(Factory, MockDefaultsToTheVendorDriverOnRk3588) {
    ScopedEnv soc("RKNN_MOCK_SOC", "");
    ScopedEnv abi("RKNN_MOCK_DRIVER", "");
    OpenedDriver opened = take(open_kernel_driver("mock"));
    ASSERT_NE(opened.driver, nullptr);
    ASSERT_NE(opened.mock, nullptr);
    EXPECT_STREQ(opened.driver->backend_name(), "rknpu");
    EXPECT_EQ(opened.choice.backend, "mock");
    const DriverIdentity id = take(opened.driver->identify());
    EXPECT_EQ(id.soc, "rk3588");
    EXPECT_EQ(id.version, "0.9.8");
    // The driver and the mock work together.
    Bench bench(*opened.driver);
    AddJob job;
    job.prepare(bench, buffer_flag::kCacheable);
    ASSERT_TRUE(opened.driver->submit(job.request).is_ok());
    EXPECT_EQ(bench.read(*job.out, job.input.size()), job.expected());
}

TEST(Factory, EnvironmentPicksSocAndAbi) {
    ScopedEnv device("RKNN_DEVICE", "mock");
    ScopedEnv soc("RKNN_MOCK_SOC", "rk3576");
    {
        ScopedEnv abi("RKNN_MOCK_DRIVER", "rocket");
        OpenedDriver opened = take(open_kernel_driver());
        EXPECT_STREQ(opened.driver->backend_name(), "rocket");
        EXPECT_STREQ(opened.soc->name, "rk3576");
        EXPECT_EQ(opened.mock->soc().num_cores, 2);
    }
    {
        ScopedEnv abi("RKNN_MOCK_DRIVER", "rknpu-misc");
        OpenedDriver opened = take(open_kernel_driver());
        EXPECT_STREQ(opened.driver->backend_name(), "rknpu-misc");
    }
    {
        ScopedEnv abi("RKNN_MOCK_DRIVER", "nvidia");
        EXPECT_EQ(open_kernel_driver().status().code(), StatusCode::kInvalidArgument);
    }
    {
        ScopedEnv bad_soc("RKNN_MOCK_SOC", "rk9999");
        EXPECT_EQ(open_kernel_driver().status().code(), StatusCode::kInvalidArgument);
    }
    // An explicit profile wins over the environment.
    OpenedDriver opened = take(open_kernel_driver("mock", hw::find_soc("rk3568")));
    EXPECT_STREQ(opened.soc->name, "rk3568");
}

TEST(Factory, MissingHardwareIsUnavailable) {
    // This machine has no NPU node (on a board this test would open it).
    for (const auto& node : probe_npu_nodes())
        if (!node.driver.empty()) GTEST_SKIP() << "an NPU is present";
    EXPECT_EQ(open_kernel_driver("rocket").status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(open_kernel_driver("rknpu").status().code(), StatusCode::kUnavailable);
    EXPECT_EQ(open_kernel_driver("gpu").status().code(), StatusCode::kInvalidArgument);
}

TEST(ErrnoStatus, OneTableForEveryBackend) {
    EXPECT_EQ(errno_status(-EINVAL, "x").code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(errno_status(-ENOMEM, "x").code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(errno_status(-ETIMEDOUT, "x").code(), StatusCode::kDeadlineExceeded);
    EXPECT_EQ(errno_status(-ETIME, "x").code(), StatusCode::kDeadlineExceeded);
    EXPECT_EQ(errno_status(-ENOENT, "x").code(), StatusCode::kUnavailable);
    EXPECT_EQ(errno_status(-EFAULT, "x").code(), StatusCode::kInternal);
    const Status s = errno_status(-EIO, "DRM_IOCTL_RKNPU_SUBMIT");
    EXPECT_EQ(s.message().rfind("DRM_IOCTL_RKNPU_SUBMIT: ", 0), 0u) << s.message();
    EXPECT_NE(s.message().find("(errno 5)"), std::string::npos);
}

TEST(IovaAllocator, FirstFitWithMergingAndReuse) {
    mock::IovaAllocator iova(0x1000, 0x11000, 0x1000);  // 16 pages
    const auto a = iova.allocate(0x1000);
    const auto b = iova.allocate(0x2001);  // rounded to 3 pages
    const auto c = iova.allocate(0x1000);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(*a, 0x1000u);
    EXPECT_EQ(*b, 0x2000u);
    EXPECT_EQ(*c, 0x5000u);
    iova.release(*b, 0x2001);
    EXPECT_EQ(*iova.allocate(0x2000), 0x2000u);  // the freed range is reused first
    iova.release(*a, 0x1000);
    iova.release(0x2000, 0x2000);
    EXPECT_EQ(*iova.allocate(0x3000), 0x1000u);  // neighbours merged
    EXPECT_FALSE(iova.allocate(0x100000).has_value());
    EXPECT_FALSE(iova.allocate(0).has_value());
}

TEST(SramPool, ContiguousChunks) {
    mock::SramPool pool(5 * mock::SramPool::kChunk);
    const auto a = pool.allocate(1);
    const auto b = pool.allocate(2 * mock::SramPool::kChunk);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(pool.free_bytes(), 2 * mock::SramPool::kChunk);
    EXPECT_FALSE(pool.allocate(3 * mock::SramPool::kChunk).has_value());
    pool.release(*a, 1);
    EXPECT_FALSE(pool.allocate(3 * mock::SramPool::kChunk).has_value());  // free, but not contiguous
    pool.release(*b, 2 * mock::SramPool::kChunk);
    EXPECT_EQ(*pool.allocate(5 * mock::SramPool::kChunk), 0u);
    EXPECT_EQ(mock::SramPool(0).total_bytes(), 0u);
}

}  // namespace
}  // namespace rknn::driver::testing
