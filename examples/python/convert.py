#!/usr/bin/python3
"""Converts an ONNX image classifier with the Toolkit2-style API, laid out as
rknn_model_zoo's per-model convert.py scripts are, so that such a script runs
against OpenRKNN's rknn module.

usage: convert.py MODEL.onnx [PLATFORM] [i8|fp] [OUT.rknn]
The calibration list is $DATASET_PATH (default ./dataset.txt): one image or
.npy path per line, relative to the list's folder."""
import os
import sys

from rknn.api import RKNN

DATASET_PATH = os.environ.get("DATASET_PATH", "./dataset.txt")
DEFAULT_RKNN_PATH = "./model.rknn"
DEFAULT_QUANT = True


def parse_arg():
    if len(sys.argv) < 2:
        print("usage: python3 %s onnx_model_path [platform] [dtype(optional)] [output_rknn_path(optional)]"
              % sys.argv[0])
        print("       platform: rk3562, rk3566, rk3568, rk3576, rk3588")
        print("       dtype: i8 (quantised, the default) or fp (float16)")
        sys.exit(1)
    model_path = sys.argv[1]
    platform = sys.argv[2] if len(sys.argv) > 2 else "rk3588"
    do_quant = DEFAULT_QUANT
    if len(sys.argv) > 3:
        if sys.argv[3] not in ("i8", "fp"):
            print("ERROR: dtype %s is not i8 or fp" % sys.argv[3])
            sys.exit(1)
        do_quant = sys.argv[3] == "i8"
    output_path = sys.argv[4] if len(sys.argv) > 4 else DEFAULT_RKNN_PATH
    return model_path, platform, do_quant, output_path


if __name__ == "__main__":
    model_path, platform, do_quant, output_path = parse_arg()
    rknn = RKNN(verbose=False)

    print("--> Config model")
    rknn.config(mean_values=[[123.675, 116.28, 103.53]], std_values=[[58.395, 57.12, 57.375]],
                target_platform=platform)
    print("done")

    print("--> Loading model")
    if rknn.load_onnx(model=model_path) != 0:
        print("Load model failed!")
        sys.exit(1)
    print("done")

    print("--> Building model")
    if rknn.build(do_quantization=do_quant, dataset=DATASET_PATH) != 0:
        print("Build model failed!")
        sys.exit(1)
    print("done")

    print("--> Export rknn model")
    if rknn.export_rknn(output_path) != 0:
        print("Export rknn model failed!")
        sys.exit(1)
    print("done")

    rknn.release()
