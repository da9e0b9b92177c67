#!/usr/bin/env bash
# rknn_convert as a user runs it: --help documents every option, an
# unsupported model fails with exit status 1 and writes nothing, and a
# supported one is written and summarised.
# usage: cli_test.sh RKNN_CONVERT ONNX_NODE_TESTS SCRATCH
set -euo pipefail
convert=$1 suite=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
fail=0

help=$("$convert" --help)
for option in -o --dtype --target --dataset --calib --calib-max --calib-percentile --no-bias-correction \
              --no-empirical-bias-correction --hybrid \
              --mean --std --rgb2bgr --input-shapes --custom-string --custom-op --fp16-layers --accuracy-analysis \
              --quiet --help; do
  if ! grep -q -- "$option" <<< "$help"; then echo "FAIL: --help does not document $option"; fail=1; fi
done

unsupported=$suite/test_nonmaxsuppression_center_point_box_format/model.onnx
if [ -f "$unsupported" ]; then
  set +e
  "$convert" "$unsupported" -o "$scratch/nms.rknn" > "$scratch/nms.log" 2>&1
  status=$?
  set -e
  cat "$scratch/nms.log"
  [ $status = 1 ] || { echo "FAIL: exit status $status for an unsupported model (want 1)"; fail=1; }
  [ ! -e "$scratch/nms.rknn" ] || { echo "FAIL: a file was written for an unsupported model"; fail=1; }
  grep -q 'node 0 .*NonMaxSuppression' "$scratch/nms.log" || { echo "FAIL: the unsupported node is not named"; fail=1; }
fi

set +e
"$convert" > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: no arguments should exit 2"; fail=1; }
"$convert" x.onnx -o y.rknn --dtype int4 > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: bad --dtype should exit 2"; fail=1; }
for bad in "--hybrid sometimes" "--hybrid on" "--hybrid 0.9" "--hybrid auto:2" "--hybrid auto:0.99:2" "--hybrid auto:0.99:" "--hybrid auto::0.2" \
           "--hybrid output:0" "--hybrid output:2" "--hybrid output:" "--hybrid output:x" "--calib-percentile 20" "--calib-percentile x"; do
  # shellcheck disable=SC2086
  "$convert" x.onnx -o y.rknn $bad > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL: $bad should exit 2"; fail=1; }
done
"$convert" x.onnx -o y.rknn --hybrid auto:0.99:0.2 > /dev/null 2>&1; [ $? = 1 ] || { echo "FAIL: --hybrid auto:0.99:0.2 should parse (then fail on the missing file)"; fail=1; }
for good_hybrid in output output:0.995 output:1; do
  "$convert" x.onnx -o y.rknn --hybrid $good_hybrid > /dev/null 2>&1; [ $? = 1 ] || { echo "FAIL: --hybrid $good_hybrid should parse (then fail on the missing file)"; fail=1; }
done
set -e

good=$suite/test_conv_with_strides_padding/model.onnx
if [ -f "$good" ]; then
  "$convert" "$good" -o "$scratch/conv.rknn" --dtype fp16 --custom-string "hello" > "$scratch/conv.log"
  [ -s "$scratch/conv.rknn" ] || { echo "FAIL: no model written"; fail=1; }
  grep -q 'custom string: hello' "$scratch/conv.log" || { echo "FAIL: summary lacks the custom string"; fail=1; }
  cat "$scratch/conv.log"
fi
[ $fail = 0 ] && echo "rknn_convert command line: ok"
exit $fail
