#include "driver/device_probe.h"

#include <gtest/gtest.h>

namespace {

using rknn::StatusCode;
using rknn::driver::choose_device;
using rknn::driver::DeviceNode;

const std::vector<DeviceNode> kNone;
const std::vector<DeviceNode> kVendor = {{"/dev/dri/renderD129", "rknpu", "0.9.8"}};
const std::vector<DeviceNode> kBoth = {{"/dev/dri/renderD129", "rknpu", "0.9.8"},
                                       {"/dev/accel/accel0", "rocket", "1.0.0"}};
const std::vector<DeviceNode> kRocket = {{"/dev/accel/accel0", "rocket", "1.0.0"}};

TEST(DeviceChoice, AutoUsesTheMockWithoutHardware) {
    for (const char* requested : {"", "auto"}) {
        auto choice = choose_device(requested, kNone);
        ASSERT_TRUE(choice.is_ok());
        EXPECT_EQ(choice->backend, "mock");
        EXPECT_TRUE(choice->node.empty());
    }
}

TEST(DeviceChoice, AutoPrefersTheVendorDriver) {
    auto choice = choose_device("auto", kBoth);
    ASSERT_TRUE(choice.is_ok());
    EXPECT_EQ(choice->backend, "rknpu");
    EXPECT_EQ(choice->node, "/dev/dri/renderD129");
    auto rocket = choose_device("auto", kRocket);
    ASSERT_TRUE(rocket.is_ok());
    EXPECT_EQ(rocket->backend, "rocket");
}

TEST(DeviceChoice, ExplicitChoices) {
    EXPECT_EQ(choose_device("mock", kBoth)->backend, "mock");
    EXPECT_EQ(choose_device("rocket", kBoth)->node, "/dev/accel/accel0");
    auto missing = choose_device("rknpu", kRocket);
    ASSERT_FALSE(missing.is_ok());
    EXPECT_EQ(missing.status().code(), StatusCode::kUnavailable);
    auto bogus = choose_device("gpu", kNone);
    ASSERT_FALSE(bogus.is_ok());
    EXPECT_EQ(bogus.status().code(), StatusCode::kInvalidArgument);
}

TEST(DeviceProbe, ProbingThisMachineDoesNotFail) {
    // No NPU here in CI; on a board this lists it. Either way every node found
    // must name a driver we know.
    for (const DeviceNode& node : rknn::driver::probe_npu_nodes()) {
        EXPECT_TRUE(node.driver == "rknpu" || node.driver == "rocket") << node.path;
    }
}

}  // namespace
