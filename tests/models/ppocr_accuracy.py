#!/usr/bin/python3
"""PP-OCRv4 through OpenRKNN against ONNX Runtime (float32) on the same inputs.

Converts the pretrained detector (480x480) and recogniser (48x320) to fp16 and
int8, calibrated on generated text with --calib mmse and the default bias
correction, each with --hybrid output:0.995 (as few float16 layers as keep
the output's cosine >= 0.995 on the calibration data; the detector as the
demo converts it), then:
  - det: runs each model on held-out pages of printed text with rknn_benchmark
    and ONNX Runtime on the same pixels; cosine of the probability maps, and
    the share of pixels the 0.3 threshold classifies differently; the same on
    the dark pages (light text on a dark background) of another held-out set;
  - rec: runs the OCR example (int8 detector, each recogniser) on the demo
    page and the held-out pages, feeds every crop it made to ONNX Runtime,
    and compares the outputs (cosine) and the CTC-decoded text;
  - rec with dynamic shapes (fp16, shape sets at widths 80, 160, 320 and 640
    and any width from 32 to 640 in steps of 8 (--dynamic-range); each crop
    runs at its own width, rounded up to the step): the same comparison with
    ONNX Runtime at the crop's width, and each crop's output against a static
    conversion at that width, which must be the same bytes;
  - the same in int8 ("int8-dyn", calibrated at width 320 as the static int8
    recogniser is, --calib-shapes, with the float16 layers the search chose
    for it, --fp16-layers): text and cosine as for int8, and on the
    demo page each crop's output against a static int8 conversion at its
    width calibrated at 320 (--calib-shapes), which must be the same bytes.
Prints a table; fails when
  - fp16 det cosine < 0.999; rec cosine on a crop < 0.99 (fp16 and int8);
    the fp16 rec median over the crops < 0.999 (a character placed
    one CTC step earlier or later costs a crop a few thousandths); an fp16
    crop reads other text than ONNX Runtime's, or the demo page is misread
    with the fp16 recogniser;
  - int8 det cosine < 0.99 (the issue's bar) or more than 1% of the pixels
    classified differently (the table marks rec crops under 0.99 too);
  - the int8 recogniser reads any crop otherwise than ONNX Runtime, except
    near ties (every differing CTC step one where ONNX Runtime's top two
    classes are within 3 steps of the int8 output, printed TIE);
  - an fp16 dynamic-width crop reads other text than ONNX Runtime's, has a
    cosine under 0.98, or its output differs from the static model's of its
    width; the int8 one must read the demo page right, at most 15% of all
    crops otherwise, and equal its static model.

usage: ppocr_accuracy.py --bin BUILD_DIR --work DIR
Exit 77 (skipped) when the models or ONNX Runtime cannot be fetched (offline)
or node is missing.
"""
import argparse
import atexit
import glob
import hashlib
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DET_MEAN, DET_STD = [123.675, 116.28, 103.53], [58.395, 57.12, 57.375]
REC_MEAN, REC_STD = [127.5] * 3, [127.5] * 3
DET_SIZE = 480
DARK_SET_PAGES = 24  # held-out pages drawn (seed 4242); the dark ones are measured
# The detector as fp16, and as int8 the way the demo converts it: as few
# layers stay fp16 as keep the probability map's cosine >= 0.995 on the
# calibration pages.
DET_FORMS = {
    "fp16": ["--dtype", "fp16"],
    "int8": ["--dtype", "int8", "--calib", "mmse", "--hybrid", "output:0.995"],
}
DET_THRESHOLDS = {"fp16": 0.999, "int8": 0.99}
MAX_PIXELS_DIFFERING = {"fp16": 0.5, "int8": 1.0}  # percent, at the 0.3 threshold
REC_FP16_MEDIAN_FLOOR = 0.999
TARGET_INT8 = 0.99
# The share of crops the dynamic int8 recogniser may read otherwise than ONNX
# Runtime (the static one must read every crop as it does).
MAX_INT8_DYN_TEXT_MISMATCH = 0.15
# An int8 reading that differs only where ONNX Runtime's top two classes are
# within this many output steps of each other (a near tie, such as one
# character of a 9-pixel-high box read at 0.13 against 0.12) is printed as
# TIE and not failed: int8 outputs move by a few steps.
NEAR_TIE_CODES = 3
# fp16-dyn: the demo page's "PP-OCRv4 on the NPU" at width 640 gives 0.987 (the
# static 640 model gives the same bytes; a CTC step or two moves, the text does not).
# int8-dyn: each crop runs unpadded at its own width, where int8 is less exact
# than at 320 with grey padding: "2025" at width 200 gives 0.920 and reads as
# ONNX Runtime does; a static int8 model at 200 gives 0.920 calibrated at 320
# (the same bytes) and 0.921 calibrated at 200.
REC_CROP_FLOOR = {"fp16": 0.99, "int8": 0.99, "fp16-dyn": 0.98, "int8-dyn": 0.90}
REPLAY = "to convert the same way without the search: --fp16-layers "
REC_WIDTHS = (80, 160, 320, 640)
REC_RANGE = "1,3,48,32..640:8"  # any width in it, beyond the sets


