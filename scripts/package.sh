#!/usr/bin/env bash
# Builds the Debian packages (CPack) into out/packages:
#   scripts/package.sh          amd64: librknnrt, librknnrt-dev, rknn-tools,
#                               python3-rknnlite, python3-openrknn-toolkit
#   scripts/package.sh arm64    from the aarch64 cross build: librknnrt and
#                               librknnrt-dev for boards (the converter, the tools
#                               and the Python modules are built on the host only)
# Installs missing Debian packages first. docs/install.md says how to install them.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-amd64}
options=(-DPython3_EXECUTABLE=/usr/bin/python3 -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr
         -DRKNN_BUILD_TESTS=OFF -DRKNN_BUILD_BENCHMARKS=OFF)
case $arch in
  amd64) dir=build-package; scripts/deps.sh demo ;;
  arm64) dir=build-package-arm64; scripts/deps.sh test
         # (GNUInstallDirs chooses no multiarch libdir when cross compiling.)
         options+=(-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DRKNN_BUILD_TOOLS=OFF
                   -DCMAKE_INSTALL_LIBDIR=lib/aarch64-linux-gnu) ;;
  *) echo "usage: $0 [amd64|arm64]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${options[@]}" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "$(nproc)"
mkdir -p out/packages
(cd "$dir" && cpack -G DEB -B "$PWD/../out/packages")
rm -rf out/packages/_CPack_Packages
ls -l out/packages/*.deb
