#!/usr/bin/env bash
# An op neither the NPU nor the CPU kernels have, supplied as a plugin: the
# model from make_cumsum_model.py keeps its ONNX CumSum as a custom op
# (float16), or calibrates through librkcst_cumsum.so (int8); rknn_benchmark,
# which knows nothing of custom ops, runs both with RKNN_LOAD_CSTOP_PLUGINS=1,
# and its saved output is compared with NumPy's.
#
# usage: custom_op_plugin_test.sh RKNN_CONVERT EXAMPLES_BIN_DIR PLUGIN_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
convert=$1 bin=$2 plugins=$3 src=$4 work=$5
/usr/bin/python3 -c 'import onnx, numpy' 2> /dev/null || { echo "SKIP: no python3-onnx"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
expect() { grep -Eq -- "$1" "$2" || fail "'$1' not in $2"; }

/usr/bin/python3 "$src/examples/custom_op/make_cumsum_model.py" model > /dev/null
if "$convert" model/cumsum.onnx -o plain.rknn > convert_plain.log 2>&1; then fail "CumSum converted without --custom-op"; fi
"$convert" model/cumsum.onnx -o fp16.rknn --custom-op CumSum > convert_fp16.log
expect 'Custom:CumSum 1' convert_fp16.log
"$convert" model/cumsum.onnx -o int8.rknn --dtype int8 --dataset model/calibration.txt \
  --custom-op-plugin "$plugins/librkcst_cumsum.so" > convert_int8.log
expect '^output 0: "y" int8' convert_int8.log

for model in fp16 int8; do
  echo "== rknn_benchmark $model.rknn with librkcst_cumsum.so"
  mkdir -p "run_$model" && cd "run_$model"
  RKNN_LOAD_CSTOP_PLUGINS=1 RKNN_CSTOP_PLUGIN_DIR="$plugins" "$bin/rknn_benchmark" "../$model.rknn" ../model/test_x_nhwc.npy 2 \
    > bench.txt 2>&1 || { cat bench.txt; fail "rknn_benchmark $model.rknn"; }
  expect '^Avg Time [0-9.]+ms' bench.txt
  bar=0.999
  [ "$model" = int8 ] && bar=0.99
  /usr/bin/python3 - "$bar" <<'PY'
import sys
import numpy as np
got = np.load("rt_output0.npy").astype(np.float64).ravel()
want = np.load("../model/test_y.npy").astype(np.float64).ravel()
cos = float(got @ want / (np.linalg.norm(got) * np.linalg.norm(want)))
print(f"cosine vs NumPy: {cos:.6f}")
sys.exit(0 if cos >= float(sys.argv[1]) else 1)
PY
  cd ..
done
echo "custom op plugin example ok"
