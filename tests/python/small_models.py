"""Small ONNX models for the Python tests, written with onnx.helper and
converted with rknn_convert, with NumPy references for their outputs."""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CONV_WEIGHTS = np.random.default_rng(7).uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)
CONV_BIAS = np.linspace(-0.2, 0.2, 4).astype(np.float32)


def conv_relu_onnx(path, height="H", width="W"):
    """x [1, 3, H, W] -> Relu(Conv 3x3, 4 channels, pad 1)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, height, width])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, height, width])
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "conv_relu", [x], [y],
                              [numpy_helper.from_array(CONV_WEIGHTS, "w"), numpy_helper.from_array(CONV_BIAS, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def conv_relu_reference(x_nchw):
    x = np.pad(x_nchw.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    _, _, h, w = x_nchw.shape
    out = np.zeros((1, 4, h, w))
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("oc,nchw->nohw", CONV_WEIGHTS[:, :, dy, dx], x[:, :, dy:dy + h, dx:dx + w])
    return np.maximum(out + CONV_BIAS[None, :, None, None], 0).astype(np.float32)


def add_onnx(path):
    """a [2, 5] + b [2, 5]: two inputs that are not images."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 5])
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 5])
    graph = helper.make_graph([helper.make_node("Add", ["a", "b"], ["s"])], "add2", [a, b], [s])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def convert(build_dir, onnx_path, out_path, *options):
    tool = os.path.join(build_dir, "tools/rknn_convert/rknn_convert")
    subprocess.run([tool, onnx_path, "-o", out_path, "-q"] + list(options), check=True)
    return out_path
