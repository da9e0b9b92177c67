#!/bin/sh
# rknn_regdump from the outside: assemble -> dump --listing -> assemble gives
# the same bytes, strict and permissive exit codes, and every error exit.
#
#   regdump_cli_test.sh TOOL LISTING SCRATCH            the CLI checks
#   regdump_cli_test.sh TOOL --golden DIR SCRATCH       vendor captures decode
#                                                       strictly (77 = skipped)
set -u
tool=$1
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect STATUS DESCRIPTION COMMAND...: runs COMMAND, output in $scratch/out.
expect() {
    want=$1; what=$2; shift 2
    "$@" >"$scratch/out" 2>&1
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, wanted $want"
        sed 's/^/    /' "$scratch/out" | head -n 20
    fi
}

contains() {  # contains PATTERN DESCRIPTION: grep -F in the last output
    grep -qF -- "$1" "$scratch/out" || { fail "$2: output lacks '$1'"; sed 's/^/    /' "$scratch/out" | head -n 20; }
}

if [ "$2" = "--golden" ]; then
    derived=$3/allbilly-rk3588/derived
    scratch=$4
    mkdir -p "$scratch"
    if ! ls "$derived"/*.regcmd.u64le.bin >/dev/null 2>&1; then
        echo "SKIP: no vendor captures under $derived"
        exit 77
    fi
    files=0; words=0; tasks=0
    for bin in "$derived"/*.regcmd.u64le.bin; do
        expect 0 "strict dump of $(basename "$bin")" "$tool" "$bin"
        summary=$(grep '^summary:' "$scratch/out")
        echo "$(basename "$bin"): $summary"
        w=$(echo "$summary" | sed 's/summary: \([0-9]*\) words, \([0-9]*\) tasks.*/\1/')
        t=$(echo "$summary" | sed 's/summary: \([0-9]*\) words, \([0-9]*\) tasks.*/\2/')
        contains ", 0 invalid words" "strict dump of $(basename "$bin")"
        # Round trip through the listing.
        expect 0 "listing of $(basename "$bin")" "$tool" --listing "$bin"
        cp "$scratch/out" "$scratch/golden.txt"
        expect 0 "assemble listing of $(basename "$bin")" "$tool" --assemble "$scratch/golden.txt" -o "$scratch/golden.bin"
        cmp -s "$bin" "$scratch/golden.bin" || fail "round trip of $(basename "$bin") differs"
        files=$((files + 1)); words=$((words + w)); tasks=$((tasks + t))
    done
    echo "golden: $files captures, $words words, $tasks tasks, all strict-valid unless FAIL above"
    [ "$failures" -eq 0 ] && echo "PASS" || echo "$failures failures"
    [ "$failures" -eq 0 ]
    exit $?
fi

listing=$2
scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"

# ---- help
expect 0 "--help" "$tool" --help
for opt in --soc --offset --count --tasks --permissive --listing --assemble --output --help; do
    contains "$opt" "--help documents $opt"
done

# ---- assemble, dump back, assemble again
expect 0 "assemble the conv listing" "$tool" --assemble "$listing" -o "$scratch/conv.bin"
contains "assembled 126 words (1 tasks)" "assemble summary"
[ "$(wc -c <"$scratch/conv.bin")" -eq 1008 ] || fail "conv.bin is not 126 words"
expect 0 "listing of conv.bin" "$tool" --listing "$scratch/conv.bin"
grep -v '^# rknn_regdump' "$scratch/out" >"$scratch/conv1.txt"
expect 0 "re-assemble the printed listing" "$tool" --assemble "$scratch/conv1.txt" -o "$scratch/conv2.bin"
cmp -s "$scratch/conv.bin" "$scratch/conv2.bin" || fail "listing round trip changed the words"
expect 0 "listing of conv2.bin" "$tool" --listing "$scratch/conv2.bin"
grep -v '^# rknn_regdump' "$scratch/out" >"$scratch/conv2.txt"
cmp -s "$scratch/conv1.txt" "$scratch/conv2.txt" || fail "second listing differs from the first"

# ---- the default dump
expect 0 "dump conv.bin" "$tool" "$scratch/conv.bin"
contains "0x0201000000b11040  CNA.CBUF_CON0 = 0x000000B1" "dump line format"
contains "--- task 0 ends: enable 0x1d (CNA CORE DPU DPU_RDMA)" "task marker"
contains "summary: 126 words, 1 tasks, 0 invalid words, 0 words after the last task" "dump summary"
expect 0 "dump with --offset/--count" "$tool" --offset 122 --count 2 "$scratch/conv.bin"
contains "   122  0x0000000000000000  nop" "absolute indices"
contains "summary: 2 words, 0 tasks" "--count limits the words"
expect 0 "--offset at the end" "$tool" --offset=126 "$scratch/conv.bin"
contains "summary: 0 words" "empty range"

