// Copying ioctl arguments in and out the way the two kernels do.
//
// DRM devices (drm_ioctl): the user's _IOC_SIZE bytes are copied in when both
// the user's command and the kernel's definition say "in"; the rest of the
// kernel struct is zero-filled. Afterwards the user's size is copied back
// when both say "out", whatever the handler returned, so a timed-out SUBMIT
// still reports task_counter. This is why the 40-byte mem_create of drivers
// up to 0.9.6 keeps working against 0.9.8 (hw-facts-check row 10).
//
// The /dev/rknpu misc device copies the kernel's struct size both ways and
// ignores the size in the command.
#pragma once

#include <linux/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace rknn::driver::mock {

template <typename T, typename Fn>
int drm_call(unsigned long user_cmd, unsigned long kernel_cmd, void* arg, Fn&& handler) {
    const size_t user_size = _IOC_SIZE(user_cmd);
    const unsigned dir = _IOC_DIR(user_cmd) & _IOC_DIR(kernel_cmd);
    const size_t in = (dir & _IOC_WRITE) ? user_size : 0;
    const size_t out = (dir & _IOC_READ) ? user_size : 0;
    if ((in > 0 || out > 0) && arg == nullptr) return -EFAULT;
    std::vector<uint8_t> kdata(std::max({in, out, sizeof(T)}), 0);
    if (in > 0) std::memcpy(kdata.data(), arg, in);
    T args;
    std::memcpy(&args, kdata.data(), sizeof(T));
    const int ret = handler(&args);
    std::memcpy(kdata.data(), &args, sizeof(T));
    if (out > 0) std::memcpy(arg, kdata.data(), out);
    return ret;
}

template <typename T, typename Fn>
int misc_call(void* arg, Fn&& handler) {
    if (arg == nullptr) return -EFAULT;
    T args;
    std::memcpy(&args, arg, sizeof(T));
    const int ret = handler(&args);
    std::memcpy(arg, &args, sizeof(T));
    return ret;
}

}  // namespace rknn::driver::mock
