#!/usr/bin/env python3
"""Generates the demo's small image classifier as an ONNX file, with seeded
random weights, plus a few synthetic calibration inputs (.npy, raw NHWC uint8
pixels, exactly what a user would feed).

The network touches the common converter paths: Conv+BatchNorm+ReLU, a
depthwise conv with ReLU6 (Clip), SiLU written as x*Sigmoid(x), a residual Add,
MaxPool, GlobalAveragePool, Flatten, Gemm and Softmax.

usage: make_demo_model.py OUT_DIR   (needs only python3-onnx and python3-numpy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEED = 7
SIZE = 64          # input height and width
CLASSES = 10
CALIBRATION_IMAGES = 8


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, base):
        self.count += 1
        return "%s_%d" % (base, self.count)

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(array.astype(np.float32), n))
        return n

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def conv_bn(self, x, c_in, c_out, k, stride=1, group=1):
        fan_in = c_in // group * k * k
        w = self.rng.normal(0.0, np.sqrt(2.0 / fan_in), (c_out, c_in // group, k, k))
        y = self.node("Conv", [x, self.const("w", w)], kernel_shape=[k, k], strides=[stride, stride],
                      pads=[k // 2] * 4, group=group)
        # BatchNorm with plausible statistics, so the converter has something to fold.
        gamma = self.const("gamma", self.rng.uniform(0.5, 1.0, c_out))
        beta = self.const("beta", self.rng.uniform(0.0, 0.5, c_out))
        mean = self.const("mean", self.rng.normal(0.0, 0.2, c_out))
        var = self.const("var", self.rng.uniform(0.5, 2.0, c_out))
        return self.node("BatchNormalization", [y, gamma, beta, mean, var], epsilon=1e-5)


def build(rng):
    b = Builder(rng)
    x = b.node("Relu", [b.conv_bn("input", 3, 16, 3, stride=2)])
    six = b.const("six", np.array(6.0))
    zero = b.const("zero", np.array(0.0))
    x = b.node("Clip", [b.conv_bn(x, 16, 16, 3, group=16), zero, six])           # depthwise + ReLU6
    y = b.conv_bn(x, 16, 32, 1)
    x = b.node("Mul", [y, b.node("Sigmoid", [y])])                              # SiLU
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    r = b.node("Relu", [b.conv_bn(x, 32, 32, 3)])
    x = b.node("Add", [b.conv_bn(r, 32, 32, 3), x])                             # residual
    x = b.node("Relu", [x])
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    fc_w = b.const("fc_w", rng.normal(0.0, 0.2, (CLASSES, 32)))
    fc_b = b.const("fc_b", rng.normal(0.0, 0.1, CLASSES))
    x = b.node("Gemm", [x, fc_w, fc_b], transB=1)
    b.nodes.append(helper.make_node("Softmax", [x], ["probabilities"], name="softmax", axis=1))
    graph = helper.make_graph(
        b.nodes, "openrknn_demo_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, CLASSES])],
        b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="openrknn-demo")
    onnx.checker.check_model(model)
    return model


def image(rng):
    """Smooth gradients with a bright blob: varied, natural-ish pixel statistics."""
    t = np.linspace(0.0, 1.0, SIZE)
    yy, xx = np.meshgrid(t, t, indexing="ij")
    img = np.zeros((SIZE, SIZE, 3))
    for c in range(3):
        a, b, p = rng.uniform(0, 255, 3)
        img[..., c] = a * xx + b * yy + p * 0.3
    cy, cx, r = rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8), rng.uniform(0.1, 0.3)
    img[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] += rng.uniform(40, 120)
    img += rng.normal(0, 8, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)[None]  # [1, H, W, 3]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "calibration"), exist_ok=True)
    rng = np.random.RandomState(SEED)
    onnx.save(build(rng), os.path.join(out, "demo_cnn.onnx"))
    names = []
    for i in range(CALIBRATION_IMAGES):
        name = "calibration/pixels_%d.npy" % i
        np.save(os.path.join(out, name), image(rng))
        names.append(name)
    with open(os.path.join(out, "calibration.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    print("wrote %s/demo_cnn.onnx and %d calibration inputs (seed %d)" % (out, CALIBRATION_IMAGES, SEED))


if __name__ == "__main__":
    main()
