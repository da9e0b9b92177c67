#!/usr/bin/env python3
"""Writes the custom op demo's model: two float inputs [1, 3, 16, 16], a 1x1
convolution each, the custom op cstDualResidual (alpha 0.5; out0 = a * alpha
- b, out1 = b * alpha - a), then a 1x1 convolution and ReLU on each output,
as ONNX with seeded weights. Also: calibration pairs (float32 NCHW .npy,
listed two per line in calibration.txt), one test pair, and NumPy's float
outputs for it.

usage: make_dual_residual_model.py OUT_DIR   (needs python3-onnx and python3-numpy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 21
SHAPE = (1, 3, 16, 16)
MID = 8
ALPHA = 0.5
CALIBRATION_PAIRS = 8


def conv1x1(x, w, b):
    return np.einsum("oc,nchw->nohw", w, x) + b.reshape(1, -1, 1, 1)


def forward(x0, x1, p):
    a = conv1x1(x0, p["w0"], p["b0"])
    b = conv1x1(x1, p["w1"], p["b1"])
    c0, c1 = a * ALPHA - b, b * ALPHA - a
    return (np.maximum(conv1x1(c0, p["w2"], p["b2"]), 0).astype(np.float32),
            np.maximum(conv1x1(c1, p["w3"], p["b3"]), 0).astype(np.float32))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    p = {}
    for k, (o, c) in enumerate([(MID, 3), (MID, 3), (MID, MID), (MID, MID)]):
        p[f"w{k}"] = rng.normal(0, 0.4, (o, c)).astype(np.float32)
        p[f"b{k}"] = rng.normal(0, 0.1, (o,)).astype(np.float32)
    inits = []
    for k in range(4):
        inits.append(numpy_helper.from_array(p[f"w{k}"].reshape(MID, -1, 1, 1), f"w{k}"))
        inits.append(numpy_helper.from_array(p[f"b{k}"], f"b{k}"))
    nodes = [
        helper.make_node("Conv", ["x0", "w0", "b0"], ["a"], name="conv0"),
        helper.make_node("Conv", ["x1", "w1", "b1"], ["b"], name="conv1"),
        helper.make_node("cstDualResidual", ["a", "b"], ["c0", "c1"], name="dual_residual", alpha=ALPHA),
        helper.make_node("Conv", ["c0", "w2", "b2"], ["d0"], name="conv2"),
        helper.make_node("Conv", ["c1", "w3", "b3"], ["d1"], name="conv3"),
        helper.make_node("Relu", ["d0"], ["y0"], name="relu0"),
        helper.make_node("Relu", ["d1"], ["y1"], name="relu1"),
    ]
    mid_shape = [1, MID, SHAPE[2], SHAPE[3]]
    graph = helper.make_graph(
        nodes, "dual_residual_demo",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(SHAPE)) for n in ("x0", "x1")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, mid_shape) for n in ("y0", "y1")],
        inits,
        value_info=[helper.make_tensor_value_info(n, TensorProto.FLOAT, mid_shape) for n in ("c0", "c1")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, "dual_residual.onnx"))
    lines = []
    for k in range(CALIBRATION_PAIRS):
        names = []
        for side in (0, 1):
            name = f"calib_{k}_{side}.npy"
            np.save(os.path.join(out, name), rng.normal(0, 1, SHAPE).astype(np.float32))
            names.append(name)
        lines.append(" ".join(names))
    with open(os.path.join(out, "calibration.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    x0 = rng.normal(0, 1, SHAPE).astype(np.float32)
    x1 = rng.normal(0, 1, SHAPE).astype(np.float32)
    np.save(os.path.join(out, "test_in0.npy"), x0)
    np.save(os.path.join(out, "test_in1.npy"), x1)
    y0, y1 = forward(x0, x1, p)
    np.save(os.path.join(out, "test_expected0.npy"), y0)
    np.save(os.path.join(out, "test_expected1.npy"), y1)
    print(f"wrote {out}/dual_residual.onnx, {CALIBRATION_PAIRS} calibration pairs and a test pair")


if __name__ == "__main__":
    main()
