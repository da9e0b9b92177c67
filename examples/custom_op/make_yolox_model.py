#!/usr/bin/env python3
"""Writes the cstSigmoid demo's model: a small YOLOX-like detector (anchor
free, one box per cell, strides 8, 16 and 32) whose objectness and class
sigmoids are the custom op cstSigmoid, as the SDK's YOLOX custom op demo has
them. Input "images" [1, 3, 128, 128], normalised by the converter (mean 0,
std 255); three heads [1, 4 + 1 + CLASSES, H, W]: box (dx, dy, log w,
log h), then sigmoid objectness and class scores.

The weights are seeded and random, then settled on image-like data (each
convolution rescaled so that its channels have mean 0 and deviation 1 over
the calibration images, as BatchNorm statistics would be), so that the
activations are lively enough to judge int8 by.

Also written: the calibration images and one test image as uint8 NHWC .npy
(listed in calibration.txt), NumPy's float heads for the test image
(test_head{0,1,2}.npy) and its detections (test_detections.txt: label score
x0 y0 x1 y1, best first).

usage: make_yolox_model.py OUT_DIR   (needs python3-onnx and python3-numpy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 7
SIZE = 128
CLASSES = 3
WIDTHS = [16, 24, 32, 48, 64]  # the five stride-2 stages: 64, 32, 16 (P3), 8 (P4), 4 (P5)
HEAD = 32
CALIBRATION_IMAGES = 12
SCORE_THRESHOLD = 0.25
IOU_THRESHOLD = 0.45


def image_like(rng):
    """Smooth colour blobs on a gradient, with a little noise: uint8 HWC."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32) / SIZE
    img = np.empty((SIZE, SIZE, 3), np.float32)
    for c in range(3):
        img[..., c] = 60 + 80 * (rng.uniform() * xx + rng.uniform() * yy)
    for _ in range(rng.integers(3, 7)):
        cx, cy, r = rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9), rng.uniform(0.04, 0.2)
        blob = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
        img += blob[..., None] * rng.uniform(-120, 120, 3).astype(np.float32)
    img += rng.normal(0, 4, img.shape)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def conv(x, w, b, stride, pad):
    """NCHW convolution through im2col."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (h + 2 * pad - kh) // stride + 1, (wd + 2 * pad - kw) // stride + 1
    cols = np.empty((n, c, kh, kw, oh, ow), np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
    return np.einsum("ncijhw,ocij->nohw", cols, w, optimize=True) + b.reshape(1, -1, 1, 1)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


class Builder:
    """Makes seeded convolutions, settling each on the calibration batch."""

    def __init__(self, rng):
        self.rng, self.inits, self.nodes, self.value_info = rng, [], [], []
        self.params = {}

    def conv(self, name, x_name, x, out_ch, k, stride, gain=1.0, shift=0.0):
        in_ch = x.shape[1]
        w = self.rng.normal(0, 1, (out_ch, in_ch, k, k)).astype(np.float32)
        b = np.zeros(out_ch, np.float32)
        y = conv(x, w, b, stride, k // 2)
        mean, std = y.mean(axis=(0, 2, 3)), y.std(axis=(0, 2, 3)) + 1e-6
        w = (w * (gain / std).reshape(-1, 1, 1, 1)).astype(np.float32)
        b = (shift - mean * gain / std).astype(np.float32)
        self.params[name] = (w, b, stride, k // 2)
        self.inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
        self.nodes.append(helper.make_node("Conv", [x_name, name + "_w", name + "_b"], [name], name=name,
                                           strides=[stride, stride], pads=[k // 2] * 4, kernel_shape=[k, k]))
        return name, conv(x, w, b, stride, k // 2)

    def relu(self, name, x_name, x):
        self.nodes.append(helper.make_node("Relu", [x_name], [name], name=name))
        return name, np.maximum(x, 0)


def build(calibration):
    """The graph, and a NumPy forward pass over its recorded parameters."""
    rng = np.random.default_rng(SEED)
    b = Builder(rng)
    x = calibration.transpose(0, 3, 1, 2).astype(np.float32) / 255.0
    name, levels = "images", []
    for s, width in enumerate(WIDTHS):
        name, x = b.conv(f"stage{s}", name, x, width, 3, 2)
        name, x = b.relu(f"stage{s}_relu", name, x)
        if s >= 2:
            levels.append((name, x))
    heads = []
    for level, (feature, fx) in enumerate(levels):
        stem, sx = b.conv(f"head{level}_stem", feature, fx, HEAD, 1, 1)
        stem, sx = b.relu(f"head{level}_stem_relu", stem, sx)
        reg, _ = b.conv(f"head{level}_reg", stem, sx, 4, 3, 1, gain=0.4)
        obj, _ = b.conv(f"head{level}_obj", stem, sx, 1, 1, 1, gain=1.5, shift=-2.5)
        cls, _ = b.conv(f"head{level}_cls", stem, sx, CLASSES, 1, 1, gain=1.5)
        for branch, channels in ((obj, 1), (cls, CLASSES)):
            b.nodes.append(helper.make_node("cstSigmoid", [branch], [branch + "_sigmoid"], name=branch + "_sigmoid"))
            # A custom op's output shape comes from the model, as ONNX cannot infer it.
            b.value_info.append(helper.make_tensor_value_info(branch + "_sigmoid", TensorProto.FLOAT,
                                                              [1, channels, fx.shape[2], fx.shape[3]]))
        out = f"head{level}"
        b.nodes.append(helper.make_node("Concat", [reg, obj + "_sigmoid", cls + "_sigmoid"], [out], name=out, axis=1))
        heads.append((out, fx.shape[2], fx.shape[3]))
    return b, heads


def forward(b, images):
    """NumPy's heads for uint8 NHWC `images`."""
    p = b.params
    x = images.transpose(0, 3, 1, 2).astype(np.float32) / 255.0
    levels = []
    for s in range(len(WIDTHS)):
        x = np.maximum(conv(x, *p[f"stage{s}"]), 0)
        if s >= 2:
            levels.append(x)
    heads = []
    for level, fx in enumerate(levels):
        stem = np.maximum(conv(fx, *p[f"head{level}_stem"]), 0)
        reg = conv(stem, *p[f"head{level}_reg"])
        obj = sigmoid(conv(stem, *p[f"head{level}_obj"]))
        cls = sigmoid(conv(stem, *p[f"head{level}_cls"]))
        heads.append(np.concatenate([reg, obj, cls], axis=1).astype(np.float32))
    return heads


def iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def detections(heads):
    """YOLOX decoding and per-class NMS, as the demo does it."""
    boxes = []
    for head in heads:
        _, _, gh, gw = head.shape
        stride = SIZE // gh
        for y in range(gh):
            for x in range(gw):
                cell = head[0, :, y, x]
                label = int(np.argmax(cell[5:]))
                score = float(cell[4] * cell[5 + label])
                if score < SCORE_THRESHOLD:
                    continue
                cx, cy = (cell[0] + x) * stride, (cell[1] + y) * stride
                w, h = np.exp(cell[2]) * stride, np.exp(cell[3]) * stride
                box = [float(np.clip(v, 0.0, SIZE - 1.0)) for v in (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)]
                boxes.append((score, label, box))
    boxes.sort(key=lambda d: -d[0])
    kept = []
    for d in boxes:
        if all(k[1] != d[1] or iou(k[2], d[2]) <= IOU_THRESHOLD for k in kept):
            kept.append(d)
    return kept


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED + 1)
    calibration = np.stack([image_like(rng) for _ in range(CALIBRATION_IMAGES)])
    test = image_like(rng)[None]
    b, heads = build(calibration)
    graph = helper.make_graph(
        b.nodes, "yolox_like",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 5 + CLASSES, h, w]) for n, h, w in heads],
        b.inits, value_info=b.value_info)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "yolox_like.onnx"))
    names = []
    for k, image in enumerate(calibration):
        names.append(f"calib_{k}.npy")
        np.save(os.path.join(out, names[-1]), image[None])
    with open(os.path.join(out, "calibration.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    np.save(os.path.join(out, "test_image.npy"), test)
    expected = forward(b, test)
    for k, head in enumerate(expected):
        np.save(os.path.join(out, f"test_head{k}.npy"), head)
    found = detections(expected)
    with open(os.path.join(out, "test_detections.txt"), "w") as f:
        for score, label, box in found:
            f.write(f"{label} {score:.4f} {box[0]:.2f} {box[1]:.2f} {box[2]:.2f} {box[3]:.2f}\n")
    print(f"wrote {out}/yolox_like.onnx: {len(found)} detections on the test image")


if __name__ == "__main__":
    main()
