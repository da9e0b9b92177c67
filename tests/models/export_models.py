#!/usr/bin/python3
"""Export reference models, test inputs and PyTorch reference outputs.

Writes, in OUT_DIR, what the OpenRKNN model tests need, without network access:
ONNX files of randomly initialised networks, synthetic calibration images, a
uint8 test input per model with the float32 outputs PyTorch computes for it,
and a models.json index.

Usage:
  /usr/bin/python3 tests/models/export_models.py OUT_DIR
      [--models mobilenet_v2,resnet18,yolov5s_like] [--images N] [--force]

Deterministic: every random source has a fixed, printed seed, so re-running
with the same library versions reproduces the files byte for byte.
"""

import argparse
import json
import os
import statistics
import time
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision
from PIL import Image, ImageDraw, ImageFilter

# ImageNet normalisation expressed in 0..255 pixel units, so that the converter
# can fold it into the first layer and the runtime can take raw uint8 pixels.
MEAN = [123.675, 116.28, 103.53]
STD = [58.395, 57.12, 57.375]
IMAGE_SIZE = 256
IMAGE_SEED_BASE = 1000
PROBE_SEED = 999
NUM_CLASSES = 80
THREADS = 2


# ---- A small YOLOv5s-style detector ----------------------------------------
class Conv(nn.Module):
    """Conv2d (no bias, BN supplies it) + BatchNorm2d + SiLU."""
    def __init__(self, c_in, c_out, k=1, s=1, p=None):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, s, k // 2 if p is None else p, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1 = Conv(c, c, 1)
        self.cv2 = Conv(c, c, 3)
        self.shortcut = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.shortcut else y


class C3(nn.Module):
    """Two 1x1 branches; one goes through n Bottlenecks; concat; 1x1 fuse."""
    def __init__(self, c_in, c_out, n=1, shortcut=True):
        super().__init__()
        hidden = c_out // 2
        self.cv1 = Conv(c_in, hidden, 1)
        self.cv2 = Conv(c_in, hidden, 1)
        self.m = nn.Sequential(*[Bottleneck(hidden, shortcut) for _ in range(n)])
        self.cv3 = Conv(2 * hidden, c_out, 1)

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], 1))


class SPPF(nn.Module):
    """Three chained 5x5 max-pools == pyramid pooling at 5/9/13, but cheaper."""
    def __init__(self, c_in, c_out):
        super().__init__()
        hidden = c_in // 2
        self.cv1 = Conv(c_in, hidden, 1)
        self.pool = nn.MaxPool2d(5, stride=1, padding=2)
        self.cv2 = Conv(4 * hidden, c_out, 1)

    def forward(self, x):
        feats = [self.cv1(x)]
        for _ in range(3):
            feats.append(self.pool(feats[-1]))
        return self.cv2(torch.cat(feats, 1))


class YoloV5sLike(nn.Module):
    """Backbone + FPN/PAN neck + three raw detect heads (strides 8/16/32)."""
    def __init__(self, num_classes=NUM_CLASSES, base=32):
        super().__init__()
        c1, c2, c3, c4, c5 = base, 2 * base, 4 * base, 8 * base, 16 * base
        # Backbone (YOLOv5s depths 1/2/3/1).
        self.stem = Conv(3, c1, 6, 2, 2)
        self.stage2 = nn.Sequential(Conv(c1, c2, 3, 2), C3(c2, c2, 1))
        self.stage3 = nn.Sequential(Conv(c2, c3, 3, 2), C3(c3, c3, 2))
        self.stage4 = nn.Sequential(Conv(c3, c4, 3, 2), C3(c4, c4, 3))
        self.stage5 = nn.Sequential(Conv(c4, c5, 3, 2), C3(c5, c5, 1), SPPF(c5, c5))
        # Top-down (FPN) path.
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.lat5 = Conv(c5, c4, 1)
        self.td4 = C3(2 * c4, c4, 1, shortcut=False)
        self.lat4 = Conv(c4, c3, 1)
        self.td3 = C3(2 * c3, c3, 1, shortcut=False)
        # Bottom-up (PAN) path.
        self.down3 = Conv(c3, c3, 3, 2)
        self.bu4 = C3(2 * c3, c4, 1, shortcut=False)
        self.down4 = Conv(c4, c4, 3, 2)
        self.bu5 = C3(2 * c4, c5, 1, shortcut=False)
        # Heads: 3 anchors x (box 4 + objectness 1 + classes).
        n_out = 3 * (5 + num_classes)
        self.heads = nn.ModuleList(nn.Conv2d(c, n_out, 1) for c in (c3, c4, c5))

    def forward(self, x):
        p3 = self.stage3(self.stage2(self.stem(x)))
        p4 = self.stage4(p3)
        p5 = self.stage5(p4)
        l5 = self.lat5(p5)
        t4 = self.td4(torch.cat([self.up(l5), p4], 1))
        l4 = self.lat4(t4)
        n3 = self.td3(torch.cat([self.up(l4), p3], 1))
        n4 = self.bu4(torch.cat([self.down3(n3), l4], 1))
        n5 = self.bu5(torch.cat([self.down4(n4), l5], 1))
        return tuple(h(f) for h, f in zip(self.heads, (n3, n4, n5)))


