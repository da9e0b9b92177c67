#!/bin/bash
# Interleaved rounds of ONNX Runtime (float32, ort_bench.js) and rknn_benchmark
# (our runtime on the mock) on one model, and the ratio of their medians:
# each round times ORT, then ours, so slow phases of a noisy host hit both.
#
#   versus_ort.sh MODEL.onnx MODEL.rknn INPUT.npy [ROUNDS] [--shape name=1,3,H,W]
#
# Needs onnxruntime-node on NODE_PATH (scripts/fetch_models.sh installs it in
# ~/.cache/openrknn) and the build's rknn_benchmark (RKNN_BENCHMARK overrides
# build/examples/rknn_benchmark). Both sides use 2 threads by default
# (THREADS, and RKNN_HOST_THREADS for ours) and 30 timed runs a round (RUNS).
# Prints each round, then the medians over rounds and the ratio's median and
# range.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
onnx=$1 rknn=$2 input=$3
rounds=${4:-5}
shape=()
if [ $# -ge 6 ] && [ "$5" = --shape ]; then shape=(--shape "$6"); fi
threads=${THREADS:-2}
runs=${RUNS:-30}
bench=${RKNN_BENCHMARK:-$here/../../build/examples/rknn_benchmark}
[ -x "$bench" ] || { echo "versus_ort: no rknn_benchmark at $bench" >&2; exit 2; }

median() { sort -n | awk '{v[NR] = $1} END {if (NR == 0) exit 1; print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

ort_all=() ours_all=() ratios=()
for ((i = 1; i <= rounds; ++i)); do
  ort=$(node "$here/ort_bench.js" "$onnx" --threads "$threads" --runs "$runs" "${shape[@]}" | grep -o 'median_ms=[0-9.]*' | cut -d= -f2)
  # rknn_benchmark prints every timed run after "Begin perf": their median.
  ours=$(RKNN_HOST_THREADS=$threads "$bench" "$rknn" "$input" "$runs" | sed -n '/Begin perf/,$p' |
         grep -o 'Elapse Time = [0-9.]*' | awk '{print $4}' | median)
  ratio=$(awk -v a="$ours" -v b="$ort" 'BEGIN {printf "%.3f", a / b}')
  echo "round $i: ort ${ort} ms, ours ${ours} ms, ours/ort ${ratio}"
  ort_all+=("$ort") ours_all+=("$ours") ratios+=("$ratio")
done
ort_med=$(printf '%s\n' "${ort_all[@]}" | median)
ours_med=$(printf '%s\n' "${ours_all[@]}" | median)
ratio_med=$(printf '%s\n' "${ratios[@]}" | median)
lo=$(printf '%s\n' "${ratios[@]}" | sort -n | head -1)
hi=$(printf '%s\n' "${ratios[@]}" | sort -n | tail -1)
echo "$(basename "$onnx"): ort ${ort_med} ms, ours ${ours_med} ms, ours/ort median ${ratio_med} (range ${lo}-${hi}, ${rounds} rounds)"
