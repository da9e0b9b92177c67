#!/usr/bin/env bash
# A fuzzing campaign over every libFuzzer target (docs/reliability.md).
#
#   tools/fuzz_campaign.sh [-t SECONDS] [-j JOBS] [-b BUILD_DIR] [-o OUT_DIR]
#                          [--targets a,b,...] [--seconds-for TARGET=SECONDS]...
#                          [--update-corpus] [--report FILE]
#
# Builds the targets (clang, ASan+UBSan, -DRKNN_FUZZ=ON) in BUILD_DIR
# (default build-fuzz), then runs each for SECONDS (default 600) in
# libFuzzer's fork mode on JOBS processes (default: the cores; --seconds-for
# gives one target its own time: they run at very different speeds), starting from
# its checked-in corpus (tests/fuzz/<corpus>) plus generated seeds. Crashes,
# timeouts and OOMs do not stop a run; their inputs are kept in
# OUT_DIR/<target>/artifacts. Afterwards each target's corpus is merged and
# minimised into OUT_DIR/<target>/minimised; --update-corpus puts that in
# tests/fuzz/<corpus> in place of the last campaign's (its smallest inputs,
# up to 512 KiB; files there not named by a SHA-1 are regression inputs and
# stay). Paths are taken from the repository's root. --report writes the
# table (target, seconds, executions, coverage, corpus, crashes, timeouts,
# OOMs) between the campaign markers of FILE (docs/reliability.md).
# Progress: a bar per target on a terminal, a line a minute otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=600
jobs=$(nproc)
build=build-fuzz
out=""
only=""
update=0
report=""
declare -A seconds_for=()
while [ $# -gt 0 ]; do
  case "$1" in
    -t) seconds=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -b) build=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --targets) only=$2; shift 2 ;;
    --seconds-for)
      [[ "$2" =~ ^[a-z_]+=[0-9]+$ ]] || { echo "fuzz_campaign: --seconds-for takes TARGET=SECONDS" >&2; exit 2; }
      seconds_for[${2%%=*}]=${2##*=}; shift 2 ;;
    --update-corpus) update=1; shift ;;
    --report) report=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "fuzz_campaign: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
out=${out:-$build/campaign}
default_seconds=$seconds
case "$seconds$jobs" in *[!0-9]*) echo "fuzz_campaign: -t and -j take whole numbers" >&2; exit 2 ;; esac
[ "$seconds" -gt 0 ] && [ "$jobs" -gt 0 ] || { echo "fuzz_campaign: -t and -j must be above 0" >&2; exit 2; }
for name in "${!seconds_for[@]}"; do
  [ "${seconds_for[$name]}" -gt 0 ] || { echo "fuzz_campaign: --seconds-for $name must be above 0" >&2; exit 2; }
done
# A fuzzer left running in fork mode keeps its children: stop it with the script.
fuzzer_pid=""
trap '[ -n "$fuzzer_pid" ] && kill "$fuzzer_pid" 2> /dev/null; exit 130' INT TERM

# target:checked-in corpus
all_targets="model_loader_fuzzer:corpus onnx_import_fuzzer:onnx-corpus mock_ioctl_fuzzer:ioctl-corpus
io_convert_fuzzer:io-corpus api_sequence_fuzzer:api-corpus regcmd_stream_fuzzer:regcmd-corpus"

selected=()
for entry in $all_targets; do
  name=${entry%%:*}
  if [ -z "$only" ] || [[ ",$only," == *",$name,"* ]]; then selected+=("$entry"); fi
done
[ ${#selected[@]} -gt 0 ] || { echo "fuzz_campaign: no target matches --targets $only" >&2; exit 2; }

echo "fuzz_campaign: building the targets in $build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DRKNN_FUZZ=ON -DRKNN_SANITIZE=address,undefined \
    -DRKNN_BUILD_EXAMPLES=OFF -DRKNN_BUILD_BENCHMARKS=OFF > "$build.configure.log" 2>&1 ||
    { cat "$build.configure.log"; exit 1; }
fi
names=()
for entry in "${selected[@]}"; do names+=("${entry%%:*}"); done
cmake --build "$build" -j "$jobs" --target "${names[@]}" make_fuzz_seeds > "$build/campaign-build.log" 2>&1 ||
  { tail -40 "$build/campaign-build.log"; exit 1; }

# seed_corpus TARGET DIR: inputs generated at run time (not checked in).
seed_corpus() {
  case "$1" in
    model_loader_fuzzer) "$build/tests/fuzz/make_fuzz_seeds" "$2" > /dev/null ;;
    onnx_import_fuzzer) tests/fuzz/onnx_seeds.sh "$2" ;;
  esac
}

# The last status line of libFuzzer's fork mode: "#EXECS: cov: C ft: F corp: N exec/s E oom/timeout/crash: O/T/C time: S ..."
status_of() { grep -a -E '^#[0-9]+: cov:' "$1" | tail -1 || true; }
field() { sed -n -E "s/.*$2 *([0-9]+).*/\1/p" <<< "$1"; }

