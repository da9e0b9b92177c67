// Makes the mock device emulate another SoC while the object lives
// (RKNN_MOCK_SOC, read when rknn_init opens the device).
#pragma once

#include <cstdlib>

namespace rknn::testing {

class MockSoc {
public:
    explicit MockSoc(const char* soc) { ::setenv("RKNN_MOCK_SOC", soc, 1); }
    ~MockSoc() { ::unsetenv("RKNN_MOCK_SOC"); }
    MockSoc(const MockSoc&) = delete;
    MockSoc& operator=(const MockSoc&) = delete;
};

}  // namespace rknn::testing
