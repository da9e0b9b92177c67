#!/usr/bin/env python3
"""Writes the GPU custom op demo's model: a small segmentation head on a
float input [1, 3, 32, 32] (3x3 convolution and ReLU, then a 1x1
convolution to 5 class scores) ending in ArgMax over the classes (axis 1,
keepdims) as int64, as ONNX with seeded weights. Also one test image (a
smooth float32 NCHW .npy) and NumPy's mask for it.

usage: make_segmentation_model.py OUT_DIR   (needs python3-onnx and python3-numpy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 7
SHAPE = (1, 3, 32, 32)
MID = 8
CLASSES = 5


def conv(x, w, b):
    k = w.shape[2]
    pad = k // 2
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    h, wd = x.shape[2], x.shape[3]
    out = np.zeros((1, w.shape[0], h, wd), np.float64)
    for dy in range(k):
        for dx in range(k):
            out += np.einsum("oc,nchw->nohw", w[:, :, dy, dx], xp[:, :, dy:dy + h, dx:dx + wd])
    return out + b.reshape(1, -1, 1, 1)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    w0 = rng.normal(0, 0.5, (MID, 3, 3, 3)).astype(np.float32)
    b0 = rng.normal(0, 0.1, (MID,)).astype(np.float32)
    w1 = rng.normal(0, 0.5, (CLASSES, MID, 1, 1)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (CLASSES,)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["image", "w0", "b0"], ["f"], name="conv0", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["f"], ["r"], name="relu0"),
        helper.make_node("Conv", ["r", "w1", "b1"], ["scores"], name="classifier"),
        helper.make_node("ArgMax", ["scores"], ["mask"], name="argmax", axis=1, keepdims=1),
    ]
    graph = helper.make_graph(
        nodes, "segmentation_argmax_demo",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, list(SHAPE))],
        [helper.make_tensor_value_info("mask", TensorProto.INT64, [1, 1, SHAPE[2], SHAPE[3]])],
        [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(b0, "b0"),
         numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "segmentation.onnx"))
    # A smooth picture: a few blobs, so that the mask has regions.
    yy, xx = np.mgrid[0:SHAPE[2], 0:SHAPE[3]] / SHAPE[2]
    image = np.stack([np.sin(6 * xx + c) * np.cos(5 * yy - c) for c in range(3)])[None].astype(np.float32)
    np.save(os.path.join(out, "test_image.npy"), image)
    scores = conv(np.maximum(conv(image.astype(np.float64), w0, b0), 0), w1, b1)
    np.save(os.path.join(out, "test_mask.npy"), np.argmax(scores, axis=1)[:, None].astype(np.int64))


if __name__ == "__main__":
    main()
