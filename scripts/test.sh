#!/usr/bin/env bash
# Builds and runs every test: the native build, the same tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, and the aarch64 cross build
# run under qemu-user. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test

jobs=$(nproc)
common=(-DPython3_EXECUTABLE=/usr/bin/python3)

run_suite() {
  local name=$1 dir=$2
  shift 2
  echo "==== $name: configure + build ($dir)"
  cmake -S . -B "$dir" "${common[@]}" "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  cmake --build "$dir" -j "$jobs"
  echo "==== $name: ctest"
  ctest --test-dir "$dir" --output-on-failure -j "$jobs"
}

mkdir -p build
run_suite "native" build
run_suite "asan+ubsan" build-asan -DRKNN_SANITIZE=address,undefined -DRKNN_BUILD_TOOLS=OFF
run_suite "aarch64 (qemu)" build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DRKNN_BUILD_TOOLS=OFF
echo "==== all test suites passed"
