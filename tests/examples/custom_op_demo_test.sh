#!/usr/bin/env bash
# The custom op demo as a user runs it, on the mock device: the model written
# by make_dual_residual_model.py, converted to float16 (--custom-op) and to
# int8 (--custom-op-plugin, so that calibration runs the op), run by
# rknn_custom_op_demo against NumPy's float outputs; then rknn_benchmark,
# which knows nothing of custom ops, with and without RKNN_LOAD_CSTOP_PLUGINS.
#
# usage: custom_op_demo_test.sh RKNN_CONVERT EXAMPLES_BIN_DIR PLUGIN_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
convert=$1 bin=$2 plugins=$3 src=$4 work=$5
/usr/bin/python3 -c 'import onnx, numpy' 2> /dev/null || { echo "SKIP: no python3-onnx"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
expect() { grep -Eq -- "$1" "$2" || fail "'$1' not in $2"; }

/usr/bin/python3 "$src/examples/custom_op/make_dual_residual_model.py" model > /dev/null
"$convert" model/dual_residual.onnx -o fp16.rknn --custom-op cstDualResidual > convert_fp16.log
expect 'Custom:cstDualResidual 1' convert_fp16.log
"$convert" model/dual_residual.onnx -o int8.rknn --dtype int8 --dataset model/calibration.txt \
  --custom-op-plugin "$plugins/librkcst_dual_residual.so" > convert_int8.log
expect '^output 0: "y0" int8' convert_int8.log

echo "== rknn_custom_op_demo fp16.rknn"
"$bin/rknn_custom_op_demo" fp16.rknn model/test_in0.npy model/test_in1.npy model/test_expected0.npy \
  model/test_expected1.npy 0.999 | tee demo_fp16.txt
expect '^output 1 cosine vs the float reference: (0\.999|1\.000)' demo_fp16.txt
echo "== rknn_custom_op_demo int8.rknn"
"$bin/rknn_custom_op_demo" int8.rknn model/test_in0.npy model/test_in1.npy model/test_expected0.npy \
  model/test_expected1.npy 0.99 | tee demo_int8.txt
expect '^output 0 cosine vs the float reference: (0\.99|1\.000)' demo_int8.txt

echo "== rknn_benchmark int8.rknn without and with plugins"
if "$bin/rknn_benchmark" int8.rknn "" 1 > bench_none.txt 2>&1; then fail "ran without the op registered"; fi
expect "not registered: 'cstDualResidual'" bench_none.txt
RKNN_LOAD_CSTOP_PLUGINS=1 RKNN_CSTOP_PLUGIN_DIR="$plugins" "$bin/rknn_benchmark" int8.rknn "" 2 > bench.txt 2>&1 ||
  { cat bench.txt; fail "rknn_benchmark with the plugin"; }
expect '^Avg Time [0-9.]+ms' bench.txt
echo "custom op demo ok"
