#!/usr/bin/env python3
"""Writes the multiple-input demo model: a small two-stream network (two RGB
images -> a conv each -> Add -> ReLU -> conv -> global average pool ->
linear, 10 outputs) as ONNX, with seeded weights, calibration pairs (raw NHWC
uint8 .npy, listed two per line in calibration.txt), one test pair and
PyTorch's float output for it.

usage: make_two_input_model.py OUT_DIR   (needs python3-torch and python3-numpy)
"""
import os
import sys

import numpy as np
import torch
from torch import nn

SEED = 11
SIZE = 32
MEAN = [127.5, 127.5, 127.5]
STD = [64.0, 64.0, 64.0]
CALIBRATION_PAIRS = 8


class TwoStream(nn.Module):
    def __init__(self):
        super().__init__()
        self.left = nn.Conv2d(3, 16, 3, 2, 1)
        self.right = nn.Conv2d(3, 16, 3, 2, 1)
        self.mix = nn.Conv2d(16, 32, 3, 1, 1)
        self.fc = nn.Linear(32, 10)

    def forward(self, left, right):
        x = torch.relu(self.left(left) + self.right(right))
        x = torch.relu(self.mix(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def pixels(rng):
    """Smooth random colour fields: plausible image statistics."""
    base = rng.uniform(0, 255, size=(4, 4, 3))
    img = np.kron(base, np.ones((SIZE // 4, SIZE // 4, 1))) + rng.normal(0, 12, size=(SIZE, SIZE, 3))
    return np.clip(np.round(img), 0, 255).astype(np.uint8)[None]


def normalised(nhwc):
    x = (nhwc.astype(np.float32) - np.float32(MEAN)) / np.float32(STD)
    return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(SEED)
    rng = np.random.RandomState(SEED)
    model = TwoStream().eval()
    lines = []
    for i in range(CALIBRATION_PAIRS):
        names = []
        for side in ("left", "right"):
            name = "calib_%s_%d.npy" % (side, i)
            np.save(os.path.join(out, name), pixels(rng))
            names.append(name)
        lines.append(" ".join(names))
    with open(os.path.join(out, "calibration.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    left, right = pixels(rng), pixels(rng)
    np.save(os.path.join(out, "test_left.npy"), left)
    np.save(os.path.join(out, "test_right.npy"), right)
    with torch.no_grad():
        expected = model(normalised(left), normalised(right)).numpy()
    np.save(os.path.join(out, "test_expected.npy"), expected.astype(np.float32))
    torch.onnx.export(model, (normalised(left), normalised(right)), os.path.join(out, "two_stream.onnx"),
                      input_names=["left", "right"], output_names=["logits"], opset_version=13)
    print("wrote %s/two_stream.onnx, calibration.txt (%d pairs), test_left/right.npy, test_expected.npy"
          % (out, CALIBRATION_PAIRS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
