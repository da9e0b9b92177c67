#!/usr/bin/python3
"""Classifies an image with RKNN-Toolkit-Lite2's API, written as a Lite2 board
script is: the model takes uint8 RGB pixels (NHWC) and normalises them itself.

usage: classify_lite.py MODEL.rknn IMAGE [TOP]"""
import sys

import numpy as np
from PIL import Image

from rknnlite.api import RKNNLite


def show_top(output, top):
    scores = output.reshape(-1)
    exp = np.exp(scores - scores.max())
    probabilities = exp / exp.sum()
    print("-----TOP %d-----" % top)
    for index in np.argsort(-scores, kind="stable")[:top]:
        print("[%d] score:%.6f" % (index, probabilities[index]))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(1)
    rknn_lite = RKNNLite()

    print("--> Load RKNN model")
    if rknn_lite.load_rknn(sys.argv[1]) != 0:
        print("Load RKNN model failed")
        sys.exit(1)
    print("done")

    print("--> Init runtime environment")
    if rknn_lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0) != 0:
        print("Init runtime environment failed")
        sys.exit(1)
    print("done")

    img = Image.open(sys.argv[2]).convert("RGB").resize((224, 224))
    img = np.expand_dims(np.asarray(img), 0)

    print("--> Running model")
    outputs = rknn_lite.inference(inputs=[img])
    if outputs is None:
        print("Inference failed")
        sys.exit(1)
    show_top(outputs[0], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
    print("done")

    rknn_lite.release()
