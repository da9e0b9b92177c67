#!/usr/bin/env python3
"""Writes the CumSum plugin example's model: a float input [1, 4, 16, 16], a
1x1 convolution to 8 channels, ONNX CumSum along the width (axis 3, given
as an int64 constant input, reverse=1), then a 1x1 convolution and ReLU, as
ONNX with seeded weights. Also calibration inputs (float32 NCHW .npy,
listed in calibration.txt), one test input (NCHW, and NHWC for
rknn_benchmark), and NumPy's float output for it.

usage: make_cumsum_model.py OUT_DIR   (needs python3-onnx and python3-numpy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 11
SHAPE = (1, 4, 16, 16)
MID = 8
AXIS = 3
CALIBRATION = 8


def conv1x1(x, w, b):
    return np.einsum("oc,nchw->nohw", w, x) + b.reshape(1, -1, 1, 1)


def forward(x, p):
    a = conv1x1(x.astype(np.float64), p["w0"], p["b0"])
    s = np.flip(np.cumsum(np.flip(a, AXIS), AXIS), AXIS)  # reverse=1, exclusive=0
    return np.maximum(conv1x1(s, p["w1"], p["b1"]), 0).astype(np.float32)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(SEED)
    p = {"w0": rng.normal(0, 0.4, (MID, SHAPE[1])).astype(np.float32),
         "b0": rng.normal(0, 0.1, (MID,)).astype(np.float32),
         "w1": rng.normal(0, 0.3, (MID, MID)).astype(np.float32),
         "b1": rng.normal(0, 0.1, (MID,)).astype(np.float32)}
    inits = [numpy_helper.from_array(p["w0"].reshape(MID, -1, 1, 1), "w0"), numpy_helper.from_array(p["b0"], "b0"),
             numpy_helper.from_array(p["w1"].reshape(MID, -1, 1, 1), "w1"), numpy_helper.from_array(p["b1"], "b1"),
             numpy_helper.from_array(np.array(AXIS, dtype=np.int64), "axis")]
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["a"], name="conv0"),
        helper.make_node("CumSum", ["a", "axis"], ["s"], name="cumsum", reverse=1),
        helper.make_node("Conv", ["s", "w1", "b1"], ["c"], name="conv1"),
        helper.make_node("Relu", ["c"], ["y"], name="relu"),
    ]
    mid = [1, MID, SHAPE[2], SHAPE[3]]
    graph = helper.make_graph(
        nodes, "cumsum_plugin_example",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, mid)],
        inits,
        value_info=[helper.make_tensor_value_info("s", TensorProto.FLOAT, mid)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), os.path.join(out, "cumsum.onnx"))
    names = []
    for k in range(CALIBRATION):
        name = f"calib_{k}.npy"
        np.save(os.path.join(out, name), rng.normal(0, 1, SHAPE).astype(np.float32))
        names.append(name)
    with open(os.path.join(out, "calibration.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    x = rng.normal(0, 1, SHAPE).astype(np.float32)
    np.save(os.path.join(out, "test_x.npy"), x)
    # rknn_benchmark, as the vendor's, takes a 4-D input as NHWC.
    np.save(os.path.join(out, "test_x_nhwc.npy"), np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
    np.save(os.path.join(out, "test_y.npy"), forward(x, p))


if __name__ == "__main__":
    main()
