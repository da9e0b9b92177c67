#include "driver/device_probe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "driver/soc_identify.h"

namespace {

using rknn::StatusCode;
using rknn::driver::choose_device;
using rknn::driver::DeviceNode;

const std::vector<DeviceNode> kNone;
const std::vector<DeviceNode> kVendor = {{"/dev/dri/renderD129", "rknpu", "0.9.8", ""}};
const std::vector<DeviceNode> kBoth = {{"/dev/dri/renderD129", "rknpu", "0.9.8", ""},
                                       {"/dev/accel/accel0", "rocket", "1.0.0", ""}};
const std::vector<DeviceNode> kRocket = {{"/dev/accel/accel0", "rocket", "1.0.0", ""}};

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
        EXPECT_TRUE(node.driver == "rknpu" || node.driver == "rocket" || !node.error.empty()) << node.path;
    }
}

TEST(DeviceChoice, ANodeClosedToUsIsNamedWhenTheMockIsTaken) {
    const std::vector<DeviceNode> closed = {{"/dev/dri/renderD129", "", "", "Permission denied"}};
    auto choice = choose_device("auto", closed);
    ASSERT_TRUE(choice.is_ok());
    EXPECT_EQ(choice->backend, "mock");
    EXPECT_TRUE(choice->warn);
    EXPECT_NE(choice->reason.find("/dev/dri/renderD129 (Permission denied)"), std::string::npos) << choice->reason;
    EXPECT_FALSE(choose_device("auto", kNone)->warn);
    // A closed node is never taken for the driver asked for, and the refusal names it.
    auto forced = choose_device("rknpu", closed);
    ASSERT_FALSE(forced.is_ok());
    EXPECT_NE(forced.status().message().find("/dev/dri/renderD129 (Permission denied)"), std::string::npos)
        << forced.status().message();
}

TEST(BoardSoc, TheDeviceTreeNamesIt) {
    using rknn::driver::soc_from_compatible;
    using namespace std::string_literals;
    const auto name = [](const std::string& compatible) {
        const rknn::hw::SocProfile* soc = soc_from_compatible(compatible);
        return soc != nullptr ? std::string(soc->name) : std::string("none");
    };
    EXPECT_EQ(name("rockchip,rk3588-evb1-v10\0rockchip,rk3588\0"s), "rk3588");
    EXPECT_EQ(name("xunlong,orangepi-5\0rockchip,rk3588s\0"s), "rk3588");
    EXPECT_EQ(name("pine64,quartz64-a\0rockchip,rk3566\0"s), "rk3566");
    EXPECT_EQ(name("radxa,rock-3a\0rockchip,rk3568"s), "rk3568");  // no final NUL
    EXPECT_EQ(name("rockchip,rk3576-evb\0rockchip,rk3576\0"s), "rk3576");
    EXPECT_EQ(name("luckfox,pico\0rockchip,rv1106\0"s), "rv1106");
    EXPECT_EQ(name("rockchip,rk3568\n"s), "rk3568");  // written by hand with echo
    EXPECT_EQ(name("raspberrypi,4-model-b\0brcm,bcm2711\0"s), "none");
    EXPECT_EQ(name("rockchip,rk3399\0"s), "none");
    EXPECT_EQ(name(""), "none");
}

TEST(BoardSoc, AFileThatNamesNoneIsAnErrorSayingWhat) {
    const std::string dir = ::testing::TempDir();
    const std::string path = dir + "/compatible";
    {
        std::ofstream out(path, std::ios::binary);
        out << std::string("vendor,board\0vendor,chip\0", 25);
    }
    auto soc = rknn::driver::identify_board_soc(path);
    ASSERT_FALSE(soc.is_ok());
    EXPECT_EQ(soc.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(soc.status().message().find("vendor,board vendor,chip"), std::string::npos) << soc.status().message();
    {
        std::ofstream out(path, std::ios::binary);
        out << std::string("rockchip,rk3562-evb\0rockchip,rk3562\0", 36);
    }
    ASSERT_TRUE(rknn::driver::identify_board_soc(path).is_ok());
    EXPECT_STREQ(rknn::driver::identify_board_soc(path).value()->name, "rk3562");
    EXPECT_FALSE(rknn::driver::identify_board_soc(dir + "/missing").is_ok());
    {
        std::ofstream out(path, std::ios::binary);  // only the first page is read
        out << std::string(5000, 'x') << std::string("\0rockchip,rk3588\0", 17);
    }
    auto beyond = rknn::driver::identify_board_soc(path);
    ASSERT_FALSE(beyond.is_ok());
    EXPECT_LT(beyond.status().message().size(), 1000u);
}

TEST(BoardSoc, TheNodesUeventNamesItInAContainer) {
    using rknn::driver::soc_from_uevent;
    const rknn::hw::SocProfile* soc =
        soc_from_uevent("DRIVER=RKNPU\nOF_NAME=npu\nOF_COMPATIBLE_0=rockchip,rk3588-rknpu\nOF_COMPATIBLE_N=1\n");
    ASSERT_NE(soc, nullptr);
    EXPECT_TRUE(rknn::hw::runs_models_for(soc->name, "rk3588"));
    EXPECT_EQ(soc_from_uevent("DRIVER=panfrost\nOF_COMPATIBLE_0=rockchip,rk3588-mali\n"), nullptr);
    EXPECT_EQ(rknn::driver::uevent_path_of("/dev/dri/renderD129"), "/sys/class/drm/renderD129/device/uevent");
    EXPECT_EQ(rknn::driver::uevent_path_of("/dev/accel/accel0"), "/sys/class/accel/accel0/device/uevent");
    EXPECT_EQ(rknn::driver::uevent_path_of("/dev/rknpu"), "/sys/class/misc/rknpu/device/uevent");
}

}  // namespace
