#!/usr/bin/python3
"""Compares two folders of per-layer dumps (RKNN_LOG_LEVEL=5) layer by layer,
for example OpenRKNN on a board's NPU against OpenRKNN on the mock (int8
should be byte for byte the same), or against another runtime's dumps.

Files of folder A are named as OpenRKNN writes them,
<run>_<position>_<OpType>_<tensor>.npy; the last run in A is used (empty the
folders before dumping: runs of another model would mix in). A file of folder B
matches when it is named the same way with the same <tensor>, or else when its
name ends in "_<tensor>.npy" or is "<tensor>.npy" (another runtime's naming);
several such files are reported as ambiguous. Values are compared as float64,
flattened; a layer whose element counts differ is listed as such.

usage: compare_dumps.py DIR_A DIR_B [--exact]
  --exact   exit 1 unless every matched layer is the same bytes
Prints one line per layer of A: max |a - b|, cosine, and whether the bytes match."""
import argparse
import os
import re
import sys

import numpy as np

OURS = re.compile(r"^(\d+)_(\d+)_([^_]+)_(.+)\.npy$")


def our_layers(folder):
    """{(position, tensor): (op_type, path)} of the last run in the folder (the
    inputs share position 0, and an op's outputs share its position)."""
    runs = {}
    for name in os.listdir(folder):
        m = OURS.match(name)
        if m:
            runs.setdefault(int(m.group(1)), {})[(int(m.group(2)), m.group(4))] = (m.group(3),
                                                                                   os.path.join(folder, name))
    if not runs:
        sys.exit("%s holds no <run>_<position>_<OpType>_<tensor>.npy files" % folder)
    tensors = {frozenset(t for _, t in layers) for layers in runs.values()}
    if len(tensors) > 1:
        print("warning: %s holds runs of different models; comparing its last run" % folder, file=sys.stderr)
    return runs[max(runs)]


def find_in(folder, tensor, cache={}):
    """(path, None) of the file of `folder` for `tensor`, or (None, why not):
    OpenRKNN's naming first (the last run), else a name that ends in
    "_<tensor>.npy" or is "<tensor>.npy"."""
    if folder not in cache:
        names = [n for n in os.listdir(folder) if n.endswith(".npy")]
        ours = {}
        for name in names:
            m = OURS.match(name)
            if m and (m.group(4) not in ours or int(m.group(1)) > ours[m.group(4)][0]):
                ours[m.group(4)] = (int(m.group(1)), name)
        cache[folder] = (names, ours)
    names, ours = cache[folder]
    if tensor in ours:
        return os.path.join(folder, ours[tensor][1]), None
    found = [n for n in names if n == tensor + ".npy" or n.endswith("_" + tensor + ".npy")]
    if len(found) > 1:
        return None, "ambiguous in %s: %s" % (folder, ", ".join(sorted(found)[:3]))
    return (os.path.join(folder, found[0]), None) if found else (None, "not in " + folder)


def cosine(a, b):
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return float(np.dot(a, b) / (na * nb))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--exact", action="store_true")
    args = parser.parse_args()
    layers = our_layers(args.a)
    differing = 0
    print("%4s %-16s %-48s %12s %9s %s" % ("pos", "op", "tensor", "max |a-b|", "cosine", "bytes"))
    for position, tensor in sorted(layers):
        op, path_a = layers[(position, tensor)]
        path_b, why = find_in(args.b, tensor)
        if path_b is None:
            print("%4d %-16s %-48s %s" % (position, op, tensor[:48], why))
            continue
        try:
            a, b = np.load(path_a), np.load(path_b)
        except (OSError, ValueError) as e:
            sys.exit("cannot read %s or %s: %s" % (path_a, path_b, e))
        if a.size != b.size:
            print("%4d %-16s %-48s element counts differ: %s vs %s" % (position, op, tensor[:48], a.shape, b.shape))
            differing += 1
            continue
        same = a.dtype == b.dtype and a.tobytes() == b.tobytes()
        differing += 0 if same else 1
        fa, fb = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
        print("%4d %-16s %-48s %12.6g %9.6f %s" % (position, op, tensor[:48], np.abs(fa - fb).max() if fa.size else 0,
                                                   cosine(fa, fb), "same" if same else "DIFFER"))
    print("%d of %d layers differ" % (differing, len(layers)))
    return 1 if args.exact and differing else 0


if __name__ == "__main__":
    sys.exit(main())
