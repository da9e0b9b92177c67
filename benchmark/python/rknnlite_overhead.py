#!/usr/bin/python3
"""What RKNNLite.inference costs beyond the C API: the same model, input and
library, timed both ways in interleaved rounds.

  C API:    rknn_inputs_set + rknn_run + rknn_outputs_get (want_float, into a
            buffer allocated once) + rknn_outputs_release, called through ctypes
  RKNNLite: inference(inputs=[pixels]), which also checks the input, allocates
            the float32 output arrays and releases the GIL

Prints each round's per-run medians, then the median and spread of the
overhead as a share of the C API's run.

usage: PYTHONPATH=build/python rknnlite_overhead.py LIBRKNNRT MODEL INPUT.npy [ROUNDS] [RUNS]
(the input: uint8 NHWC pixels, as the model takes them)"""
import ctypes
import statistics
import sys
import time

import numpy as np

from rknnlite.api import RKNNLite

RKNN_MAX_DIMS, RKNN_MAX_NAME_LEN = 16, 256
RKNN_QUERY_IN_OUT_NUM, RKNN_QUERY_OUTPUT_ATTR = 0, 2
RKNN_TENSOR_UINT8, RKNN_TENSOR_NHWC = 3, 1


class Input(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint32), ("buf", ctypes.c_void_p), ("size", ctypes.c_uint32),
                ("pass_through", ctypes.c_uint8), ("type", ctypes.c_int), ("fmt", ctypes.c_int)]


class Output(ctypes.Structure):
    _fields_ = [("want_float", ctypes.c_uint8), ("is_prealloc", ctypes.c_uint8), ("index", ctypes.c_uint32),
                ("buf", ctypes.c_void_p), ("size", ctypes.c_uint32)]


class TensorAttr(ctypes.Structure):
    _fields_ = [("index", ctypes.c_uint32), ("n_dims", ctypes.c_uint32), ("dims", ctypes.c_uint32 * RKNN_MAX_DIMS),
                ("name", ctypes.c_char * RKNN_MAX_NAME_LEN), ("n_elems", ctypes.c_uint32),
                ("size", ctypes.c_uint32), ("fmt", ctypes.c_int), ("type", ctypes.c_int),
                ("qnt_type", ctypes.c_int), ("fl", ctypes.c_int8), ("zp", ctypes.c_int32),
                ("scale", ctypes.c_float), ("w_stride", ctypes.c_uint32), ("size_with_stride", ctypes.c_uint32),
                ("pass_through", ctypes.c_uint8), ("h_stride", ctypes.c_uint32)]


class CApiRunner:
    def __init__(self, library, model_bytes, pixels):
        self.lib = ctypes.CDLL(library)
        self.ctx = ctypes.c_uint64(0)
        model = ctypes.create_string_buffer(model_bytes, len(model_bytes))
        if self.lib.rknn_init(ctypes.byref(self.ctx), model, len(model_bytes), 0, None) != 0:
            sys.exit("rknn_init failed")
        io = (ctypes.c_uint32 * 2)()
        self.lib.rknn_query(self.ctx, RKNN_QUERY_IN_OUT_NUM, io, ctypes.sizeof(io))
        self.pixels = np.ascontiguousarray(pixels)
        self.inputs = (Input * 1)(Input(0, self.pixels.ctypes.data, self.pixels.nbytes, 0, RKNN_TENSOR_UINT8,
                                        RKNN_TENSOR_NHWC))
        self.buffers = []
        self.outputs = (Output * io[1])()
        for i in range(io[1]):
            attr = TensorAttr(index=i)
            self.lib.rknn_query(self.ctx, RKNN_QUERY_OUTPUT_ATTR, ctypes.byref(attr), ctypes.sizeof(attr))
            buffer = np.empty(attr.n_elems, np.float32)
            self.buffers.append(buffer)
            self.outputs[i] = Output(1, 1, i, buffer.ctypes.data, buffer.nbytes)

    def run(self):
        n = len(self.outputs)
        if (self.lib.rknn_inputs_set(self.ctx, 1, self.inputs) != 0 or self.lib.rknn_run(self.ctx, None) != 0 or
                self.lib.rknn_outputs_get(self.ctx, n, self.outputs, None) != 0):
            sys.exit("a C API call failed")
        self.lib.rknn_outputs_release(self.ctx, n, self.outputs)
        return self.buffers

    def close(self):
        self.lib.rknn_destroy(self.ctx)


def per_run_ms(call, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    library, model_path, input_path = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 50
    pixels = np.load(input_path)
    with open(model_path, "rb") as f:
        model_bytes = f.read()
    c_api = CApiRunner(library, model_bytes, pixels)
    lite = RKNNLite()
    if lite.load_rknn(model_path) != 0 or lite.init_runtime() != 0:
        sys.exit("RKNNLite could not load the model")
    # Both give the same values (and warm up).
    got = lite.inference(inputs=[pixels])
    want = c_api.run()
    if not all(np.array_equal(a.ravel(), b) for a, b in zip(got, want)):
        sys.exit("RKNNLite and the C API disagree")
    shares = []
    print("round  C API ms  RKNNLite ms  overhead")
    for r in range(rounds):
        order = [("c", c_api.run), ("lite", lambda: lite.inference(inputs=[pixels]))]
        if r % 2:
            order.reverse()
        ms = {name: per_run_ms(call, runs) for name, call in order}
        shares.append((ms["lite"] - ms["c"]) / ms["c"])
        print("%5d  %8.3f  %11.3f  %+7.2f%%" % (r, ms["c"], ms["lite"], 100 * shares[-1]))
    print("overhead of RKNNLite.inference over the C API: median %+.2f%% of a run (range %+.2f%% to %+.2f%%, "
          "%d rounds of %d runs)" % (100 * statistics.median(shares), 100 * min(shares), 100 * max(shares), rounds,
                                     runs))
    lite.release()
    c_api.close()


if __name__ == "__main__":
    main()
