#!/usr/bin/python3
"""tools/compare_dumps.py on the dumps (RKNN_LOG_LEVEL=5) of two runs of one
int8 model: through the rknpu and the rocket mock drivers they are the same
bytes (exit 0 with --exact); one changed value makes the layer DIFFER (exit 1).

usage: compare_dumps_test.py BUILD_DIR WORK_DIR"""
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import small_models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD, WORK = sys.argv[1:3]


def dump(model, folder, driver):
    env = dict(os.environ, RKNN_LOG_LEVEL="5", RKNN_DUMP_DIR=folder, RKNN_MOCK_DRIVER=driver)
    subprocess.run([os.path.join(BUILD, "examples/rknn_benchmark"), model, os.path.join(WORK, "x.npy"), "1"],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def compare(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools/compare_dumps.py")] + list(args),
                          stdout=subprocess.PIPE, text=True)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    small_models.conv_relu_onnx(os.path.join(WORK, "conv.onnx"), 16, 16)
    rng = np.random.default_rng(3)
    with open(os.path.join(WORK, "list.txt"), "w") as f:
        for k in range(4):
            np.save(os.path.join(WORK, "s%d.npy" % k), rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))
            f.write("s%d.npy\n" % k)
    np.save(os.path.join(WORK, "x.npy"), rng.uniform(-1, 1, (1, 16, 16, 3)).astype(np.float32))
    model = small_models.convert(BUILD, os.path.join(WORK, "conv.onnx"), os.path.join(WORK, "conv.rknn"),
                                 "--dtype", "int8", "--dataset", os.path.join(WORK, "list.txt"))
    a, b = os.path.join(WORK, "a"), os.path.join(WORK, "b")
    dump(model, a, "rknpu")
    dump(model, b, "rocket")
    same = compare(a, b, "--exact")
    print(same.stdout)
    if same.returncode != 0 or "0 of 2 layers differ" not in same.stdout:
        sys.exit("the two drivers' dumps should be the same bytes")
    last = max(glob.glob(os.path.join(b, "*_1_Conv_*.npy")), key=lambda p: int(os.path.basename(p).split("_")[0]))
    values = np.load(last)
    values.ravel()[0] += 1
    np.save(last, values)
    changed = compare(a, b, "--exact")
    print(changed.stdout)
    if changed.returncode != 1 or "DIFFER" not in changed.stdout:
        sys.exit("a changed value must make its layer DIFFER and the exit status 1")
    # Two inputs share position 0: both are compared.
    small_models.add_onnx(os.path.join(WORK, "add.onnx"))
    add = small_models.convert(BUILD, os.path.join(WORK, "add.onnx"), os.path.join(WORK, "add.rknn"), "--dtype", "fp16")
    np.save(os.path.join(WORK, "a.npy"), rng.uniform(-1, 1, (2, 5)).astype(np.float32))
    c, d = os.path.join(WORK, "c"), os.path.join(WORK, "d")
    for folder in (c, d):
        env = dict(os.environ, RKNN_LOG_LEVEL="5", RKNN_DUMP_DIR=folder)
        inputs = os.path.join(WORK, "a.npy") + "#" + os.path.join(WORK, "a.npy")
        subprocess.run([os.path.join(BUILD, "examples/rknn_benchmark"), add, inputs, "1"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    both = compare(c, d, "--exact")
    print(both.stdout)
    rows = [line.split() for line in both.stdout.splitlines()[1:-1]]
    if both.returncode != 0 or sorted(r[2] for r in rows if r[1] == "InputOperator") != ["a", "b"]:
        sys.exit("both inputs of the Add must be compared")
    return 0


if __name__ == "__main__":
    sys.exit(main())
