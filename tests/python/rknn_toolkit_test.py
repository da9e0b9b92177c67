#!/usr/bin/python3
"""rknn.api.RKNN (the Toolkit2 subset) on small models: the files build()
writes are the bytes rknn_convert writes for the same settings (float16,
int8 with a dataset list, mean/std, shape sets, a batch), inference through
init_runtime equals RKNNLite's on the exported file, eval_perf and
accuracy_analysis report every layer, and bad calls give -1/None with an E line.

usage: rknn_toolkit_test.py BUILD_DIR WORK_DIR   (build/python on PYTHONPATH)"""
import contextlib
import io
import os
import subprocess
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import small_models  # noqa: E402
from rknn.api import RKNN  # noqa: E402
from rknnlite.api import RKNNLite  # noqa: E402

BUILD, WORK = sys.argv[1], sys.argv[2]
CONVERT = os.path.join(BUILD, "tools/rknn_convert/rknn_convert")
MEAN, STD = [[10.0, 20.0, 30.0]], [[50.0, 60.0, 70.0]]


def path(name):
    return os.path.join(WORK, name)


def setUpModule():
    os.makedirs(os.path.join(WORK, "samples"), exist_ok=True)
    small_models.conv_relu_onnx(path("conv.onnx"), 16, 16)
    small_models.conv_relu_onnx(path("conv_any.onnx"))
    rng = np.random.default_rng(11)
    with open(path("samples/dataset.txt"), "w") as f:
        for k in range(6):  # float NCHW samples, and uint8 NHWC pixels for the mean/std model
            np.save(path("samples/x%d.npy" % k), rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))
            np.save(path("samples/p%d.npy" % k), rng.integers(0, 256, (1, 16, 16, 3), dtype=np.uint8))
            f.write("x%d.npy\n" % k)
    with open(path("samples/pixels.txt"), "w") as f:
        f.write("".join("p%d.npy\n" % k for k in range(6)))


