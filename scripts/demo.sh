#!/usr/bin/env bash
# The main job: builds OpenRKNN and prints the runtime version and the NPU
# device this machine would use (the emulated NPU when there is no board).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh demo
cmake -S . -B build -DPython3_EXECUTABLE=/usr/bin/python3 > build.configure.log 2>&1 || { cat build.configure.log; exit 1; }
cmake --build build -j "$(nproc)" --target rknn_info rknnrt
echo
./build/tools/rknn_info/rknn_info