def run(cmd, **kw):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if result.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (result.returncode, " ".join(cmd), result.stdout[-4000:]))
    return result.stdout


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


# ONNX Runtime's outputs by model and input bytes: the static recognisers
# read the same crops (one detector cuts them), as do the dynamic ones, and
# each run of ort_run.js costs about 0.4 s, mostly loading the model.
ORT_OUTPUTS = {}


def ort(onnx_path, nchw, work, ort_dir, tag):
    pixels = np.ascontiguousarray(nchw, dtype=np.float32)
    key = (onnx_path, pixels.shape, hashlib.sha256(pixels.tobytes()).hexdigest())
    if key in ORT_OUTPUTS:
        return ORT_OUTPUTS[key]
    src = os.path.join(work, tag + "_in.npy")
    np.save(src, pixels)
    out = os.path.join(work, tag + "_ort")
    run(["node", os.path.join(ROOT, "tools/ort_reference/ort_run.js"), onnx_path, out, src],
        env=dict(os.environ, ORT_NODE_MODULES=ort_dir))
    ORT_OUTPUTS[key] = np.load(os.path.join(out, "0.npy"))
    return ORT_OUTPUTS[key]


def normalise(pixels, mean, std):
    """uint8 NHWC -> float32 NCHW, (x - mean) / std."""
    x = (pixels.astype(np.float32) - np.float32(mean)) / np.float32(std)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def ctc_text(probs, keys):
    out, previous = [], -1
    for k in probs.reshape(-1, probs.shape[-1]).argmax(1):
        if k != 0 and k != previous:
            out.append(keys[k - 1])
        previous = k
    return "".join(out)


def near_tie(actual, expected):
    """Whether every CTC step where the two readings pick different classes
    is one where ONNX Runtime's own pick beats ours by less than
    NEAR_TIE_CODES steps of the int8 output (probabilities in 1/255 steps):
    a difference the int8 output cannot be expected to resolve."""
    a = actual.reshape(-1, actual.shape[-1])
    e = expected.reshape(-1, expected.shape[-1])
    ours, theirs = a.argmax(1), e.argmax(1)
    steps = np.nonzero(ours != theirs)[0]
    return len(steps) > 0 and all(e[t, theirs[t]] - e[t, ours[t]] < NEAR_TIE_CODES / 255.0 for t in steps)