def quiet(call, *args, **kwargs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        result = call(*args, **kwargs)
    return result, out.getvalue().splitlines()


def cli(onnx, out, *options):
    subprocess.run([CONVERT, onnx, "-o", out, "-q"] + list(options), check=True)
    with open(out, "rb") as f:
        return f.read()


def built(onnx, name, config=None, build=None, load=None):
    rknn = RKNN()
    assert quiet(rknn.config, **(config or {}))[0] == 0
    assert quiet(rknn.load_onnx, onnx, **(load or {}))[0] == 0
    assert quiet(rknn.build, **(build or {"do_quantization": False}))[0] == 0
    assert rknn.export_rknn(path(name)) == 0
    with open(path(name), "rb") as f:
        return rknn, f.read()


class SameAsTheCli(unittest.TestCase):
    def test_float16(self):
        _, data = built(path("conv.onnx"), "tk_fp16.rknn")
        self.assertEqual(data, cli(path("conv.onnx"), path("cli_fp16.rknn"), "--dtype", "fp16"))

    def test_int8_with_a_dataset_list(self):
        rknn, data = built(path("conv.onnx"), "tk_int8.rknn", {"quantized_algorithm": "mmse"},
                           {"do_quantization": True, "dataset": path("samples/dataset.txt")})
        self.assertEqual(data, cli(path("conv.onnx"), path("cli_int8.rknn"), "--dtype", "int8", "--calib", "mmse",
                                   "--dataset", path("samples/dataset.txt")))
        # The runtime half gives RKNNLite's bytes on the exported file.
        x = np.load(path("samples/x0.npy"))
        self.assertEqual(quiet(rknn.init_runtime)[0], 0)
        lite = RKNNLite()
        lite.load_rknn(path("tk_int8.rknn"))
        quiet(lite.init_runtime)
        np.testing.assert_array_equal(rknn.inference([x], data_format="nchw")[0],
                                      lite.inference([x], data_format="nchw")[0])
        table, _ = quiet(rknn.eval_perf, is_print=False)
        self.assertIn("Conv", table)
        self.assertEqual(quiet(rknn.accuracy_analysis, [path("samples/x1.npy")], output_dir=path("snapshot"))[0], 0)
        with open(path("snapshot/error_analysis.txt")) as f:
            text = f.read()
        self.assertIn("Conv", text)
        self.assertEqual(len(rknn.accuracy), 1)
        self.assertGreater(rknn.accuracy[0]["cosine"], 0.99)
        rknn.release()

    def test_mean_std_rgb2bgr_target_and_custom_string(self):
        config = {"mean_values": MEAN, "std_values": STD, "quant_img_RGB2BGR": True, "target_platform": "RK3568",
                  "custom_string": "v1.2"}
        _, data = built(path("conv.onnx"), "tk_pixels.rknn", config,
                        {"do_quantization": True, "dataset": path("samples/pixels.txt")})
        expected = cli(path("conv.onnx"), path("cli_pixels.rknn"), "--dtype", "int8", "--dataset",
                       path("samples/pixels.txt"), "--mean", "10,20,30", "--std", "50,60,70", "--rgb2bgr",
                       "--target", "rk3568", "--custom-string", "v1.2")
        self.assertEqual(data, expected)

    def test_shape_sets_from_dynamic_input_and_a_batch(self):
        config = {"dynamic_input": [[[1, 3, 8, 8]], [[1, 3, 16, 16]]]}
        rknn, data = built(path("conv_any.onnx"), "tk_dyn.rknn", config)
        self.assertEqual(data, cli(path("conv_any.onnx"), path("cli_dyn.rknn"), "--dtype", "fp16",
                                   "--input-shapes", "1,3,8,8", "--input-shapes", "1,3,16,16"))
        quiet(rknn.init_runtime)
        for size in (16, 8):
            x = np.random.default_rng(size).uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
            np.testing.assert_allclose(rknn.inference([x], data_format="nchw")[0],
                                       small_models.conv_relu_reference(x), atol=4e-3)
        _, data = built(path("conv_any.onnx"), "tk_batch.rknn", load={"input_size_list": [[1, 3, 16, 16]]},
                        build={"do_quantization": False, "rknn_batch_size": 3})
        self.assertEqual(data, cli(path("conv_any.onnx"), path("cli_batch.rknn"), "--dtype", "fp16",
                                   "--input-shapes", "1,3,16,16", "--batch", "3"))

    def test_named_inputs(self):
        _, data = built(path("conv_any.onnx"), "tk_named.rknn",
                        load={"inputs": ["x"], "input_size_list": [[1, 3, 16, 16]], "outputs": ["y"]})
        self.assertEqual(data, cli(path("conv_any.onnx"), path("cli_named.rknn"), "--dtype", "fp16",
                                   "--input-shapes", "1,3,16,16"))


class BadCalls(unittest.TestCase):
    def expect_error(self, expected, call, *args, **kwargs):
        result, lines = quiet(call, *args, **kwargs)
        self.assertEqual(result, expected) if expected is not None else self.assertIsNone(result)
        self.assertTrue(any(l.startswith("E ") for l in lines), "no E line: %r" % lines)

    def test_config(self):
        rknn = RKNN()
        for kwargs in ({"target_platform": "rk9999"}, {"quantized_dtype": "w4a16"}, {"quantized_method": "layer"},
                       {"quantized_algorithm": "best"}, {"mean_values": [1, 2, 3]}, {"std_values": [["a"]]},
                       {"mean_values": [[1, 2, 3]], "std_values": [[1, 2, 3], [4, 5, 6]]},
                       {"dynamic_input": [[[1, 3, 0, 8]]]}, {"dynamic_input": "1,3,8,8"},
                       {"custom_string": "x" * 2000}, {"float_dtype": "bfloat16"}, {"quantized_algorithm": [1]},
                       {"custom_string": "\udcff"}, {"quant_img_RGB2BGR": [True, False]},
                       {"quant_img_RGB2BGR": np.array([True])}, {"dynamic_input": [[[1, 3, 2**64, 8]]]}):
            with self.subTest(kwargs=kwargs):
                self.expect_error(-1, rknn.config, **kwargs)
        self.assertEqual(quiet(rknn.config, quant_img_RGB2BGR=[True])[0], 0)  # one per input, as Toolkit2 takes it
        self.assertTrue(rknn._config["rgb2bgr"])
        result, lines = quiet(rknn.config, optimization_level=2, not_a_keyword=1)
        self.assertEqual(result, 0)
        self.assertEqual(sum(l.startswith("W ") for l in lines), 2)

    def test_order_and_files(self):
        rknn = RKNN()
        self.expect_error(-1, rknn.build, do_quantization=False)
        self.expect_error(-1, rknn.export_rknn, path("none.rknn"))
        self.expect_error(-1, rknn.init_runtime)
        self.expect_error(None, rknn.inference, [np.zeros((1, 16, 16, 3), np.float32)])
        self.expect_error(None, rknn.eval_perf)
        self.expect_error(-1, rknn.accuracy_analysis, [path("samples/x0.npy")])
        self.expect_error(-1, rknn.load_onnx, path("missing.onnx"))
        self.expect_error(-1, rknn.load_onnx, 7)
        with open(path("garbage.onnx"), "wb") as f:
            f.write(os.urandom(300))
        self.assertEqual(quiet(rknn.load_onnx, path("garbage.onnx"))[0], 0)  # read at build, as Toolkit2 may
        self.expect_error(-1, rknn.build, do_quantization=False)
        self.expect_error(-1, rknn.load_onnx, path("conv_any.onnx"), inputs=["nope"], input_size_list=[[1, 3, 8, 8]])
        self.expect_error(-1, rknn.load_onnx, path("conv_any.onnx"), inputs=["x"], input_size_list=[[1, 3, 8, 8], [1]])
        self.expect_error(-1, rknn.load_onnx, path("conv_any.onnx"), outputs=["c"])
        self.expect_error(-1, rknn.load_onnx, path("conv_any.onnx"), inputs=5)
        self.expect_error(-1, rknn.load_onnx, path("conv_any.onnx"), input_size_list=5)
        self.expect_error(-1, rknn.load_onnx, path("garbage.onnx"), inputs=["x"])
        self.expect_error(-1, rknn.load_onnx, path("conv_any.onnx"), input_size_list=[[1, 3, 2**64, 8]])
        self.assertEqual(quiet(rknn.load_onnx, path("conv.onnx"))[0], 0)
        self.expect_error(-1, rknn.build, do_quantization=True)  # no dataset
        self.expect_error(-1, rknn.build, do_quantization=True, dataset=path("missing.txt"))
        self.expect_error(-1, rknn.build, do_quantization=False, rknn_batch_size=0)
        self.expect_error(-1, rknn.build, do_quantization=False, rknn_batch_size=True)
        self.expect_error(-1, rknn.build, do_quantization=True, dataset=123)
        self.expect_error(-1, rknn.build, do_quantization=True, dataset=[path("samples/dataset.txt")])
        self.assertEqual(quiet(rknn.build, do_quantization=False)[0], 0)
        self.expect_error(-1, rknn.export_rknn, os.path.join(WORK, "no-such-folder", "m.rknn"))
        self.expect_error(-1, rknn.export_rknn, 1)  # not taken as a file descriptor (stdout)
        self.expect_error(-1, rknn.export_rknn, True)
        os.write(1, b"")  # stdout is still open
        self.expect_error(-1, rknn.accuracy_analysis, "x0.npy")
        self.expect_error(-1, rknn.accuracy_analysis, [path("samples/x0.npy"), path("samples/x1.npy")])
        self.expect_error(-1, rknn.accuracy_analysis, [path("samples/missing.npy")])
        self.assertEqual(quiet(rknn.init_runtime)[0], 0)
        self.expect_error(None, rknn.inference, [np.zeros((1, 3, 15, 16), np.float32)], data_format="nchw")
        rknn.release()
        self.expect_error(None, rknn.inference, [np.zeros((1, 16, 16, 3), np.float32)])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
