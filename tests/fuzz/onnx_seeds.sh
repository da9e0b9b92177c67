#!/usr/bin/env bash
# Seeds for the ONNX importer's fuzz target, written into DIR: the exporter
# forms (tests/models/exporter_forms.py) and up to 400 models of the ONNX node
# test suite (libonnx-testdata), when it is installed.
# usage: onnx_seeds.sh DIR
set -euo pipefail
dir=$1
here=$(dirname "$0")
/usr/bin/python3 "$here/../models/exporter_forms.py" write "$dir" > /dev/null
suite=/usr/share/libonnx-testdata/data/node
[ -d "$suite" ] || exit 0
i=0
while IFS= read -r model; do
  cp "$model" "$dir/node_$i.onnx"
  i=$((i + 1))
done < <(find "$suite" -name model.onnx | sort | head -400)
