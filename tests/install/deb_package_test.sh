#!/usr/bin/env bash
# Builds the Debian packages of a build (cpack -G DEB) and checks them:
#   - the packages the build has components for, each with its Depends;
#   - apt-get resolves installing them all (--simulate: nothing is changed);
#   - unpacked into a scratch root, they work as installed: /usr/lib/librknnrt.so,
#     a C client built with CMake and with pkg-config, rknn_convert and
#     rknn_benchmark on a small model, and Python importing both modules and
#     running that model.
# usage: deb_package_test.sh BUILD_DIR CLIENT_SOURCE_DIR SCRATCH_DIR C_COMPILER SOURCE_DIR
set -euo pipefail
build=$(realpath "$1") client_src=$2 scratch=$3 cc=$4 source=$5
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")

command -v dpkg-deb > /dev/null || { echo "SKIP: dpkg-deb is not installed"; exit 77; }
(cd "$build" && cpack -G DEB -B "$scratch/packages" > "$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log"; exit 1; }
rm -rf "$scratch/packages/_CPack_Packages"
cd "$scratch/packages"
expected=(librknnrt librknnrt-dev)
[ -x "$build/tools/rknn_convert/rknn_convert" ] && expected+=(rknn-tools)
compgen -G "$build/python/rknnlite/api/_rknnlite*.so" > /dev/null && expected+=(python3-rknnlite)
compgen -G "$build/python/rknn/api/_rknn_convert*.so" > /dev/null && expected+=(python3-openrknn-toolkit)
for package in "${expected[@]}"; do
  deb=$(ls "${package}"_*.deb 2> /dev/null | head -n 1)
  [ -n "$deb" ] || { echo "FAIL: no $package package"; ls; exit 1; }
  echo "$deb: Depends: $(dpkg-deb -f "$deb" Depends)"
done
[ "$(ls ./*.deb | wc -l)" = "${#expected[@]}" ] || { echo "FAIL: unexpected packages:"; ls; exit 1; }
# dpkg-shlibdeps ran: the library depends on the libraries it links.
dpkg-deb -f librknnrt_*.deb Depends | grep -q "libdrm2" ||
  { echo "FAIL: librknnrt does not depend on libdrm2 (was dpkg-shlibdeps there?)"; exit 1; }

echo "== apt-get install --simulate ./*.deb"
apt-get install --simulate ./*.deb > "$scratch/apt.log" 2>&1 || { cat "$scratch/apt.log"; exit 1; }
echo "packages apt would install: $(grep -c "^Inst " "$scratch/apt.log" || true)"

echo "== unpacked into $scratch/root"
for deb in ./*.deb; do dpkg-deb -x "$deb" "$scratch/root"; done
usr=$scratch/root/usr
lib=$(dirname "$(find "$usr/lib" -name librknnrt.so -type f | head -n 1)")
[ -L "$usr/lib/librknnrt.so" ] || [ "$lib" = "$usr/lib" ] || { echo "FAIL: no /usr/lib/librknnrt.so"; exit 1; }
[ "$(realpath "$usr/lib/librknnrt.so")" = "$(realpath "$lib/librknnrt.so")" ] || { echo "FAIL: /usr/lib/librknnrt.so"; exit 1; }
echo "library: ${lib#"$scratch/root"}/librknnrt.so, and /usr/lib/librknnrt.so"
export LD_LIBRARY_PATH=$lib

cmake -S "$client_src" -B "$scratch/cmake-client" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$usr" \
  > "$scratch/cmake-client.log"
cmake --build "$scratch/cmake-client" > "$scratch/cmake-build.log"
"$scratch/cmake-client/client" > /dev/null
# shellcheck disable=SC2046
"$cc" -std=c99 -Wall -Werror "$client_src/client.c" -o "$scratch/pc-client" \
  $(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs librknnrt)
"$scratch/pc-client" > /dev/null
echo "C clients built with find_package(rknnrt) and with pkg-config: ran"

[ -x "$usr/bin/rknn_convert" ] || exit 0
/usr/bin/python3 -c "
import sys; sys.path.insert(0, '$source/tests/python')
import small_models; small_models.conv_relu_onnx('$scratch/conv.onnx', 16, 16)"
"$usr/bin/rknn_convert" "$scratch/conv.onnx" -o "$scratch/conv.rknn" -q
(cd "$scratch" && "$usr/bin/rknn_benchmark" conv.rknn "" 2 > benchmark.log) || { cat "$scratch/benchmark.log"; exit 1; }
echo "rknn_convert and rknn_benchmark: $(grep -m1 -i "avg" "$scratch/benchmark.log" || tail -n 1 "$scratch/benchmark.log")"

[ -d "$usr/lib/python3/dist-packages/rknn" ] || exit 0
PYTHONPATH=$usr/lib/python3/dist-packages /usr/bin/python3 -c "
import numpy as np, os
from rknnlite.api import RKNNLite, _rknnlite
from rknn.api import RKNN, _rknn_convert
for m in (_rknnlite, _rknn_convert):
    assert os.path.realpath(m.__file__).startswith('$scratch/root/'), m.__file__
lite = RKNNLite()
assert lite.load_rknn('$scratch/conv.rknn') == 0 and lite.init_runtime() == 0
out = lite.inference([np.ones((1, 16, 16, 3), np.float32)])
assert out[0].shape == (1, 4, 16, 16), out[0].shape
print('python3: rknnlite and rknn imported from the packages; a run gave', out[0].shape)"
