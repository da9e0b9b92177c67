#!/usr/bin/python3
"""ONNX files written the way other exporters write them (Paddle2ONNX, tf2onnx,
older PyTorch), for opsets 9 to 17:
  - reshape targets computed from Shape/Gather/Slice/Cast/Concat chains, with
    0 and -1 entries, on inputs with symbolic dims;
  - opset-9/10 forms: Upsample, Slice and Clip with attributes, Squeeze and
    Unsqueeze with attribute axes;
  - multi-op spellings the converter folds: HardSwish as x*clip(x+3,0,6)/6,
    LayerNorm decomposed, a standalone BatchNormalization, Div/Sub by constants.

  exporter_forms.py write DIR          the models (DIR/NAME.onnx) and a manifest
  exporter_forms.py check DIR BUILD    converts each with rknn_convert (float32,
      the manifest's --input-shapes), runs it on the CPU through rknn_benchmark,
      and compares with ONNX Runtime (scripts/fetch_models.sh) when it is cached
      or can be fetched; conversion alone is checked otherwise.
The files are also the ONNX importer fuzzer's seeds.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def const(name, value, dtype=np.float32):
    arr = np.asarray(value, dtype=dtype)
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(arr, name + "_value"))


def model(name, nodes, inputs, outputs, opset, initializers=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="exporter_forms")
    m.ir_version = 7 if opset >= 13 else 6
    onnx.checker.check_model(m)
    return m


def output(rank):
    """The graph output "y" with `rank` symbolic dims, as exporters declare it."""
    return helper.make_tensor_value_info("y", TensorProto.FLOAT, ["d%d" % i for i in range(rank)])


def rng_weights(shape, seed):
    return np.random.RandomState(seed).uniform(-0.5, 0.5, size=shape).astype(np.float32)


def paddle_reshape(opset):
    """Paddle2ONNX's attention reshape: [0, Cast(Slice(Cast(Shape(x)))), 3, 4] on [N, T, 12]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 12])
    y = output(4)
    if opset >= 10:
        slice_nodes = [const("st", [1], np.int64), const("en", [2], np.int64), const("ax", [0], np.int64),
                       helper.make_node("Slice", ["shape32", "st", "en", "ax"], ["seq32"])]
    else:
        slice_nodes = [helper.make_node("Slice", ["shape32"], ["seq32"], axes=[0], starts=[1], ends=[2])]
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Cast", ["shape"], ["shape32"], to=TensorProto.INT32)] + slice_nodes + [
        helper.make_node("Cast", ["seq32"], ["seq"], to=TensorProto.INT64),
        const("zero", [0], np.int64), const("three", [3], np.int64), const("four", [4], np.int64),
        helper.make_node("Concat", ["zero", "seq", "three", "four"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["r"]),
        helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 1, 3]),
    ]
    return model("paddle_reshape_%d" % opset, nodes, [x], [y], opset), {"x": [1, 10, 12]}


def flatten_by_shape(opset):
    """PyTorch's x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 4, 4])
    y = output(2)
    unsq = (helper.make_node("Unsqueeze", ["n0", "axes0"], ["n1"]) if opset >= 13
            else helper.make_node("Unsqueeze", ["n0"], ["n1"], axes=[0]))
    nodes = [helper.make_node("Shape", ["x"], ["s"]), const("i0", 0, np.int64),
             helper.make_node("Gather", ["s", "i0"], ["n0"], axis=0), const("axes0", [0], np.int64), unsq,
             const("minus1", [-1], np.int64), helper.make_node("Concat", ["n1", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["y"])]
    return model("flatten_by_shape_%d" % opset, nodes, [x], [y], opset), {"x": [2, 3, 4, 4]}


def legacy_ops(opset):
    """Upsample (opset 9) or Resize (10), Clip and Squeeze with attributes."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 3])
    y = output(3)
    scales = const("scales", [1.0, 1.0, 2.0, 2.0])
    up = (helper.make_node("Upsample", ["x", "scales"], ["u"], mode="nearest") if opset == 9
          else helper.make_node("Resize", ["x", "scales"], ["u"], mode="nearest"))
    nodes = [scales, up, helper.make_node("Clip", ["u"], ["c"], min=-0.5, max=0.5),
             helper.make_node("ReduceMean", ["c"], ["m"], axes=[2], keepdims=1),
             helper.make_node("Squeeze", ["m"], ["y"], axes=[2])]
    return model("legacy_ops_%d" % opset, nodes, [x], [y], opset), {"x": [1, 2, 3, 3]}


