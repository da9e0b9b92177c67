#!/usr/bin/env bash
# The tools and examples treat files as untrusted: corrupt images, .npy files
# whose headers lie, dataset lists naming missing files, truncated or random
# ONNX, model and regcmd files. Each must end with an error status (not a
# signal, no sanitizer report, the tool was found) and say why, never crash
# or succeed.
# usage: untrusted_files_test.sh RKNN_CONVERT RKNN_REGDUMP EXAMPLES_DIR ONNX_NODE_TESTS SCRATCH
set -uo pipefail
convert=$(realpath "$1") regdump=$(realpath "$2") examples=$(realpath "$3") suite=$4 scratch=$5
rm -rf "$scratch" && mkdir -p "$scratch"
cd "$scratch" || exit 1
fail=0
cases=0

# expect_error NAME COMMAND...: fails as a program (not by a signal) and says why.
expect_error() {
  local name=$1 status
  shift
  cases=$((cases + 1))
  "$@" > out.log 2>&1
  status=$?
  if [ $status -eq 0 ]; then
    echo "FAIL: $name: succeeded"; fail=1
  elif [ $status -gt 128 ] && [ $status -le 192 ]; then
    echo "FAIL: $name: killed by signal $((status - 128))"; tail -20 out.log; fail=1
  elif grep -q -E 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' out.log; then
    echo "FAIL: $name: a sanitizer report"; tail -30 out.log; fail=1
  elif [ $status -eq 126 ] || [ $status -eq 127 ]; then
    echo "FAIL: $name: could not run it (exit $status)"; tail -3 out.log; fail=1
  elif ! grep -q '[a-zA-Z]' out.log; then
    echo "FAIL: $name: exit status $status without a word of why"; fail=1
  else
    echo "ok: $name (exit $status: $(grep -m1 '[a-zA-Z]' out.log | cut -c1-100))"
  fi
}

# Files with lies in them (python3 from Debian writes the .npy headers).
head -c 3000 /dev/urandom > random.bin
printf '\x89PNG\r\n\x1a\n' > truncated.png && head -c 40 /dev/urandom >> truncated.png
printf '\xff\xd8\xff\xe0' > truncated.jpg && head -c 100 /dev/urandom >> truncated.jpg
head -c 500 /dev/urandom > random.jpg
/usr/bin/python3 - << 'EOF'
import struct
def npy(name, header, payload):
    header = header.ljust(118) + "\n"
    with open(name, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload)
npy("short_data.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 1000), }", b"\0" * 64)
npy("huge_shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", b"\0" * 64)
npy("negative_shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-3, 4), }", b"\0" * 64)
npy("bad_descr.npy", "{'descr': '<x9', 'fortran_order': False, 'shape': (3, 4, 5), }", b"\0" * 240)
npy("garbage_header.npy", "{'descr': '<f4', 'shape': ((((, ", b"\0" * 240)
with open("header_past_end.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", 60000) + b"{'descr'")
EOF

relu=$suite/test_relu/model.onnx
if [ -f "$relu" ]; then
  for data in short_data.npy huge_shape.npy negative_shape.npy bad_descr.npy garbage_header.npy header_past_end.npy \
              random.bin truncated.png truncated.jpg random.jpg; do
    echo "$data" > list.txt
    expect_error "rknn_convert --dataset with $data" "$convert" "$relu" -o out.rknn --dtype int8 --dataset list.txt
  done
  printf 'short_data.npy\nnot-there.npy\n' > missing.txt
  expect_error "rknn_convert --dataset naming a missing file" "$convert" "$relu" -o out.rknn --dtype int8 --dataset missing.txt
  mkdir -p images && cp truncated.png random.jpg images/
  expect_error "rknn_convert --dataset of corrupt images" "$convert" "$relu" -o out.rknn --dtype int8 --dataset images
  head -c 50 "$relu" > truncated.onnx
  expect_error "rknn_convert on a truncated ONNX file" "$convert" truncated.onnx -o out.rknn
  "$convert" "$relu" -o relu.rknn > /dev/null 2>&1 || { echo "FAIL: the fp16 relu model does not convert"; fail=1; }
else
  echo "SKIP: $relu is missing (libonnx-testdata); the converter's cases are left out"
fi
expect_error "rknn_convert on random bytes" "$convert" random.bin -o out.rknn
expect_error "rknn_regdump on random bytes" "$regdump" random.bin
head -c 3 random.bin > tiny.bin
expect_error "rknn_regdump on 3 bytes" "$regdump" tiny.bin
expect_error "rknn_benchmark on a random model" "$examples/rknn_benchmark" random.bin
expect_error "rknn_classify on a random model" "$examples/rknn_classify" random.bin truncated.png
if [ -f relu.rknn ]; then
  head -c 200 relu.rknn > truncated.rknn
  expect_error "rknn_benchmark on a truncated model" "$examples/rknn_benchmark" truncated.rknn
  for data in short_data.npy huge_shape.npy garbage_header.npy header_past_end.npy; do
    expect_error "rknn_benchmark with input $data" "$examples/rknn_benchmark" relu.rknn "$data" 1
  done
fi
echo "$cases cases"
exit $fail
