# Cross build for aarch64 boards (RK3588 and friends) with Debian's cross
# toolchain; tests run under qemu-user through CMAKE_CROSSCOMPILING_EMULATOR.
#   cmake -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Needs: g++-aarch64-linux-gnu qemu-user-static, and the arm64 -dev packages
# (dpkg --add-architecture arm64; libc6:arm64 libstdc++6:arm64 libgtest-dev:arm64
# libdrm-dev:arm64 libhwy-dev:arm64 ...).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Debian multiarch: arm64 libraries live in /usr/lib/aarch64-linux-gnu beside the
# host's, headers are shared in /usr/include. Never pick up the host's libraries.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config must read the arm64 .pc files.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The arm64 runtime libraries come from Debian's multiarch packages (libc6:arm64,
# libstdc++6:arm64), which qemu finds at their usual paths. We deliberately do
# not pass "-L /usr/aarch64-linux-gnu": with the cross toolchain's own glibc,
# qemu 7.2 user mode spins forever in pthread_create (seen on Debian 12).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static)
