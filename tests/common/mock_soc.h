// Makes the mock device emulate another SoC while the object lives
// (RKNN_MOCK_SOC, read when rknn_init opens the device); the previous value
// comes back afterwards.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace rknn::testing {

class MockSoc {
public:
    explicit MockSoc(const char* soc) {
        if (const char* before = std::getenv(kVariable)) before_ = before;
        ::setenv(kVariable, soc, 1);
    }
    ~MockSoc() {
        if (before_) {
            ::setenv(kVariable, before_->c_str(), 1);
        } else {
            ::unsetenv(kVariable);
        }
    }
    MockSoc(const MockSoc&) = delete;
    MockSoc& operator=(const MockSoc&) = delete;

private:
    static constexpr const char* kVariable = "RKNN_MOCK_SOC";
    std::optional<std::string> before_;
};

}  // namespace rknn::testing