# Two tasks; --tasks 1 stops after the first.
cat "$listing" "$listing" >"$scratch/two.txt"
expect 0 "assemble two tasks" "$tool" --assemble "$scratch/two.txt" --output "$scratch/two.bin"
expect 0 "dump two tasks" "$tool" "$scratch/two.bin"
contains "--- task 1 ends" "second task marker"
contains "252 words, 2 tasks" "two-task summary"
expect 0 "--tasks 1" "$tool" --tasks 1 "$scratch/two.bin"
contains "126 words, 1 tasks" "--tasks 1 summary"
expect 0 "--tasks 1 --listing" "$tool" --tasks 1 --listing "$scratch/two.bin"
contains "# summary: 126 words, 1 tasks" "listing summary is a comment"

# ---- strict and permissive
printf 'CNA.CONV_CON1 = 1\nraw 0x0001000000001234\narm\nenable 0x1d\n' >"$scratch/bad.txt"
expect 0 "assemble a bad word" "$tool" --assemble "$scratch/bad.txt" -o "$scratch/bad.bin"
expect 1 "strict dump of a bad word" "$tool" "$scratch/bad.bin"
contains "INVALID: op field" "invalid word is marked"
contains "1 invalid words" "invalid count"
contains "error:" "strict reports an error"
contains "--- task 0 ends" "printing continues after the bad word"
expect 0 "permissive dump of a bad word" "$tool" --permissive "$scratch/bad.bin"
contains "warning:" "permissive warns"
expect 1 "strict listing of a bad word" "$tool" --listing "$scratch/bad.bin"
contains "raw 0x0001000000001234  # invalid:" "listing keeps the bad word"

printf 'DPU.0x40C8 = 1\narm\nenable 0x18\n' >"$scratch/unknown.txt"
expect 0 "assemble an untabled write" "$tool" --assemble "$scratch/unknown.txt" -o "$scratch/unknown.bin"
expect 1 "strict: unknown register is invalid" "$tool" "$scratch/unknown.bin"
contains "not in the register table" "unknown register reason"
expect 0 "permissive: unknown register is fine" "$tool" --permissive "$scratch/unknown.bin"
contains "DPU.0x40C8 = 0x00000001" "untabled write is shown"
expect 0 "--soc rv1106 still decodes" "$tool" --soc rv1106 --permissive "$scratch/unknown.bin"

# ---- error exits: never a crash, always 2 (or 1 for a bad listing)
printf 'nop\nCNA.CONV_CON1 CONV_MODE=16\n' >"$scratch/overflow.txt"
expect 1 "bad listing" "$tool" --assemble "$scratch/overflow.txt" -o "$scratch/x.bin"
contains "line 2:" "bad listing names the line"
contains "CONV_MODE" "bad listing names the field"
[ -e "$scratch/x.bin" ] && fail "a failed assembly wrote its output"
printf 'abc' >"$scratch/odd.bin"
expect 2 "size not a multiple of 8" "$tool" "$scratch/odd.bin"
contains "not a multiple of 8" "odd size message"
expect 2 "missing file" "$tool" "$scratch/does-not-exist.bin"
contains "does-not-exist.bin" "missing file is named"
expect 2 "directory" "$tool" "$scratch"
expect 2 "missing listing" "$tool" --assemble "$scratch/nope.txt" -o "$scratch/x.bin"
expect 2 "unwritable output" "$tool" --assemble "$listing" -o "$scratch/no/such/dir/x.bin"
expect 2 "no arguments" "$tool"
expect 2 "two streams" "$tool" "$scratch/conv.bin" "$scratch/conv.bin"
expect 2 "unknown option" "$tool" --frobnicate "$scratch/conv.bin"
expect 2 "missing option value" "$tool" "$scratch/conv.bin" --offset
expect 2 "bad count" "$tool" --count lots "$scratch/conv.bin"
expect 2 "negative offset" "$tool" --offset -1 "$scratch/conv.bin"
expect 2 "offset past the end" "$tool" --offset 127 "$scratch/conv.bin"
expect 2 "unknown soc" "$tool" --soc rk9999 "$scratch/conv.bin"
contains "rk3588" "unknown soc lists the known ones"
expect 2 "--assemble without -o" "$tool" --assemble "$listing"
expect 2 "--assemble with a dump option" "$tool" --assemble "$listing" -o "$scratch/x.bin" --listing
expect 2 "-o without --assemble" "$tool" -o "$scratch/x.bin" "$scratch/conv.bin"
expect 2 "value on a flag" "$tool" --listing=yes "$scratch/conv.bin"

[ "$failures" -eq 0 ] && echo "PASS" || echo "$failures failures"
[ "$failures" -eq 0 ]