def build_yolov5s_like(weights=None):  # signature matches torchvision builders
    model = YoloV5sLike()
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            # He init; calibrate_batchnorm() then normalises every layer's output.
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            if m.bias is not None:  # detect heads
                nn.init.normal_(m.bias, 0.0, 0.1)
    return model


# name -> (seed, constructor, input H/W, output names).
MODELS = {
    "mobilenet_v2": (101, torchvision.models.mobilenet_v2, 224, ["out0"]),
    "resnet18": (102, torchvision.models.resnet18, 224, ["out0"]),
    "yolov5s_like": (103, build_yolov5s_like, 320, ["out0", "out1", "out2"]),
    # Architectures beyond the three the runtime tests use: HardSwish and
    # squeeze-and-excitation (mobilenet_v3), SiLU with sigmoid-gated SE
    # (efficientnet), channel shuffles (shufflenet), ceil-mode pools (squeezenet).
    "mobilenet_v3_small": (104, torchvision.models.mobilenet_v3_small, 224, ["out0"]),
    "mobilenet_v3_large": (105, torchvision.models.mobilenet_v3_large, 224, ["out0"]),
    "efficientnet_b0": (106, torchvision.models.efficientnet_b0, 224, ["out0"]),
    "shufflenet_v2_x1_0": (107, torchvision.models.shufflenet_v2_x1_0, 224, ["out0"]),
    "squeezenet1_1": (108, torchvision.models.squeezenet1_1, 224, ["out0"]),
}

PROBE_IMAGES = 16


