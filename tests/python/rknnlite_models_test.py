#!/usr/bin/python3
"""RKNNLite against the C API on real models: mobilenet_v2 (int8, torchvision's
architecture from the test-model export) and the pretrained PP-OCRv4 detector
(int8 and float16, 480x480). For each, RKNNLite.inference's outputs must be the
same bytes as rknn_benchmark's (the C API, want_float), from the same pixels;
the detector also from NCHW pixels.

usage: rknnlite_models_test.py BUILD_DIR WORK_DIR TEST_MODELS_DIR
Exit 77 (skipped) when neither model is at hand."""
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

from rknnlite.api import RKNNLite

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD, WORK, TEST_MODELS = sys.argv[1:4]
CONVERT = os.path.join(BUILD, "tools/rknn_convert/rknn_convert")
BENCHMARK = os.path.join(BUILD, "examples/rknn_benchmark")
IMAGENET = ["--mean", "123.675,116.28,103.53", "--std", "58.395,57.12,57.375"]


def convert(onnx_path, out, *options):
    subprocess.run([CONVERT, onnx_path, "-o", out, "-q"] + list(options), check=True)
    return out


def c_api_outputs(model, pixels_npy, count):
    """rknn_benchmark's outputs (float32) for one run on the .npy pixels."""
    run_dir = os.path.join(WORK, "benchmark-" + os.path.basename(model))
    os.makedirs(run_dir, exist_ok=True)
    subprocess.run([BENCHMARK, model, pixels_npy, "1"], cwd=run_dir, check=True, stdout=subprocess.DEVNULL)
    return [np.load(os.path.join(run_dir, "rt_output%d.npy" % i)) for i in range(count)]


def compare(name, model, pixels, also_nchw=False):
    npy = os.path.join(WORK, name + "_pixels.npy")
    np.save(npy, pixels)
    lite = RKNNLite()
    if lite.load_rknn(model) != 0 or lite.init_runtime() != 0:
        sys.exit("%s: RKNNLite could not load the model" % name)
    outputs = lite.inference(inputs=[pixels])
    if outputs is None:
        sys.exit("%s: RKNNLite.inference failed" % name)
    expected = c_api_outputs(model, npy, len(outputs))
    forms = [("nhwc", outputs)]
    if also_nchw:
        forms.append(("nchw", lite.inference(inputs=[pixels.transpose(0, 3, 1, 2)], data_format=["nchw"])))
    lite.release()
    if all(np.ptp(a) == 0 for a in outputs):
        sys.exit("%s: every output is constant; the comparison would say nothing" % name)
    for form, got in forms:
        for k, (a, b) in enumerate(zip(got, expected)):
            if a.size != b.size or not np.array_equal(a.ravel(), b.ravel()):
                sys.exit("%s (%s input) output %d: RKNNLite %s differs from the C API's %s (max |diff| %s)" %
                         (name, form, k, a.shape, b.shape,
                          np.abs(a.ravel() - b.ravel()).max() if a.size == b.size else "n/a"))
        print("%-10s %-5s: %d output(s) %s, the same bytes as the C API" %
              (name, form, len(got), [tuple(a.shape) for a in got]))


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    ran = 0
    mobilenet = os.path.join(TEST_MODELS, "mobilenet_v2.onnx")
    if os.path.exists(mobilenet):
        model = convert(mobilenet, os.path.join(WORK, "mobilenet_v2_int8.rknn"), "--dtype", "int8", "--dataset",
                        os.path.join(TEST_MODELS, "images"), *IMAGENET)
        compare("mobilenet_v2", model, np.load(os.path.join(TEST_MODELS, "mobilenet_v2_input.npy")))
        ran += 1
    else:
        print("mobilenet_v2: not exported (no torch?); skipped")
    fetch = subprocess.run([os.path.join(ROOT, "scripts/fetch_models.sh"), "--models-only"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if fetch.returncode == 0:
        cache = subprocess.run([os.path.join(ROOT, "scripts/fetch_models.sh"), "--print-dir"],
                               stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
        det = os.path.join(cache, "ocr-models-1.4.2", "ch_PP-OCRv4_det_infer.onnx")
        page = Image.open(os.path.join(ROOT, "examples/data/ocr_page.png")).convert("RGB").resize((480, 480))
        pixels = np.asarray(page, dtype=np.uint8)[None]
        shape = ["--input-shapes", "1,3,480,480"]
        fp16 = convert(det, os.path.join(WORK, "det_fp16.rknn"), "--dtype", "fp16", *shape, *IMAGENET)
        calibration = os.path.join(WORK, "det_calibration.txt")
        with open(calibration, "w") as f:
            f.write("".join(os.path.join(ROOT, "examples/data", n) + "\n" for n in ("ocr_page.png", "test_image.png")))
        int8 = convert(det, os.path.join(WORK, "det_int8.rknn"), "--dtype", "int8", "--dataset", calibration,
                       *shape, *IMAGENET)
        compare("det_fp16", fp16, pixels, also_nchw=True)
        compare("det_int8", int8, pixels, also_nchw=True)
        ran += 1
    elif fetch.returncode == 1:
        print("PP-OCRv4: not cached and cannot be fetched; skipped\n" + fetch.stdout)
    else:
        sys.exit("fetch_models.sh failed:\n" + fetch.stdout)
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
