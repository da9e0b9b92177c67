#!/usr/bin/env bash
# The GPU custom op demo as a user runs it, on the mock device: the
# segmentation model written by make_segmentation_model.py, converted with
# its ArgMax kept as a custom op, run by rknn_custom_gpu_op_demo with the
# OpenCL ArgMax (PoCL's CPU device on a host) against NumPy's mask; then with
# no OpenCL platform (the runtime's CPU ArgMax stands in, with a warning);
# then rknn_benchmark with the op as a plugin (librkcst_argmax.so).
#
# usage: custom_gpu_op_demo_test.sh RKNN_CONVERT EXAMPLES_BIN_DIR PLUGIN_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
convert=$1 bin=$2 plugins=$3 src=$4 work=$5
/usr/bin/python3 -c 'import onnx, numpy' 2> /dev/null || { echo "SKIP: no python3-onnx"; exit 77; }
[ -x "$bin/rknn_custom_gpu_op_demo" ] || { echo "SKIP: built without OpenCL"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
expect() { grep -Eq -- "$1" "$2" || fail "'$1' not in $2"; }

/usr/bin/python3 "$src/examples/custom_op/make_segmentation_model.py" model > /dev/null
"$convert" model/segmentation.onnx -o seg.rknn --custom-op ArgMax > convert.log
expect 'Custom:ArgMax 1' convert.log

echo "== rknn_custom_gpu_op_demo on OpenCL"
RKNN_LOG_LEVEL=3 "$bin/rknn_custom_gpu_op_demo" seg.rknn model/test_image.npy model/test_mask.npy 0.99 > gpu.txt 2>&1 ||
  { cat gpu.txt; fail "the demo on OpenCL"; }
cat gpu.txt
if grep -q 'registered (GPU, ' gpu.txt; then
  expect '^mask agreement with the float reference: (0\.99|1\.000)' gpu.txt
else
  # No OpenCL platform on this host: the demo still ran, on the CPU kernel.
  expect 'OpenCL is not available' gpu.txt
  echo "SKIP: no OpenCL platform (install pocl-opencl-icd); the CPU stand-in ran"
  exit 77
fi

echo "== rknn_custom_gpu_op_demo with no OpenCL platform"
OCL_ICD_VENDORS=/nonexistent "$bin/rknn_custom_gpu_op_demo" seg.rknn model/test_image.npy model/test_mask.npy 0.99 \
  > cpu.txt 2>&1 || { cat cpu.txt; fail "the demo without OpenCL"; }
cat cpu.txt
expect "OpenCL is not available .*the runtime's CPU kernel of ArgMax runs instead" cpu.txt
expect '^mask agreement with the float reference: (0\.99|1\.000)' cpu.txt

echo "== rknn_benchmark with the op as a plugin"
RKNN_LOAD_CSTOP_PLUGINS=1 RKNN_CSTOP_PLUGIN_DIR="$plugins" "$bin/rknn_benchmark" seg.rknn "" 2 > bench.txt 2>&1 ||
  { cat bench.txt; fail "rknn_benchmark with librkcst_argmax.so"; }
expect '^Avg Time [0-9.]+ms' bench.txt
echo "GPU custom op demo ok"