def calibrate_batchnorm(model, size):
    """Give every BatchNorm the statistics a trained network would have.

    The affine parameters are random (from the seeded torch RNG), and the
    running mean/variance are the exact per-channel statistics of the layer's
    input over a few synthetic probe images (train-mode forward, cumulative
    averages). As in a trained model, BN then keeps every channel near unit
    scale: no channel dwarfs the others, and folding BN into the convolutions
    still changes the weights. Random running statistics instead leave channel
    scales wildly unequal, which no per-tensor quantiser can represent well.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for m in bns:
            # Moderate gains and positive shifts keep the random network in the
            # "ordered" regime trained networks live in: a small perturbation
            # of one layer stays small downstream. (With gains near 1 and zero
            # shifts, a random SiLU network amplifies perturbations layer after
            # layer, and no int8 scheme could track it.)
            m.weight.uniform_(0.3, 0.7)
            m.bias.uniform_(0.5, 1.0)
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the probe batch
        probes = np.concatenate([normalise_pixels(load_pixels(make_image(PROBE_SEED + i), size))
                                 for i in range(PROBE_IMAGES)])
        model.train()
        model(torch.from_numpy(probes))
        model.eval()


# ---- Synthetic calibration images -------------------------------------------
def make_image(seed, size=IMAGE_SIZE):
    """Smooth colour gradient + a few noisy shapes: enough structure that the
    activation ranges seen during quantisation calibration are plausible."""
    rng = np.random.RandomState(seed)
    t = np.linspace(0.0, 1.0, size, dtype=np.float64)
    yy, xx = np.meshgrid(t, t, indexing="ij")
    # Bilinear blend of four random corner colours plus a gentle ripple.
    corners = rng.uniform(0, 255, size=(4, 3))
    img = (np.outer((1 - yy) * (1 - xx), corners[0]) + np.outer((1 - yy) * xx, corners[1])
           + np.outer(yy * (1 - xx), corners[2]) + np.outer(yy * xx, corners[3]))
    img = img.reshape(size, size, 3)
    freq, phase = rng.uniform(1, 4), rng.uniform(0, 2 * np.pi)
    img += 20.0 * np.sin(2 * np.pi * freq * (xx + 0.5 * yy) + phase)[..., None]
    pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))

    draw = ImageDraw.Draw(pil)
    for _ in range(rng.randint(3, 8)):
        x0, y0 = rng.randint(0, size - 16, size=2)
        w, h = rng.randint(16, size // 2, size=2)
        box = [int(x0), int(y0), int(min(x0 + w, size - 1)), int(min(y0 + h, size - 1))]
        colour = tuple(int(c) for c in rng.randint(0, 256, size=3))
        (draw.ellipse if rng.rand() < 0.5 else draw.rectangle)(box, fill=colour)
    pil = pil.filter(ImageFilter.GaussianBlur(1.0))  # soften hard edges

    arr = np.asarray(pil, dtype=np.float64) + rng.normal(0.0, 6.0, size=(size, size, 3))
    return Image.fromarray(np.clip(np.round(arr), 0, 255).astype(np.uint8), "RGB")


def write_images(out_dir, count, force):
    img_dir = os.path.join(out_dir, "images")
    os.makedirs(img_dir, exist_ok=True)
    names = ["img_%03d.png" % i for i in range(count)]
    for i, name in enumerate(names):
        path = os.path.join(img_dir, name)
        if force or not os.path.exists(path):
            make_image(IMAGE_SEED_BASE + i).save(path)
    # Paths are relative to list.txt itself so the directory can be moved.
    with open(os.path.join(img_dir, "list.txt"), "w") as f:
        f.write("".join(n + "\n" for n in names))
    print("images: %d in %s (seed = %d + index)" % (count, img_dir, IMAGE_SEED_BASE))
    return os.path.join(img_dir, names[0])


def load_pixels(image, size):
    """PIL image -> uint8 NHWC [1, size, size, 3], bilinear resize."""
    resized = image.convert("RGB").resize((size, size), Image.BILINEAR)
    return np.asarray(resized, dtype=np.uint8)[None]


def normalise_pixels(pixels):
    """uint8 NHWC -> (pixels - mean) / std as float32 NCHW."""
    norm = (pixels.astype(np.float32) - np.float32(MEAN)) / np.float32(STD)
    return np.ascontiguousarray(norm.transpose(0, 3, 1, 2), dtype=np.float32)


# ---- Per-model export --------------------------------------------------------
def model_files(out_dir, name, n_outputs):
    files = [name + ".onnx", name + "_input.npy", name + "_input_nchw_float.npy"]
    files += ["%s_output%d.npy" % (name, k) for k in range(n_outputs)]
    return [os.path.join(out_dir, f) for f in files]


def time_forward(model, x, warmup=2, runs=10):
    times = []
    with torch.no_grad():
        for _ in range(warmup + runs):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times[warmup:])


def export_model(out_dir, name, first_image):
    seed, build, size, out_names = MODELS[name]
    print("[%s] torch.manual_seed(%d)" % (name, seed))
    torch.manual_seed(seed)
    model = build(weights=None)  # random init only: never download weights
    calibrate_batchnorm(model, size)
    # Raw uint8 NHWC pixels the user feeds, and the normalised tensor PyTorch sees.
    pixels = load_pixels(Image.open(first_image), size)
    nchw = normalise_pixels(pixels)
    x = torch.from_numpy(nchw)

    with torch.no_grad():
        outs = model(x)
    outs = outs if isinstance(outs, tuple) else (outs,)

    onnx_path = os.path.join(out_dir, name + ".onnx")
    with warnings.catch_warnings():
        # torch 1.13 warns about prim::Constant shape inference; harmless here.
        warnings.simplefilter("ignore", UserWarning)
        # PRESERVE exports the eval-mode model without the exporter's own
        # Conv+BatchNorm fusion, so that the converter's BN folding is exercised.
        torch.onnx.export(model, x, onnx_path, opset_version=13, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          input_names=["images"], output_names=out_names)
    onnx.checker.check_model(onnx.load(onnx_path))
    np.save(os.path.join(out_dir, name + "_input.npy"), pixels)
    np.save(os.path.join(out_dir, name + "_input_nchw_float.npy"), nchw)
    out_info = []
    for k, (oname, t) in enumerate(zip(out_names, outs)):
        arr = t.numpy().astype(np.float32)
        np.save(os.path.join(out_dir, "%s_output%d.npy" % (name, k)), arr)
        std = float(arr.std())
        flag = "" if 1e-2 <= std <= 1e2 else "  WARNING: std outside [1e-2, 1e2]"
        print("[%s] %s shape=%s std=%.4f%s" % (name, oname, list(arr.shape), std, flag))
        out_info.append({"name": oname, "shape": list(arr.shape)})

    torch_ms = time_forward(model, x)
    print("[%s] torch_ms (median of 10, %d threads) = %.2f" % (name, THREADS, torch_ms))
    return {"onnx": name + ".onnx", "seed": seed, "input_name": "images",
            "input_shape": list(nchw.shape), "input_npy_layout": "NHWC uint8",
            "mean": MEAN, "std": STD, "outputs": out_info, "torch_ms": round(torch_ms, 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--images", type=int, default=16)
    parser.add_argument("--force", action="store_true", help="regenerate existing files")
    args = parser.parse_args()

    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error("unknown model(s): %s (known: %s)" % (unknown, list(MODELS)))
    if args.images < 1:
        parser.error("--images must be >= 1")
    torch.set_num_threads(THREADS)
    os.makedirs(args.out_dir, exist_ok=True)
    start = time.perf_counter()
    first_image = write_images(args.out_dir, args.images, args.force)

    index_path = os.path.join(args.out_dir, "models.json")
    index = {}
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)

    for name in names:
        files = model_files(args.out_dir, name, len(MODELS[name][3]))
        if not args.force and name in index and all(os.path.exists(p) for p in files):
            print("[%s] up to date, skipping (use --force to regenerate)" % name)
            continue
        index[name] = export_model(args.out_dir, name, first_image)
        # Rewrite the index after each model so an interrupted run keeps progress.
        with open(index_path, "w") as f:
            json.dump(index, f, indent=2, sort_keys=True)
            f.write("\n")

    print("done in %.1f s" % (time.perf_counter() - start))


if __name__ == "__main__":
    main()
