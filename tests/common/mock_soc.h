// Makes the mock device emulate another SoC (RKNN_MOCK_SOC) or speak another
// kernel ABI (RKNN_MOCK_DRIVER) while the object lives; both are read when
// rknn_init opens the device. The previous value comes back afterwards.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace rknn::testing {

class ScopedEnvVar {
public:
    ScopedEnvVar(const char* name, const char* value) : name_(name) {
        if (const char* before = std::getenv(name)) before_ = before;
        ::setenv(name, value, 1);
    }
    ~ScopedEnvVar() {
        if (before_) {
            ::setenv(name_.c_str(), before_->c_str(), 1);
        } else {
            ::unsetenv(name_.c_str());
        }
    }
    ScopedEnvVar(const ScopedEnvVar&) = delete;
    ScopedEnvVar& operator=(const ScopedEnvVar&) = delete;

private:
    std::string name_;
    std::optional<std::string> before_;
};

class MockSoc : public ScopedEnvVar {
public:
    explicit MockSoc(const char* soc) : ScopedEnvVar("RKNN_MOCK_SOC", soc) {}
};

// "rknpu", "rknpu-misc" or "rocket".
class MockDriver : public ScopedEnvVar {
public:
    explicit MockDriver(const char* abi) : ScopedEnvVar("RKNN_MOCK_DRIVER", abi) {}
};

}  // namespace rknn::testing
