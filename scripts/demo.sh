#!/usr/bin/env bash
# The main job: builds OpenRKNN, generates the demo's small image classifier
# (ONNX, seeded random weights), converts it to an int8 OpenRKNN model with
# calibration, prints the per-layer accuracy analysis and the model summary,
# then the runtime version and the NPU device this machine would use.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh demo

build=build-demo
cmake -S . -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 -DRKNN_BUILD_TESTS=OFF \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target rknn_convert rknn_info rknnrt

work=$build/demo
mkdir -p "$work"
echo
echo "== generating the demo model"
/usr/bin/python3 examples/demo_model/make_demo_model.py "$work"
echo
echo "== rknn_convert demo_cnn.onnx -> demo_cnn.rknn (int8)"
"$build/tools/rknn_convert/rknn_convert" "$work/demo_cnn.onnx" -o "$work/demo_cnn.rknn" \
  --dtype int8 --dataset "$work/calibration.txt" \
  --mean 123.675,116.28,103.53 --std 58.395,57.12,57.375 \
  --accuracy-analysis "$work/calibration/pixels_0.npy" --custom-string "OpenRKNN demo"
echo
echo "== runtime"
"$build/tools/rknn_info/rknn_info"