def same_as_static(ocr, det, rec_static, keys_path, page, dyn_dump, width_crops, form):
    """Each crop the dynamic recogniser ran at width W against the static
    model of width W (rec_static(W) converts it) on the same page (the same
    boxes and, as the crop fits W, the same padded input): the outputs must
    be the same bytes."""
    failures = []
    by_width = {}
    for crop in glob.glob(os.path.join(dyn_dump, "crop_*.npy")):
        k = crop[:-4].split("_")[-1]
        by_width.setdefault(int(np.load(crop).shape[2]), []).append(k)
    for w, crops in sorted(by_width.items()):
        width_crops[w] = width_crops.get(w, 0) + len(crops)
        dump = dyn_dump + "_static_%d" % w
        os.makedirs(dump)
        run([ocr, det, rec_static(w), keys_path, page, "--dump", dump])
        for k in crops:
            dyn_in, static_in = (np.load(os.path.join(d, "crop_%s.npy" % k)) for d in (dyn_dump, dump))
            dyn_out, static_out = (np.load(os.path.join(d, "rec_%s.npy" % k)) for d in (dyn_dump, dump))
            if not np.array_equal(dyn_in, static_in) or not np.array_equal(dyn_out, static_out):
                failures.append("rec %s %s crop %s at width %d: not the static model's output" % (form, page, k, w))
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="the build folder")
    parser.add_argument("--work", required=True)
    a = parser.parse_args()
    if shutil.which("node") is None:
        print("SKIP: node is not installed")
        return 77
    fetch = subprocess.run([os.path.join(ROOT, "scripts/fetch_models.sh")], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    print(fetch.stdout.strip())
    if fetch.returncode == 1:
        print("SKIP: the PP-OCRv4 models or ONNX Runtime are not cached and cannot be fetched")
        return 77
    if fetch.returncode != 0:
        return 1
    cache = subprocess.run([os.path.join(ROOT, "scripts/fetch_models.sh"), "--print-dir"], stdout=subprocess.PIPE,
                           text=True, check=True).stdout.strip()
    models = os.path.join(cache, "ocr-models-1.4.2")
    ort_dir = os.path.join(cache, "onnxruntime-node-1.30.0")
    det_onnx = os.path.join(models, "ch_PP-OCRv4_det_infer.onnx")
    rec_onnx = os.path.join(models, "ch_PP-OCRv4_rec_infer.onnx")
    keys_path = os.path.join(models, "ppocr_keys_v1.txt")
    keys = [l.rstrip("\r\n") for l in open(keys_path, encoding="utf-8")] + [" "]
    convert = os.path.join(a.bin, "tools/rknn_convert/rknn_convert")
    benchmark = os.path.join(a.bin, "examples/rknn_benchmark")
    ocr = os.path.join(a.bin, "examples/rknn_ocr")
    work = a.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # Calibration data, and held-out pages (another seed) for measuring.
    gen = [sys.executable, os.path.join(ROOT, "examples/ocr/make_text_images.py")]
    run(gen + ["calib", os.path.join(work, "calib"), "16"])
    run(gen + ["lines", os.path.join(work, "lines"), "32"])
    run(gen + ["calib", os.path.join(work, "test_pages"), "3", "--seed", "777"])
    pages = sorted(glob.glob(os.path.join(work, "test_pages", "*.png")))
    # Light text on dark is drawn on about one page in seven; this set has 5.
    run(gen + ["calib", os.path.join(work, "dark_pages"), str(DARK_SET_PAGES), "--seed", "4242"])
    dark_pages = [p for p in sorted(glob.glob(os.path.join(work, "dark_pages", "*.png")))
                  if np.asarray(Image.open(p).convert("L")).mean() < 128]
    if len(dark_pages) < 5:
        sys.exit("expected 5 dark pages in the seed-4242 set, found %d" % len(dark_pages))
    demo_page = os.path.join(ROOT, "examples/data/ocr_page.png")

    # The int8 recogniser's output search is the longest step: it runs while
    # the other models convert and the detector is measured.
    det, rec = {}, {}
    rec_pixels = ["--mean", ",".join(map(str, REC_MEAN)), "--std", ",".join(map(str, REC_STD))]
    rec_calibration = ["--dataset", os.path.join(work, "lines"), "--calib", "mmse"]
    rec["int8"] = os.path.join(work, "rec_int8.rknn")
    # At 0.99 on the calibration lines, a held-out "2025" crop fell to 0.952.
    search_cmd = [convert, rec_onnx, "-o", rec["int8"], "--input-shapes", "1,3,48,320", "--dtype", "int8", "--hybrid",
                  "output:0.995"] + rec_pixels + rec_calibration
    search = subprocess.Popen(search_cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    atexit.register(lambda: search.poll() is None and search.kill())  # a failed step exits early
    for form, options in DET_FORMS.items():
        det[form] = os.path.join(work, "det_%s.rknn" % form)
        calibration = ["--dataset", os.path.join(work, "calib")] if "int8" in options else []
        run([convert, det_onnx, "-o", det[form], "--input-shapes", "1,3,%d,%d" % (DET_SIZE, DET_SIZE), "-q",
             "--mean", ",".join(map(str, DET_MEAN)), "--std", ",".join(map(str, DET_STD))] + options + calibration)
    rec["fp16"] = os.path.join(work, "rec_fp16.rknn")
    run([convert, rec_onnx, "-o", rec["fp16"], "--input-shapes", "1,3,48,320", "--dtype", "fp16", "-q"] + rec_pixels)
    # The dynamic-width recogniser, and a static one at each width a crop
    # runs at (converted when first needed).
    rec_norm = ["--mean", ",".join(map(str, REC_MEAN)), "--std", ",".join(map(str, REC_STD)), "--dtype", "fp16", "-q"]
    rec["fp16-dyn"] = os.path.join(work, "rec_fp16_dyn.rknn")
    widths = ["--dynamic-range", REC_RANGE]
    for w in REC_WIDTHS:
        widths += ["--input-shapes", "1,3,48,%d" % w]
    run([convert, rec_onnx, "-o", rec["fp16-dyn"]] + widths + rec_norm)

    def rec_static(w):
        path = os.path.join(work, "rec_fp16_w%d.rknn" % w)
        if not os.path.exists(path):
            run([convert, rec_onnx, "-o", path, "--input-shapes", "1,3,48,%d" % w] + rec_norm)
        return path

    failures = []
    print("\nPP-OCRv4 det %dx%d, cosine against ONNX Runtime fp32 (same pixels)" % (DET_SIZE, DET_SIZE))
    print("%-21s %-9s %-9s %s" % ("page", "form", "cosine", "pixels classified differently at 0.3"))
    for i, page in enumerate([demo_page] + pages + dark_pages):
        img = Image.open(page).convert("RGB").resize((DET_SIZE, DET_SIZE), Image.BILINEAR)
        pixels = np.asarray(img, dtype=np.uint8)[None]
        pixels_npy = os.path.join(work, "det_pixels_%d.npy" % i)
        np.save(pixels_npy, pixels)
        expected = ort(det_onnx, normalise(pixels, DET_MEAN, DET_STD), work, ort_dir, "det_%d" % i)
        for form in DET_FORMS:
            out_dir = os.path.join(work, "det_run_%d_%s" % (i, form))
            os.makedirs(out_dir)
            run([benchmark, det[form], pixels_npy, "1", "1"], cwd=out_dir)
            actual = np.load(os.path.join(out_dir, "rt_output0.npy")).astype(np.float32)
            c = cosine(actual, expected)
            differ = float(np.mean((actual > 0.3) != (expected > 0.3))) * 100
            ok = c >= DET_THRESHOLDS[form] and differ <= MAX_PIXELS_DIFFERING[form]
            note = "" if ok else "  BELOW"
            if ok and form.startswith("int8") and c < TARGET_INT8:
                note = "  (under the issue's %.2f)" % TARGET_INT8
            shade = " (dark)" if page in dark_pages else ""
            print("%-21s %-9s %.6f  %.3f%%%s" % (os.path.basename(page) + shade, form, c, differ, note))
            if not ok:
                failures.append("det %s %s cosine %.6f, %.3f%% pixels differ" % (form, os.path.basename(page), c, differ))

    # The search's log names the float16 layers it chose, which the other int8
    # recognisers reuse without searching again.
    log = search.communicate()[0]
    if search.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (search.returncode, " ".join(search_cmd), log[-4000:]))
    summary = [l.strip() for l in log.splitlines() if l.strip().startswith("hybrid output:")]
    replay = [l.strip()[len(REPLAY):] for l in log.splitlines() if l.strip().startswith(REPLAY)]
    if len(summary) != 1:
        sys.exit("rknn_convert --hybrid output printed no summary line:\n" + log[-4000:])
    print("\nrec int8: " + summary[0])
    rec_fp16_layers = ["--fp16-layers", replay[0]] if replay else []
    # int8 the same way, calibrated at 320 as the static int8 recogniser.
    int8_options = (["--dtype", "int8", "-q", "--calib-shapes", "1,3,48,320"] + rec_calibration + rec_fp16_layers +
                    rec_pixels)
    rec["int8-dyn"] = os.path.join(work, "rec_int8_dyn.rknn")
    run([convert, rec_onnx, "-o", rec["int8-dyn"], "--dynamic-range", REC_RANGE] + int8_options)

    def rec_static_int8(w):
        path = os.path.join(work, "rec_int8_w%d.rknn" % w)
        if not os.path.exists(path):
            run([convert, rec_onnx, "-o", path, "--input-shapes", "1,3,48,%d" % w] + int8_options)
        return path

    print("\nPP-OCRv4 rec 48x320 on every crop the OCR example makes (int8 detector)")
    print("%-14s %-6s %-5s %-9s %-6s %s" % ("page", "dtype", "crop", "cosine", "text", "ours / ONNX Runtime"))
    rec_cos = {"fp16": [], "int8": [], "fp16-dyn": [], "int8-dyn": []}
    int8_forms = ("int8", "int8-dyn")
    int8_mismatches = {form: 0 for form in int8_forms}
    width_crops, int8_width_crops = {}, {}
    for i, page in enumerate([demo_page] + pages):
        for dtype in ("fp16", "int8", "fp16-dyn", "int8-dyn"):
            dump = os.path.join(work, "ocr_%d_%s" % (i, dtype))
            os.makedirs(dump)
            cmd = [ocr, det["int8"], rec[dtype], keys_path, page, "--dump", dump]
            if page == demo_page and dtype in ("fp16", "fp16-dyn"):
                cmd += ["--expect", os.path.join(ROOT, "examples/data/ocr_page.txt")]
            printed = run(cmd)
            if page == demo_page and dtype in ("fp16", "fp16-dyn"):
                print(printed.strip())
            for crop in sorted(glob.glob(os.path.join(dump, "crop_*.npy")), key=lambda p: int(p[:-4].split("_")[-1])):
                k = crop[:-4].split("_")[-1]
                pixels = np.load(crop)
                expected = ort(rec_onnx, normalise(pixels, REC_MEAN, REC_STD), dump, ort_dir, "rec_%s" % k)
                actual = np.load(os.path.join(dump, "rec_%s.npy" % k))
                c = cosine(actual, expected)
                ours, theirs = ctc_text(actual, keys), ctc_text(expected, keys)
                same = ours == theirs
                tie = not same and dtype in int8_forms and near_tie(actual, expected)
                rec_cos[dtype].append(c)
                under = "  (under the issue's %.2f)" % TARGET_INT8 if dtype in int8_forms and c < TARGET_INT8 else ""
                print("%-14s %-6s %-5s %.6f  %-6s %r / %r%s" % (os.path.basename(page), dtype, k, c,
                                                             "same" if same else ("TIE" if tie else "DIFFER"), ours,
                                                             theirs, under))
                if not same and dtype not in int8_forms:
                    failures.append("rec %s %s crop %s reads %r, ONNX Runtime %r" % (dtype, page, k, ours, theirs))
                if not same and dtype in int8_forms and not tie:
                    int8_mismatches[dtype] += 1
                    if page == demo_page or dtype == "int8":
                        failures.append("rec %s %s crop %s reads %r, ONNX Runtime %r" % (dtype, page, k, ours, theirs))
                if c < REC_CROP_FLOOR[dtype]:
                    failures.append("rec %s %s crop %s cosine %.6f" % (dtype, page, k, c))
            if dtype == "fp16-dyn":
                failures += same_as_static(ocr, det["int8"], rec_static, keys_path, page, dump, width_crops, dtype)
            if dtype == "int8-dyn" and page == demo_page:  # an int8 conversion per width: the demo page's only
                failures += same_as_static(ocr, det["int8"], rec_static_int8, keys_path, page, dump, int8_width_crops,
                                           dtype)
    print("rec fp16-dyn: %d widths, crops per width %s, each the same bytes as the static model of its width" %
          (len(width_crops), ", ".join("%d: %d" % (w, n) for w, n in sorted(width_crops.items()))))
    print("rec int8-dyn on the demo page: widths %s, each crop the same bytes as the static int8 model of its width" %
          ", ".join("%d" % w for w in sorted(int8_width_crops)))
    for dtype, values in rec_cos.items():
        if values:
            print("rec %s over %d crops: cosine min %.6f, median %.6f" % (dtype, len(values), min(values),
                                                                        float(np.median(values))))
    if not rec_cos["fp16"] or float(np.median(rec_cos["fp16"])) < REC_FP16_MEDIAN_FLOOR:
        failures.append("rec fp16 median cosine below %.3f" % REC_FP16_MEDIAN_FLOOR)
    for form in int8_forms:
        crops, wrong = len(rec_cos[form]), int8_mismatches[form]
        print("rec %s: %d of %d crops read as ONNX Runtime reads them" % (form, crops - wrong, crops))
        if crops == 0 or (form == "int8-dyn" and wrong > MAX_INT8_DYN_TEXT_MISMATCH * crops):
            failures.append("rec %s reads %d of %d crops differently from ONNX Runtime" % (form, wrong, crops))
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
