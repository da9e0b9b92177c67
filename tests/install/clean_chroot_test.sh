#!/usr/bin/env bash
# Installs the Debian packages on a clean Debian 12: a fresh bookworm chroot made
# with debootstrap, where `apt-get install ./*.deb` fetches every dependency from
# the mirror. Then, inside it:
#   - a C client builds with CMake (find_package(rknnrt)) and with pkg-config, and runs;
#   - rknn_convert converts a small model and rknn_benchmark runs it;
#   - python3 imports rknnlite and rknn and runs the model.
# Needs root, debootstrap and the network, and takes minutes: it is run by hand
# (docs/install.md), not by ctest.
# usage: clean_chroot_test.sh PACKAGES_DIR [WORK_DIR] [MIRROR]
set -euo pipefail
packages=$(realpath "$1")
work=${2:-/tmp/openrknn-chroot}
mirror=${3:-http://deb.debian.org/debian}
source=$(realpath "$(dirname "$0")/../..")
[ "$(id -u)" = 0 ] || { echo "needs root (chroot, mount)"; exit 2; }
command -v debootstrap > /dev/null || { echo "needs debootstrap (apt-get install debootstrap)"; exit 2; }
compgen -G "$packages/*_amd64.deb" > /dev/null || { echo "no amd64 packages in $packages"; exit 2; }

root=$work/root
cleanup() { umount "$root/proc" 2> /dev/null || true; }
trap cleanup EXIT
if [ ! -x "$root/usr/bin/apt-get" ]; then
  rm -rf "$root"
  mkdir -p "$work"
  echo "== debootstrap bookworm into $root"
  debootstrap --variant=minbase bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
fi
mount -t proc proc "$root/proc"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive "$@"; }

rm -rf "$root/tmp/openrknn" && mkdir -p "$root/tmp/openrknn/debs"
cp "$packages"/*_amd64.deb "$root/tmp/openrknn/debs/"
cp -r "$source/tests/install/client" "$root/tmp/openrknn/client"
/usr/bin/python3 -c "
import sys; sys.path.insert(0, '$source/tests/python')
import small_models; small_models.conv_relu_onnx('$root/tmp/openrknn/conv.onnx', 16, 16)"

echo "== apt-get install ./*.deb"
in_root apt-get update -qq
in_root sh -c 'apt-get install -y -qq /tmp/openrknn/debs/*.deb' > "$work/install.log" 2>&1 ||
  { tail -30 "$work/install.log"; exit 1; }
in_root dpkg-query -W -f='${Package} ${Version} ${Status}\n' librknnrt librknnrt-dev rknn-tools python3-rknnlite \
  python3-openrknn-toolkit

echo "== tools"
in_root rknn_convert /tmp/openrknn/conv.onnx -o /tmp/openrknn/conv.rknn -q
in_root sh -c 'cd /tmp/openrknn && rknn_benchmark conv.rknn "" 3' | grep -i "avg"

echo "== python3"
in_root python3 -c "
import numpy as np
from rknnlite.api import RKNNLite
from rknn.api import RKNN
lite = RKNNLite()
assert lite.load_rknn('/tmp/openrknn/conv.rknn') == 0 and lite.init_runtime() == 0
out = lite.inference([np.ones((1, 16, 16, 3), np.float32)])
rknn = RKNN()
assert rknn.load_onnx('/tmp/openrknn/conv.onnx') == 0 and rknn.build(do_quantization=False) == 0
assert rknn.init_runtime() == 0
same = np.array_equal(rknn.inference([np.ones((1, 16, 16, 3), np.float32)])[0], out[0])
print('RKNNLite ran the model:', out[0].shape, '; RKNN built and ran it, the same outputs:', same)
assert same"

echo "== a C client (CMake and pkg-config)"
in_root apt-get install -y -qq --no-install-recommends gcc libc6-dev cmake make pkg-config > "$work/build-tools.log" 2>&1 ||
  { tail -20 "$work/build-tools.log"; exit 1; }
in_root sh -c 'cmake -S /tmp/openrknn/client -B /tmp/openrknn/build > /dev/null && cmake --build /tmp/openrknn/build > /dev/null &&
  /tmp/openrknn/build/client > /dev/null 2>&1 && echo "find_package(rknnrt CONFIG): built and ran"'
in_root sh -c 'cc -std=c99 /tmp/openrknn/client/client.c -o /tmp/openrknn/pc-client $(pkg-config --cflags --libs librknnrt) &&
  /tmp/openrknn/pc-client > /dev/null 2>&1 && echo "pkg-config librknnrt: built and ran"'
echo "== the packages install and work on a clean Debian 12"
