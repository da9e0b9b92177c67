#!/usr/bin/env bash
# Installs the build into a scratch prefix and builds a C client against the
# installed package twice: through find_package(rknnrt CONFIG) and through
# pkg-config. Both clients must run.
# usage: run_install_test.sh BUILD_DIR CLIENT_SOURCE_DIR SCRATCH_DIR C_COMPILER
set -euo pipefail
build=$1 client_src=$2 scratch=$3 cc=$4
prefix=$scratch/prefix
rm -rf "$scratch"
mkdir -p "$scratch"

cmake --install "$build" --prefix "$prefix" > "$scratch/install.log"
for f in include/rknn_api.h include/rknn_matmul_api.h include/rknn_custom_op.h; do
  [ -f "$prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
lib=$(find "$prefix" -name librknnrt.so | head -n 1)
[ -n "$lib" ] || { echo "FAIL: librknnrt.so not installed"; exit 1; }
echo "installed $lib"

echo "== find_package(rknnrt CONFIG)"
cmake -S "$client_src" -B "$scratch/cmake-client" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$prefix" > "$scratch/cmake-client.log"
cmake --build "$scratch/cmake-client" > "$scratch/cmake-build.log"
"$scratch/cmake-client/client"

echo "== pkg-config librknnrt"
pcdir=$(dirname "$(find "$prefix" -name librknnrt.pc | head -n 1)")
export PKG_CONFIG_PATH=$pcdir
echo "pkg-config --cflags --libs librknnrt: $(pkg-config --cflags --libs librknnrt)"
# shellcheck disable=SC2046
"$cc" -std=c99 -Wall -Wextra -Werror "$client_src/client.c" -o "$scratch/pc-client" \
  $(pkg-config --cflags --libs librknnrt) -Wl,-rpath,"$(dirname "$lib")"
"$scratch/pc-client"

# The Python modules, where the build has them: importable from the prefix,
# rknnlite's extension loading the installed librknnrt.so.
if compgen -G "$build/python/rknnlite/api/_rknnlite*.so" > /dev/null; then
  echo "== python3: from rknnlite.api import RKNNLite"
  site=$(dirname "$(find "$prefix" -path '*/rknnlite/__init__.py' | head -n 1)")
  [ "$site" != . ] || { echo "FAIL: the rknnlite package is not installed"; exit 1; }
  PYTHONPATH=$(dirname "$site") LD_LIBRARY_PATH=$(dirname "$lib") /usr/bin/python3 - "$prefix" <<'PY'
import os, sys
from rknnlite.api import RKNNLite, _rknnlite
prefix = os.path.realpath(sys.argv[1])
module = os.path.realpath(_rknnlite.__file__)
assert module.startswith(prefix), "imported %s, not the installed module" % module
with open("/proc/self/maps") as maps:
    libs = {line.split()[-1] for line in maps if line.rstrip().endswith("librknnrt.so")}
assert libs and all(os.path.realpath(l).startswith(prefix) for l in libs), "librknnrt.so loaded from %s" % libs
assert RKNNLite().list_support_target_platform()["RK3588"] == ["RK3588", "RK3588S"]
print("rknnlite imported from %s with %s" % (module, sorted(libs)))
try:
    from rknn.api import RKNN, _rknn_convert
except ImportError:
    sys.exit(0)  # a build without the converter has no rknn module
converter = os.path.realpath(_rknn_convert.__file__)
assert converter.startswith(prefix), "imported %s, not the installed module" % converter
assert _rknn_convert.version().startswith("rknn_convert "), _rknn_convert.version()
print("rknn imported from %s (%s)" % (converter, _rknn_convert.version()))
PY
fi
