#!/usr/bin/python3
"""The Python modules on real models.
  - RKNNLite against the C API: mobilenet_v2 (int8, torchvision's architecture
    from the test-model export) and the pretrained PP-OCRv4 detector (int8 and
    float16, 480x480). RKNNLite.inference's outputs must be the same bytes as
    rknn_benchmark's (the C API, want_float) from the same pixels; the
    detector's also from NCHW pixels.
  - Scripts written as users write them, run unchanged: the model-zoo-style
    examples/python/convert.py (rknn.api.RKNN) must write the bytes
    rknn_convert writes with the same settings, and the Lite2-style
    examples/python/classify_lite.py must print the C API's top 5.

usage: python_models_test.py BUILD_DIR WORK_DIR TEST_MODELS_DIR
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
    if any(got is None for _, got in forms):
        sys.exit("%s: RKNNLite.inference from NCHW pixels failed" % name)
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


def user_scripts(onnx_path):
    """convert.py and classify_lite.py as a user runs them, from the work folder."""
    images = sorted(os.path.join(TEST_MODELS, "images", n) for n in os.listdir(os.path.join(TEST_MODELS, "images")))
    with open(os.path.join(WORK, "dataset.txt"), "w") as f:
        f.write("".join(p + "\n" for p in images[:8]))
    examples = os.path.join(ROOT, "examples/python")
    env = dict(os.environ, DATASET_PATH=os.path.join(WORK, "dataset.txt"))
    subprocess.run([sys.executable, os.path.join(examples, "convert.py"), onnx_path, "rk3588", "i8", "zoo.rknn"],
                   cwd=WORK, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    expected = convert(onnx_path, os.path.join(WORK, "zoo_cli.rknn"), "--dtype", "int8", "--dataset",
                       os.path.join(WORK, "dataset.txt"), *IMAGENET)
    with open(os.path.join(WORK, "zoo.rknn"), "rb") as a, open(expected, "rb") as b:
        if a.read() != b.read():
            sys.exit("convert.py (rknn.api.RKNN) wrote other bytes than rknn_convert with the same settings")
    print("convert.py        : the same bytes as rknn_convert")
    image = images[0]
    printed = subprocess.run([sys.executable, os.path.join(examples, "classify_lite.py"), "zoo.rknn", image],
                             cwd=WORK, check=True, stdout=subprocess.PIPE, text=True).stdout
    top = [int(line.split("]")[0][1:]) for line in printed.splitlines() if line.startswith("[")]
    pixels = np.asarray(Image.open(image).convert("RGB").resize((224, 224)), dtype=np.uint8)[None]
    npy = os.path.join(WORK, "classify_pixels.npy")
    np.save(npy, pixels)
    scores = c_api_outputs(os.path.join(WORK, "zoo.rknn"), npy, 1)[0].reshape(-1)
    expected_top = [int(i) for i in np.argsort(-scores, kind="stable")[:5]]
    if top != expected_top:
        sys.exit("classify_lite.py printed the top 5 %s; the C API's are %s" % (top, expected_top))
    print("classify_lite.py  : the C API's top 5 %s" % top)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    ran = 0
    mobilenet = os.path.join(TEST_MODELS, "mobilenet_v2.onnx")
    if os.path.exists(mobilenet):
        model = convert(mobilenet, os.path.join(WORK, "mobilenet_v2_int8.rknn"), "--dtype", "int8", "--dataset",
                        os.path.join(TEST_MODELS, "images"), *IMAGENET)
        compare("mobilenet_v2", model, np.load(os.path.join(TEST_MODELS, "mobilenet_v2_input.npy")))
        user_scripts(mobilenet)
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
