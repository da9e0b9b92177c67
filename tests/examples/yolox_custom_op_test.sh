#!/usr/bin/env bash
# The YOLOX-like cstSigmoid demo as a user runs it, on the mock device: the
# model written by make_yolox_model.py, converted to float16 (--custom-op)
# and to int8 (--custom-op-plugin librkcst_sigmoid.so, so that calibration
# runs the op), run by rknn_yolox_custom_op_demo against NumPy's float heads
# and detections; in int8 also with --own-dtype (the op takes int8 codes).
#
# usage: yolox_custom_op_test.sh RKNN_CONVERT EXAMPLES_BIN_DIR PLUGIN_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
convert=$1 bin=$2 plugins=$3 src=$4 work=$5
/usr/bin/python3 -c 'import onnx, numpy' 2> /dev/null || { echo "SKIP: no python3-onnx"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
expect() { grep -Eq -- "$1" "$2" || fail "'$1' not in $2"; }
norm=(--mean 0,0,0 --std 255,255,255)

# Each of the reference's first TOP detections has one in the demo's output
# with its class, each box corner within PIXELS of it (boxes clamped to the
# image edge may be empty, so no IoU) and a score within SCORE of it; and the
# demo found as many as the reference, give or take SLACK.
match_detections() {  # DEMO_OUTPUT TOP PIXELS SCORE SLACK
  /usr/bin/python3 - "$1" model/test_detections.txt "$2" "$3" "$4" "$5" << 'PY'
import sys
demo_path, ref_path, top, pixels, max_diff, slack = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
def distance(a, b):
    return max(abs(x - y) for x, y in zip(a, b))
ref = [(int(f[0]), float(f[1]), [float(v) for v in f[2:6]]) for f in (l.split() for l in open(ref_path)) if f]
demo = []
for line in open(demo_path):
    f = line.split()
    if len(f) == 9 and f[0] == "class" and f[2] == "score" and f[4] == "box":
        demo.append((int(f[1]), float(f[3]), [float(v) for v in f[5:9]]))
assert ref, "the reference has no detections"
if abs(len(demo) - len(ref)) > slack:
    sys.exit(f"FAIL: {len(demo)} detections, the reference has {len(ref)}")
for label, score, box in ref[:top]:
    best = min((distance(box, d[2]) for d in demo if d[0] == label and abs(d[1] - score) <= max_diff), default=1e9)
    if best > pixels:
        sys.exit(f"FAIL: no detection of class {label} score {score:.4f} box {box} (nearest {best:.2f} px away)")
print(f"detections: {len(demo)} (reference {len(ref)}), the first {min(top, len(ref))} matched")
PY
}

/usr/bin/python3 "$src/examples/custom_op/make_yolox_model.py" model
"$convert" model/yolox_like.onnx -o fp16.rknn --custom-op cstSigmoid "${norm[@]}" > convert_fp16.log
expect 'Custom:cstSigmoid 6' convert_fp16.log
"$convert" model/yolox_like.onnx -o int8.rknn --dtype int8 --dataset model/calibration.txt "${norm[@]}" \
  --custom-op-plugin "$plugins/librkcst_sigmoid.so" > convert_int8.log
expect '^output 0: "head0" int8' convert_int8.log

echo "== rknn_yolox_custom_op_demo fp16.rknn"
"$bin/rknn_yolox_custom_op_demo" fp16.rknn model/test_image.npy --expect model 0.9999 | tee demo_fp16.txt
match_detections demo_fp16.txt 1000 0.5 0.01 0
echo "== rknn_yolox_custom_op_demo fp16.rknn --own-dtype"
RKNN_LOG_LEVEL=3 "$bin/rknn_yolox_custom_op_demo" fp16.rknn model/test_image.npy --own-dtype --expect model 0.9999 \
  > demo_fp16_own.txt 2> demo_fp16_own.log
expect 'takes head0_obj float16, head0_obj_sigmoid float16 as the model holds them' demo_fp16_own.log
match_detections demo_fp16_own.txt 1000 0.5 0.01 0
for mode in float own; do
  flag=(); [ "$mode" = own ] && flag=(--own-dtype)
  echo "== rknn_yolox_custom_op_demo int8.rknn ${flag[*]}"
  RKNN_LOG_LEVEL=3 "$bin/rknn_yolox_custom_op_demo" int8.rknn model/test_image.npy "${flag[@]}" --expect model 0.998 \
    > "demo_int8_$mode.txt" 2> "demo_int8_$mode.log" || { cat "demo_int8_$mode.txt"; fail "int8 $mode"; }
  grep -E '^(head|int8)' "demo_int8_$mode.txt"
  match_detections "demo_int8_$mode.txt" 5 3 0.05 4
done
expect 'takes head0_obj int8, head0_obj_sigmoid int8 as the model holds them' demo_int8_own.log
# The op's table holds, per code, what the runtime's float32 round trip
# gives: the same heads, to the printed digit.
diff <(grep -Ev 'rknn_run|cstSigmoid' demo_int8_float.txt) <(grep -Ev 'rknn_run|cstSigmoid' demo_int8_own.txt) ||
  fail "int8 codes through the op's table differ from the float32 round trip"
if grep -q 'as the model holds them' demo_int8_float.log; then fail "the float32 op took its tensors as int8"; fi
echo "yolox custom op demo ok"