progress() {  # progress NAME START LOG SECONDS
  local now elapsed line execs cov crashes width=30 filled seconds=$4
  now=$(date +%s); elapsed=$((now - $2))
  line=$(status_of "$3"); execs=${line%%:*}; execs=${execs#\#}
  cov=$(field "$line" "cov:"); crashes=$(sed -n -E 's#.*oom/timeout/crash: *([0-9]+/[0-9]+/[0-9]+).*#\1#p' <<< "$line")
  if [ -t 1 ]; then
    filled=$((elapsed * width / seconds)); [ $filled -gt $width ] && filled=$width
    printf '\r  %-22s [%-*s] %4ds/%ds  execs %-10s cov %-6s oom/timeout/crash %s ' "$1" "$width" \
      "$(printf '%*s' "$filled" '' | tr ' ' '#')" "$elapsed" "$seconds" "${execs:-0}" "${cov:-0}" "${crashes:-0/0/0}"
  else
    echo "  $1: ${elapsed}s of ${seconds}s, execs ${execs:-0}, cov ${cov:-0}, oom/timeout/crash ${crashes:-0/0/0}"
  fi
}

mkdir -p "$out"
rows=()
total_execs=0
for entry in "${selected[@]}"; do
  name=${entry%%:*}
  checked_in=tests/fuzz/${entry##*:}
  seconds=${seconds_for[$name]:-$default_seconds}
  dir=$out/$name
  rm -rf "$dir/work" "$dir/minimised"
  mkdir -p "$dir/work" "$dir/artifacts" "$dir/minimised"
  seed_corpus "$name" "$dir/work"
  log=$dir/fuzz.log
  echo "fuzz_campaign: $name for ${seconds}s on $jobs processes (log: $log)"
  start=$(date +%s)
  "$build/tests/fuzz/$name" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=25 -artifact_prefix="$dir/artifacts/" \
    "$dir/work" "$checked_in" > "$log" 2>&1 &
  pid=$!
  fuzzer_pid=$pid
  last_line=$start
  while kill -0 "$pid" 2> /dev/null; do
    sleep 5
    now=$(date +%s)
    if [ -t 1 ] || [ $((now - last_line)) -ge 60 ]; then progress "$name" "$start" "$log" "$seconds"; last_line=$now; fi
  done
  wait "$pid" || true
  fuzzer_pid=""
  if [ -t 1 ]; then echo; fi
  line=$(status_of "$log")
  execs=${line%%:*}; execs=${execs#\#}; execs=${execs:-0}
  cov=$(field "$line" "cov:"); cov=${cov:-0}
  counts=$(sed -n -E 's#.*oom/timeout/crash: *([0-9]+)/([0-9]+)/([0-9]+).*#\1 \2 \3#p' <<< "$line")
  read -r ooms timeouts crashes <<< "${counts:-0 0 0}"
  [ "$execs" -gt 0 ] || echo "fuzz_campaign: $name: no executions counted (see $log)"
  # Merge what every job found into one minimal corpus.
  merged=1
  "$build/tests/fuzz/$name" -merge=1 -rss_limit_mb=4096 -timeout=25 "$dir/minimised" "$dir/work" "$checked_in" \
    > "$dir/merge.log" 2>&1 || { merged=0; echo "fuzz_campaign: $name: the merge failed (see $dir/merge.log)"; }
  corpus=$(find "$dir/minimised" -type f | wc -l)
  [ "$corpus" -gt 0 ] || merged=0
  artifacts=$(find "$dir/artifacts" -type f | wc -l)
  echo "fuzz_campaign: $name: $execs executions, coverage $cov, corpus $corpus, crashes $crashes, timeouts $timeouts, OOMs $ooms, $artifacts inputs kept"
  rows+=("| \`$name\` | $seconds | $execs | $cov | $corpus | $crashes | $timeouts | $ooms |")
  total_execs=$((total_execs + execs))
  if [ $update -eq 1 ] && [ $merged -eq 1 ]; then
    # The minimised corpus (files named by their SHA-1, as libFuzzer names
    # them) replaces the old one; named files are regression inputs and stay.
    # The smallest inputs go in first, up to 512 KiB a target (the repository
    # carries it).
    find "$checked_in" -maxdepth 1 -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
    find "$dir/minimised" -type f -printf '%s %p\n' | sort -n |
      awk '{ total += $1; if (total <= 524288) print $2 }' | xargs -r cp -t "$checked_in/"
    echo "fuzz_campaign: $checked_in now holds $(find "$checked_in" -type f | wc -l) inputs"
  fi
done
echo "fuzz_campaign: $total_execs executions in all"

if [ -n "$report" ]; then
  table=$(mktemp)
  {
    echo "Campaign of $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -m)), $jobs processes per target (tools/fuzz_campaign.sh):"
    echo
    echo "| target | seconds | executions | coverage (edges) | corpus | crashes | timeouts | OOMs |"
    echo "|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "$total_execs executions in all."
  } > "$table"
  begin='<!-- campaign-table:begin -->'
  end='<!-- campaign-table:end -->'
  if grep -q "$begin" "$report" && grep -q "$end" "$report"; then
    awk -v b="$begin" -v e="$end" -v t="$table" '
      $0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
      $0 == e { skip = 0 }
      !skip { print }' "$report" > "$report.new" && cat "$report.new" > "$report" && rm -f "$report.new" "$table"
    echo "fuzz_campaign: wrote the table into $report"
  else
    echo "fuzz_campaign: $report has no campaign markers; the table is in $table" >&2
  fi
fi
