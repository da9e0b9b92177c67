#!/usr/bin/env bash
# The matmul demos as a user runs them, on the mock device: every type and
# layout combination rknn_matmul_api_demo offers on RK3588 and on RK3568
# (RKNN_MOCK_SOC), each checking its result against its CPU reference, a
# multi-core mask, and the dynamic-shape demo with B bound once (M varies)
# and with B bound per shape (K and N vary, TP_NORM).
#
# usage: matmul_demo_test.sh EXAMPLES_BIN_DIR WORK_DIR
set -euo pipefail
bin=$1 work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
runs=0

demo() {  # SOC ARGS...
  local soc=$1; shift
  RKNN_MOCK_SOC=$soc "$bin/rknn_matmul_api_demo" "$@" > out.txt 2>&1 || { cat out.txt; fail "$soc: $*"; }
  grep -q 'matmul result is correct' out.txt || { cat out.txt; fail "$soc: $*: no correct result"; }
  runs=$((runs + 1))
}

for type in 1 2 3 4 9 10; do
  shape=4,64,32; [ "$type" = 10 ] && shape=4,64,64
  for b in 0 1 2; do
    for ac in 0 1; do demo rk3588 "$type" "$shape" "$b" "$ac" 2; done
  done
done
demo rk3588 2 33,8256,64 1 1 1 7 # K segments of B, all three cores
demo rk3588 1 17,256,4096 2 0 1 3 # N at its limit, cores 0 and 1
for type in 1 2; do
  for b in 0 1; do
    for ac in 0 1; do demo rk3568 "$type" 4,64,32 "$b" "$ac"; done
  done
done
demo rk3562 2 4,64,32 2 1
echo "rknn_matmul_api_demo: $runs runs correct"

# Refused where the SoC table says no: TP_NORM on RK3568, int4 on RK3568.
if RKNN_MOCK_SOC=rk3568 "$bin/rknn_matmul_api_demo" 2 4,64,32 2 0 > refused.txt 2>&1; then fail "TP_NORM ran on rk3568"; fi
grep -q 'TP_NORM does not run on rk3568' refused.txt || { cat refused.txt; fail "no reason for TP_NORM"; }
if RKNN_MOCK_SOC=rk3568 "$bin/rknn_matmul_api_demo" 10 4,64,64 > refused.txt 2>&1; then fail "int4 ran on rk3568"; fi
grep -q 'does not run on rk3568' refused.txt || { cat refused.txt; fail "no reason for int4"; }

"$bin/rknn_matmul_api_dynshape_demo" 2 '1,64,32#4,64,32#8,64,32' 1 1 | tee dyn_const.txt
[ "$(grep -c 'result is correct' dyn_const.txt)" = 3 ] || fail "feature + const"
"$bin/rknn_matmul_api_dynshape_demo" 1 '1,64,32#4,128,64#8,256,96' 2 0 2 | tee dyn_feature.txt
[ "$(grep -c 'result is correct' dyn_feature.txt)" = 3 ] || fail "two features"
echo "matmul demos ok"
