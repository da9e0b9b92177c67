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
