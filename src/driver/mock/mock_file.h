// One open file of the mock kernel (what a device fd refers to).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rknn::driver::mock {

class MockFile {
public:
    virtual ~MockFile() = default;
    // The ioctl entry point: >= 0 or a negative errno.
    virtual int ioctl(unsigned long cmd, void* arg) = 0;
    // mmap of the device fd at `offset`: 0 and *out, or a negative errno.
    virtual int mmap(uint64_t offset, size_t length, void** out) = 0;
};

}  // namespace rknn::driver::mock
