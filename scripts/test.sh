#!/usr/bin/env bash
# Builds and runs every test:
#   native          the whole suite (unit, ABI, ONNX conformance, real models)
#   asan+ubsan+fuzz the same under AddressSanitizer + UndefinedBehaviorSanitizer, built
#                   with clang (without the real-model accuracy runs, which only re-check
#                   numbers, and so without the examples and benchmarks only those use),
#                   and in the same build the six libFuzzer targets of tests/fuzz (docs/
#                   reliability.md), each run for RKNN_FUZZ_SECONDS: one sanitizer build
#                   instead of two (the other builds replay their corpora)
#   tsan            the threaded pieces (host thread pool, mock kernel, emulated NPU, lowered programs,
#                   eight threads on own, duplicated and matmul contexts, the corpus replays that
#                   need no converter) under ThreadSanitizer
#   aarch64 (qemu)  the cross build, tests run under qemu-user
# Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test

jobs=$(nproc)
common=(-DPython3_EXECUTABLE=/usr/bin/python3)
# Line tables only (-g1): full -g at -O2 doubles the compile time and no CI step reads
# variable locations; stack traces still name file and line. The sanitizer builds also
# drop to -O1, the usual level for them, which halves their compile time again.
optimised=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
sanitized=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")

# run_suite NAME DIR "CTEST ARGS" "BUILD TARGETS (empty: all)" [CMAKE ARGS...]
run_suite() {
  local name=$1 dir=$2 ctest_args=$3 targets=$4
  shift 4
  echo "==== $name: configure + build ($dir)"
  cmake -S . -B "$dir" "${common[@]}" "$@" > "$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
  # shellcheck disable=SC2086
  cmake --build "$dir" -j "$jobs" ${targets:+--target $targets}
  echo "==== $name: ctest"
  # shellcheck disable=SC2086
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" $ctest_args
}

# Installed under /usr (the multiarch libdir), as the Debian packages deb_packages makes.
run_suite "native" build "" "" "${optimised[@]}" -DCMAKE_INSTALL_PREFIX=/usr
# clang, for libFuzzer: its coverage instrumentation goes into every test binary too.
run_suite "asan+ubsan+fuzz" build-asan "-LE models" "" "${sanitized[@]}" -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DRKNN_FUZZ=ON -DRKNN_SANITIZE=address,undefined -DRKNN_BUILD_EXAMPLES=OFF \
  -DRKNN_BUILD_BENCHMARKS=OFF
run_suite "tsan" build-tsan "-L unit" "base_test driver_test emulator_test npu_test matmul_api_test async_run_test thread_stress_test model_loader_fuzzer_replay mock_ioctl_fuzzer_replay io_convert_fuzzer_replay" "${sanitized[@]}" -DRKNN_SANITIZE=thread -DRKNN_BUILD_TOOLS=OFF
run_suite "aarch64 (qemu)" build-aarch64 "" "" "${optimised[@]}" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DRKNN_BUILD_TOOLS=OFF
echo "==== all test suites passed"
