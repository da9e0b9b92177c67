#!/usr/bin/python3
"""Comparison baseline only: times PyTorch (CPU, float32, eager) on the
architectures behind the OpenRKNN test ONNX models.

PyTorch cannot load ONNX, so each model is rebuilt from the constructors in
tests/models/export_models.py (imported by path, not copied), with the same
seed and BatchNorm calibration, so the network matches the exported ONNX file.
The model is chosen by the ONNX file's base name; the input shape is read from
the ONNX file itself.

Usage:
  /usr/bin/python3 torch_bench.py MODEL.onnx [MODEL2.onnx ...]
      [--threads N] [--runs R] [--warmup W]
"""

import argparse
import importlib.util
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORT_SCRIPT = os.path.join(HERE, "..", "..", "tests", "models", "export_models.py")


def load_export_module(path=EXPORT_SCRIPT):
    spec = importlib.util.spec_from_file_location("openrknn_export_models", path)
    if spec is None or spec.loader is None:
        sys.exit("cannot import %s" % path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def onnx_input_shape(onnx_path):
    """Shape of the ONNX model's first real (non-initializer) input, or None."""
    import onnx
    model = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        return dims if dims and all(d > 0 for d in dims) else None
    return None


def build_model(em, name, onnx_path):
    """Rebuild model `name` exactly as export_models.export_model() does."""
    import torch
    seed, build, size, _ = em.MODELS[name]
    torch.manual_seed(seed)
    model = build(weights=None)  # random init only: never download weights
    em.calibrate_batchnorm(model, size)  # leaves the model in eval mode
    model.eval()
    shape = onnx_input_shape(onnx_path) if os.path.exists(onnx_path) else None
    if shape is None:
        shape = [1, 3, size, size]
    return model, shape


def bench(model, x, warmup, runs):
    import torch
    times = []
    with torch.inference_mode():
        for _ in range(warmup):
            model(x)
        for _ in range(runs):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), statistics.fmean(times), min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="+", help="ONNX files (base name selects the model)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    if args.threads < 1 or args.runs < 1 or args.warmup < 0:
        parser.error("--threads and --runs must be >= 1, --warmup >= 0")

    import torch
    torch.set_num_threads(args.threads)
    em = load_export_module()
    # export_models sets its own thread count only in main(); keep ours.
    torch.set_num_threads(args.threads)

    failed = 0
    for path in args.models:
        name = os.path.splitext(os.path.basename(path))[0]
        if name not in em.MODELS:
            print("torch %s: unknown model (known: %s)" % (name, ", ".join(em.MODELS)),
                  file=sys.stderr)
            failed += 1
            continue
        model, shape = build_model(em, name, path)
        gen = torch.Generator().manual_seed(1234)
        x = torch.rand(shape, generator=gen) * 4 - 2  # same range as ort_bench.js
        median, mean, best = bench(model, x, args.warmup, args.runs)
        print("torch %s threads=%d median_ms=%.2f mean_ms=%.2f min_ms=%.2f"
              % (name, torch.get_num_threads(), median, mean, best), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
