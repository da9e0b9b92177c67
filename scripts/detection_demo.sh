#!/usr/bin/env bash
# The detection example: builds OpenRKNN, exports the YOLOv5s-like detector
# from PyTorch (seeded weights) as ONNX, converts it to an int8 OpenRKNN model
# with calibration, and runs the detection demo on the bundled test image on the
# mock device (the emulated NPU when no board is present): the detections,
# the boxes drawn into a PNG, and the timing; then rknn_benchmark's report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh detection

build=build-demo
cmake -S . -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 -DRKNN_BUILD_TESTS=OFF \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target rknn_convert rknn_info rknnrt rknn_detect rknn_benchmark

work=$build/detection
mkdir -p "$work"
echo
echo "== runtime"
"$build/tools/rknn_info/rknn_info"
echo
echo "== exporting the YOLOv5s-like detector (PyTorch, seeded weights) to ONNX"
/usr/bin/python3 tests/models/export_models.py "$work/models" --models yolov5s_like --images 16
echo
echo "== rknn_convert yolov5s_like.onnx -> yolov5s_like.rknn (int8, calibrated on 16 images)"
"$build/tools/rknn_convert/rknn_convert" "$work/models/yolov5s_like.onnx" -o "$work/yolov5s_like.rknn" \
  --dtype int8 --dataset "$work/models/images" \
  --mean 123.675,116.28,103.53 --std 58.395,57.12,57.375 --custom-string "OpenRKNN demo"
echo
echo "== detection demo on examples/data/test_image.png (the weights are random: the boxes show the pipeline, not objects)"
"$build/examples/rknn_detect" "$work/yolov5s_like.rknn" examples/data/test_image.png "$work/detections.png" 3
echo
echo "== rknn_benchmark (the vendor tool's report)"
(cd "$work" && "../examples/rknn_benchmark" yolov5s_like.rknn ../../examples/data/test_image.png 5 1)