def spelled_out(opset):
    """A Conv, its BatchNorm kept apart by a Relu, HardSwish, Div/Sub by constants, LayerNorm."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])
    y = output(4)
    w = numpy_helper.from_array(rng_weights([4, 4, 3, 3], 1), "w")
    bn = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in
          (("g", np.linspace(0.5, 1.5, 4)), ("b", np.linspace(-0.2, 0.2, 4)), ("mu", np.linspace(-0.1, 0.1, 4)),
           ("var", np.linspace(0.5, 2.0, 4)))]
    clip = (helper.make_node("Clip", ["x3"], ["r6"], min=0.0, max=6.0) if opset < 11
            else helper.make_node("Clip", ["x3", "zero", "six"], ["r6"]))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("BatchNormalization", ["r", "g", "b", "mu", "var"], ["n"]),
             const("k", 1.7), helper.make_node("Mul", ["k", "n"], ["s"]),
             const("three", 3.0), helper.make_node("Add", ["s", "three"], ["x3"]),
             const("zero", 0.0), const("six", 6.0), clip,
             helper.make_node("Mul", ["s", "r6"], ["p"]), helper.make_node("Div", ["p", "six"], ["hs"]),
             const("shift", 0.25), helper.make_node("Sub", ["hs", "shift"], ["t"]),
             helper.make_node("ReduceMean", ["t"], ["mean"], axes=[-1]),
             helper.make_node("Sub", ["t", "mean"], ["d"]), const("two", 2.0),
             helper.make_node("Pow", ["d", "two"], ["sq"]), helper.make_node("ReduceMean", ["sq"], ["var2"], axes=[-1]),
             const("eps", 1e-5), helper.make_node("Add", ["var2", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["sd"]), helper.make_node("Div", ["d", "sd"], ["y"])]
    return model("spelled_out_%d" % opset, nodes, [x], [y], opset, [w] + bn), {"x": [1, 4, 6, 6]}


def all_models():
    for opset in (9, 11, 13, 17):
        yield paddle_reshape(opset)
        yield flatten_by_shape(opset)
        yield spelled_out(opset)
    for opset in (9, 10):
        yield legacy_ops(opset)


def write(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    manifest = {}
    for m, shapes in all_models():
        name = m.graph.name
        onnx.save(m, os.path.join(out_dir, name + ".onnx"))
        manifest[name] = shapes
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    print("%d models in %s" % (len(manifest), out_dir))


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def check(out_dir, build):
    write(out_dir)
    with open(os.path.join(out_dir, "manifest.json")) as f:
        manifest = json.load(f)
    build = os.path.abspath(build)
    convert = os.path.join(build, "tools/rknn_convert/rknn_convert")
    benchmark = os.path.join(build, "examples/rknn_benchmark")
    fetch = run([os.path.join(ROOT, "scripts/fetch_models.sh")])
    cache = run([os.path.join(ROOT, "scripts/fetch_models.sh"), "--print-dir"]).stdout.strip()
    ort_dir = os.path.join(cache, "onnxruntime-node-1.30.0")
    with_ort = fetch.returncode == 0 and shutil.which("node") is not None
    if not with_ort:
        print("ONNX Runtime not available: checking conversion only")
    failures = 0
    for name, shapes in sorted(manifest.items()):
        src = os.path.join(out_dir, name + ".onnx")
        dst = os.path.join(out_dir, name + ".rknn")
        shape = shapes["x"]
        r = run([convert, src, "-o", dst, "--dtype", "float32", "-q", "--input-shapes", ",".join(map(str, shape))])
        if r.returncode != 0:
            print("%-22s conversion FAILED: %s" % (name, r.stdout.strip()))
            failures += 1
            continue
        if not with_ort:
            print("%-22s converted" % name)
            continue
        x = np.random.RandomState(7).uniform(-2, 2, size=shape).astype(np.float32)
        work = os.path.join(out_dir, name + "_run")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        np.save(os.path.join(work, "x.npy"), x)
        r = run(["node", os.path.join(ROOT, "tools/ort_reference/ort_run.js"), src, os.path.join(work, "ort"),
                 os.path.join(work, "x.npy")], env=dict(os.environ, ORT_NODE_MODULES=ort_dir))
        if r.returncode != 0:
            print("%-22s ONNX Runtime failed: %s" % (name, r.stdout.strip()))
            failures += 1
            continue
        expected = np.load(os.path.join(work, "ort", "0.npy"))
        # rknn_benchmark feeds a 4-D .npy as NHWC: hand it the NHWC view of the NCHW data.
        fed = x.transpose(0, 2, 3, 1) if x.ndim == 4 else x
        np.save(os.path.join(work, "fed.npy"), np.ascontiguousarray(fed))
        r = run([benchmark, dst, os.path.join(work, "fed.npy"), "1", "1"], cwd=work)
        out = os.path.join(work, "rt_output0.npy")
        if r.returncode != 0 or not os.path.exists(out):
            print("%-22s run FAILED: %s" % (name, r.stdout.strip()[-800:]))
            failures += 1
            continue
        actual = np.load(out).astype(np.float32)
        if actual.size != expected.size:
            print("%-22s output has %d values, ONNX Runtime %d" % (name, actual.size, expected.size))
            failures += 1
            continue
        worst = float(np.abs(actual.ravel() - expected.ravel()).max())
        ok = worst <= 1e-4 * max(1.0, float(np.abs(expected).max()))
        print("%-22s max |difference| from ONNX Runtime %.2e %s" % (name, worst, "ok" if ok else "FAILED"))
        failures += 0 if ok else 1
    return 1 if failures else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        write(sys.argv[2])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
