#!/usr/bin/env bash
# Checks the shipped librknnrt.so as a client sees it:
#   - the defined dynamic symbols are exactly the rknn_* functions of
#     expected_exports.txt (abi-facts.md 6.1-6.4), all plain GLOBAL FUNC;
#   - no symbol versioning; SONAME librknnrt.so;
#   - the "librknnrt version: X.Y.Z (hash@time)" marker is in the file.
# usage: check_exports.sh LIB EXPECTED_LIST NM READELF
set -euo pipefail
lib=$1 expected=$2 nm=$3 readelf=$4
fail=0

actual_functions=$("$nm" -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort)
if ! diff <(sort "$expected") <(echo "$actual_functions"); then
  echo "FAIL: exported functions differ from $expected (< expected, > actual)"
  fail=1
fi
others=$("$nm" -D --defined-only "$lib" | awk '$2 != "T" { print $2, $3 }')
if [ -n "$others" ]; then
  echo "FAIL: unexpected exported symbols:"; echo "$others"
  fail=1
fi
echo "exported functions: $(echo "$actual_functions" | wc -l) (expected $(wc -l < "$expected"))"

if "$readelf" -S "$lib" | grep -q 'gnu.version_d'; then
  echo "FAIL: the library defines symbol versions; the vendor library has none"
  fail=1
fi
soname=$("$readelf" -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
echo "SONAME: $soname"
[ "$soname" = "librknnrt.so" ] || { echo "FAIL: SONAME is '$soname'"; fail=1; }

marker=$(strings "$lib" | grep 'librknnrt version' || true)
echo "marker: $marker"
if [ "$(echo "$marker" | grep -c .)" != 1 ]; then
  echo "FAIL: the marker must appear exactly once (tools read a single line)"
  fail=1
fi
if ! echo "$marker" | grep -Eq '^librknnrt version: [0-9]+\.[0-9]+\.[0-9]+ \([0-9a-z]+@[0-9T:-]+\)$'; then
  echo "FAIL: no well-formed 'librknnrt version:' string"
  fail=1
fi
# rknn_server extracts the version exactly like this.
version=$(strings "$lib" | grep "librknnrt version" | awk -F 'version: ' '{print $2}')
echo "rknn_server would read: $version"
[ -n "$version" ] || fail=1
exit $fail
