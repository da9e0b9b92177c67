#!/usr/bin/env bash
# The examples as a user runs them, on the mock device: rknn_benchmark and the
# classification, detection and multiple-input demos, each on a model the
# converter made from the exported ONNX files. Checks the printed lines the
# vendor's rknn_benchmark prints, the files written and the demos' exit codes.
#
# usage: demos_test.sh RKNN_CONVERT EXAMPLES_BIN_DIR MODELS_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
convert=$1 bin=$2 models=$3 src=$4 work=$5
if [ ! -f "$models/models.json" ]; then echo "no exported models in $models: skipping"; exit 77; fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"
norm=(--mean 123.675,116.28,103.53 --std 58.395,57.12,57.375)
fail() { echo "FAIL: $*"; exit 1; }
expect() { grep -Eq -- "$1" "$2" || fail "'$1' not in $2"; }

"$convert" "$models/mobilenet_v2.onnx" -o mobilenet_v2.rknn --dtype int8 --dataset "$models/images" "${norm[@]}" \
  --calib-max 4 --custom-string "demo test" > convert_mobilenet.log
"$convert" "$models/yolov5s_like.onnx" -o yolov5s_like.rknn --dtype int8 --dataset "$models/images" "${norm[@]}" \
  --calib-max 4 > convert_yolo.log

echo "== rknn_benchmark mobilenet_v2.rknn IMAGE 3 1"
"$bin/rknn_benchmark" mobilenet_v2.rknn "$models/images/img_001.png" 3 1 | tee bench.txt
expect '^rknn_api/rknnrt version: 2\.3\.2 \(.*\), driver version: ' bench.txt
expect '^total weight size: [1-9][0-9]*, total internal size: [1-9][0-9]*$' bench.txt
expect '^total dma used size: [1-9][0-9]*$' bench.txt
expect '^model input num: 1, output num: 1$' bench.txt
expect '^  index=0, name=images, n_dims=4, dims=\[1, 224, 224, 3\], n_elems=150528, size=150528, w_stride = 224, size_with_stride=150528, fmt=NHWC, type=INT8, qnt_type=AFFINE, zp=-?[0-9]+, scale=[0-9.]+$' bench.txt
expect '^  index=0, name=out0, n_dims=2, dims=\[1, 1000\], n_elems=1000, size=1000, w_stride = 0, size_with_stride=1000, fmt=UNDEFINED, type=INT8, qnt_type=AFFINE' bench.txt
expect '^custom string: demo test$' bench.txt
expect '^   4: Elapse Time = [0-9.]+ms, FPS = [0-9.]+$' bench.txt
expect '^Begin perf \.\.\.$' bench.txt
expect '^Avg Time [0-9.]+ms, Avg FPS = [0-9.]+$' bench.txt
expect '^Save output to rt_output0\.npy$' bench.txt
expect '^---- Top5 ----$' bench.txt
[ -s rt_output0.npy ] || fail "rt_output0.npy missing"

cp rt_output0.npy single_output0.npy

echo "== rknn_benchmark on a multi-batch model (--batch 3), the image in each item, on all cores"
"$convert" "$models/mobilenet_v2.onnx" -o mobilenet_v2_b3.rknn --dtype int8 --dataset "$models/images" "${norm[@]}" \
  --calib-max 4 --batch 3 > convert_mobilenet_b3.log
"$bin/rknn_benchmark" mobilenet_v2_b3.rknn "$models/images/img_001.png" 2 7 > bench_b3.txt || fail "rknn_benchmark B=3"
expect '^  index=0, name=images, n_dims=4, dims=\[3, 224, 224, 3\], n_elems=451584, size=451584' bench_b3.txt
expect '^multi-batch model: 3 items per run, [0-9.]+ items/s$' bench_b3.txt
/usr/bin/python3 -c "
import numpy as np, sys
one, three = np.load('single_output0.npy'), np.load('rt_output0.npy')
sys.exit(0 if three.shape == (3, 1000) and all((three[i] == one[0]).all() for i in range(3)) else 1)" ||
  fail "the B=3 items differ from the batch-1 model's output"

echo "== rknn_benchmark with zero-filled inputs (no input path) on all cores"
"$bin/rknn_benchmark" yolov5s_like.rknn "" 1 7 > bench_yolo.txt || fail "rknn_benchmark on the detector"
expect '^model input num: 1, output num: 3$' bench_yolo.txt
expect '^Save output to rt_output2\.npy$' bench_yolo.txt

echo "== classification demo"
"$bin/rknn_classify" mobilenet_v2.rknn "$models/images/img_002.png" | tee classify.txt
expect '^---- Top5 ----$' classify.txt
[ "$(grep -Ec '^\[ *[0-9]+\] logit' classify.txt)" = 5 ] || fail "five classes expected"

echo "== detection demo"
"$bin/rknn_detect" yolov5s_like.rknn "$src/examples/data/test_image.png" detections.png | tee detect.txt
expect 'detections \(score >= 0\.25, NMS IoU 0\.45\)' detect.txt
expect '^timing: rknn_init' detect.txt
[ -s detections.png ] || fail "detections.png missing"

echo "== multiple-input demo"
/usr/bin/python3 "$src/examples/multi_input/make_two_input_model.py" two_stream > /dev/null
"$convert" two_stream/two_stream.onnx -o two_stream.rknn --dtype int8 --dataset two_stream/calibration.txt \
  --mean "127.5,127.5,127.5;127.5,127.5,127.5" --std "64,64,64;64,64,64" > convert_two_stream.log
"$bin/rknn_multi_input" two_stream.rknn two_stream/test_left.npy two_stream/test_right.npy \
  two_stream/test_expected.npy | tee multi.txt
expect '^cosine vs PyTorch: 0\.9[89]' multi.txt
echo "all demos ok"
