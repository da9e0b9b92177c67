#!/usr/bin/python3
"""rknnlite.api.RKNNLite on small models: outputs against NumPy, input layouts
and types, dynamic shapes, several inputs, core masks, async frames, threads,
and every kind of bad call (each gives Lite2's return value and an "E" line,
never a crash).

usage: rknnlite_test.py BUILD_DIR WORK_DIR   (build/python must be on PYTHONPATH)"""
import contextlib
import io
import os
import sys
import threading
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import small_models  # noqa: E402
from rknnlite.api import RKNNLite  # noqa: E402

BUILD, WORK = sys.argv[1], sys.argv[2]
FP16_TOLERANCE = 4e-3  # |output| < 4 here; float16 keeps about 3 decimal digits


def model(name):
    return os.path.join(WORK, name)


def setUpModule():
    os.makedirs(WORK, exist_ok=True)
    small_models.conv_relu_onnx(model("conv.onnx"))
    small_models.add_onnx(model("add.onnx"))
    small_models.convert(BUILD, model("conv.onnx"), model("conv16.rknn"), "--dtype", "fp16",
                         "--input-shapes", "1,3,16,16")
    small_models.convert(BUILD, model("conv.onnx"), model("conv_dyn.rknn"), "--dtype", "fp16",
                         "--input-shapes", "1,3,8,8", "--input-shapes", "1,3,16,16")
    small_models.convert(BUILD, model("add.onnx"), model("add.rknn"), "--dtype", "fp16")


def lite(path, **init):
    r = RKNNLite()
    assert r.load_rknn(path) == 0
    assert r.init_runtime(**init) == 0
    return r


def quiet(call, *args, **kwargs):
    """(result, printed lines) of a call."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = call(*args, **kwargs)
    return result, out.getvalue().splitlines()


def image(rng, h=16, w=16):
    return rng.uniform(-1, 1, (1, 3, h, w)).astype(np.float32)


class Outputs(unittest.TestCase):
    def test_nhwc_and_nchw_inputs_give_the_reference(self):
        r = lite(model("conv16.rknn"))
        x = image(np.random.default_rng(1))
        expected = small_models.conv_relu_reference(x)
        nhwc = r.inference(inputs=[x.transpose(0, 2, 3, 1)])  # the default for 4-D inputs
        nchw = r.inference(inputs=[x], data_format=["nchw"])
        self.assertEqual(nhwc[0].shape, (1, 4, 16, 16))
        self.assertEqual(nhwc[0].dtype, np.float32)
        np.testing.assert_allclose(nhwc[0], expected, atol=FP16_TOLERANCE)
        np.testing.assert_array_equal(nhwc[0], nchw[0])
        # A strided view and float64 arrive as the same values.
        strided = np.ascontiguousarray(x.transpose(0, 2, 3, 1)[:, :, ::-1])[:, :, ::-1]
        np.testing.assert_array_equal(r.inference([strided])[0], nhwc[0])
        np.testing.assert_array_equal(r.inference([x.astype(np.float64)], data_format="nchw")[0], nchw[0])
        # data_type converts the array first.
        np.testing.assert_array_equal(r.inference([x], data_type="float32", data_format="nchw")[0], nchw[0])
        r.release()

    def test_two_inputs_that_are_not_images(self):
        r = lite(model("add.rknn"))
        rng = np.random.default_rng(2)
        a, b = rng.uniform(-1, 1, (2, 2, 5)).astype(np.float32)
        out = r.inference([a, b], data_format=["nchw", "nhwc"])  # not 4-D: the format is not used
        self.assertEqual(out[0].shape, (2, 5))
        np.testing.assert_allclose(out[0], a + b, atol=FP16_TOLERANCE)
        r.release()

    def test_dynamic_shapes_follow_the_arrays(self):
        r = lite(model("conv_dyn.rknn"))
        rng = np.random.default_rng(3)
        for size in (8, 16, 8):
            x = image(rng, size, size)
            out = r.inference([x], data_format="nchw")
            self.assertEqual(out[0].shape, (1, 4, size, size))
            np.testing.assert_allclose(out[0], small_models.conv_relu_reference(x), atol=FP16_TOLERANCE)
        result, lines = quiet(r.inference, [image(rng, 12, 12)], data_format="nchw")
        self.assertIsNone(result)
        self.assertTrue(any(l.startswith("E ") and "[1, 8, 8, 3]" in l for l in lines), lines)
        x = image(rng, 16, 16)
        np.testing.assert_allclose(r.inference([x.transpose(0, 2, 3, 1)])[0], small_models.conv_relu_reference(x),
                                   atol=FP16_TOLERANCE)
        r.release()

    def test_core_masks_give_the_same_bytes(self):
        x = image(np.random.default_rng(4))
        expected = lite(model("conv16.rknn")).inference([x], data_format="nchw")[0]
        for mask in (RKNNLite.NPU_CORE_0, RKNNLite.NPU_CORE_2, RKNNLite.NPU_CORE_0_1, RKNNLite.NPU_CORE_0_1_2,
                     RKNNLite.NPU_CORE_ALL):
            r = lite(model("conv16.rknn"), core_mask=mask)
            np.testing.assert_array_equal(r.inference([x], data_format="nchw")[0], expected, "mask %d" % mask)
            r.release()

    def test_async_mode_returns_the_frame_before(self):
        r = lite(model("conv16.rknn"), async_mode=True)
        rng = np.random.default_rng(5)
        xs = [image(rng) for _ in range(3)]
        first = r.inference([xs[0]], data_format="nchw", get_frame_id=True)
        self.assertEqual(first[-1], 1)
        np.testing.assert_allclose(first[0], small_models.conv_relu_reference(xs[0]), atol=FP16_TOLERANCE)
        second = r.inference([xs[1]], data_format="nchw", get_frame_id=True)
        third = r.inference([xs[2]], data_format="nchw", get_frame_id=True)
        self.assertEqual((second[-1], third[-1]), (1, 2))
        np.testing.assert_allclose(third[0], small_models.conv_relu_reference(xs[1]), atol=FP16_TOLERANCE)
        r.release()

    def test_async_mode_with_changing_shapes(self):
        r = lite(model("conv_dyn.rknn"), async_mode=True)
        rng = np.random.default_rng(12)
        xs = [image(rng, 8, 8), image(rng, 16, 16), image(rng, 8, 8)]
        got = [r.inference([x], data_format="nchw", get_frame_id=True) for x in xs]
        # Each call hands out the frame before (the first its own), in that frame's shape.
        for k, (out, source) in enumerate(zip(got, [xs[0], xs[0], xs[1]])):
            self.assertIsNotNone(out, "call %d" % k)
            self.assertEqual(out[0].shape, source.shape[:1] + (4,) + source.shape[2:], "call %d" % k)
            np.testing.assert_allclose(out[0], small_models.conv_relu_reference(source), atol=FP16_TOLERANCE)
        self.assertEqual([out[-1] for out in got], [1, 1, 2])
        r.release()

    def test_pass_through_takes_exactly_the_native_bytes(self):
        r = lite(model("conv16.rknn"))
        size = r._runtime.input_attr(0, False, True)["size_with_stride"]
        self.assertIsNotNone(r.inference([np.zeros(size, np.uint8)], inputs_pass_through=[1]))
        self.assertIsNotNone(r.inference([np.zeros(size // 2, np.float16)], inputs_pass_through=[True]))
        for wrong in (np.zeros(size + 1, np.uint8), np.zeros(size // 2, np.float32), np.zeros(1, np.uint8)):
            result, lines = quiet(r.inference, [wrong], inputs_pass_through=[1])
            self.assertIsNone(result)
            self.assertTrue(any(l.startswith("E ") and "native bytes" in l for l in lines), lines)
        r.release()

    def test_numpy_ints_and_verbose_leave_the_environment(self):
        before = os.environ.get("RKNN_LOG_LEVEL")
        r = RKNNLite(verbose=True)
        quiet(r.load_rknn, model("conv16.rknn"))
        self.assertEqual(quiet(r.init_runtime, core_mask=np.int64(RKNNLite.NPU_CORE_1))[0], 0)
        _, lines = quiet(r.inference, [image(np.random.default_rng(13))], data_format="nchw")
        self.assertTrue(any("the first run, layer by layer" in l for l in lines), lines)
        self.assertEqual(os.environ.get("RKNN_LOG_LEVEL"), before)
        r.release()
        quiet(RKNNLite, verbose=True, verbose_file=1)  # not a path: a warning, and stdout stays open
        os.write(1, b"")

    def test_threads_share_one_object_and_own_others(self):
        rng = np.random.default_rng(6)
        xs = [image(rng) for _ in range(4)]
        shared = lite(model("conv16.rknn"))
        expected = [shared.inference([x], data_format="nchw")[0] for x in xs]
        failures = []

        def work(r, k):
            for _ in range(10):
                out = r.inference([xs[k]], data_format="nchw")
                if out is None or not np.array_equal(out[0], expected[k]):
                    failures.append(k)
        own = [lite(model("conv16.rknn")) for _ in range(2)]
        threads = [threading.Thread(target=work, args=(shared, k)) for k in range(4)]
        threads += [threading.Thread(target=work, args=(own[k], k)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])


class Information(unittest.TestCase):
    def test_sdk_version_after_init_only(self):
        r = RKNNLite()
        result, lines = quiet(r.get_sdk_version)
        self.assertIsNone(result)
        self.assertTrue(lines and lines[0].startswith("E "))
        r.load_rknn(model("conv16.rknn"))
        r.init_runtime()
        version = r.get_sdk_version()
        self.assertIn("RKNN VERSION:", version)
        self.assertRegex(version, r"API: \d+\.\d+\.\d+")
        self.assertRegex(version, r"DRV: \d+\.\d+\.\d+")

    def test_target_platforms(self):
        r = RKNNLite()
        result, lines = quiet(r.list_support_target_platform, model("conv16.rknn"))
        self.assertEqual(result, {"filled_target_platform": ["rk3588"], "support_target_platform": ["RK3588", "RK3588S"]})
        self.assertIn("Target platforms filled in RKNN model:         ['rk3588']", lines)
        everything, _ = quiet(r.list_support_target_platform)
        self.assertIn("RK3566", everything["RK3566_RK3568"])
        for content in (b"", b"RKNN" + bytes(60), b"\x10\x00\x00\x00\xff\xff\xff\x7fORKN" + bytes(8), os.urandom(100)):
            with open(model("bad.rknn"), "wb") as f:
                f.write(content)
            result, lines = quiet(r.list_support_target_platform, model("bad.rknn"))
            self.assertIsNone(result)
            self.assertTrue(any(l.startswith("E ") for l in lines), lines)
        self.assertIsNone(quiet(r.list_support_target_platform, model("missing.rknn"))[0])

    def test_verbose_file_receives_the_lines(self):
        path = model("verbose.log")
        if os.path.exists(path):
            os.remove(path)
        r = RKNNLite(verbose=True, verbose_file=path)
        quiet(r.load_rknn, model("conv16.rknn"))
        quiet(r.init_runtime)
        r.release()
        with open(path) as f:
            text = f.read()
        self.assertIn("D loaded", text)
        self.assertIn("D runtime ready: 1 input(s), 1 output(s)", text)


class BadCalls(unittest.TestCase):
    def expect_error(self, expected, call, *args, **kwargs):
        result, lines = quiet(call, *args, **kwargs)
        self.assertEqual(result, expected) if expected is not None else self.assertIsNone(result)
        self.assertTrue(any(l.startswith("E ") for l in lines), "no E line: %r" % lines)
        return lines

    def test_calls_out_of_order(self):
        r = RKNNLite()
        x = image(np.random.default_rng(7))
        self.expect_error(None, r.inference, [x])
        self.expect_error(-1, r.init_runtime)
        self.expect_error(-1, r.load_rknn, model("missing.rknn"))
        self.expect_error(-1, r.load_rknn, None)
        self.expect_error(-1, r.load_rknn, WORK)  # a folder
        self.expect_error(-1, r.load_rknn, 0)  # not a path (nor taken as a file descriptor)
        self.expect_error(-1, r.load_rknn, (1, 2))
        self.expect_error(-1, r.load_rknn, np.zeros(3))
        self.assertIsNone(quiet(r.list_support_target_platform, 0)[0])
        self.assertEqual(r.load_rknn(model("conv16.rknn")), 0)
        self.assertEqual(r.init_runtime(), 0)
        self.assertEqual(r.init_runtime(), 0)  # again: the first runtime goes
        r.release()
        r.release()
        self.expect_error(None, r.inference, [x])
        self.assertEqual(r.init_runtime(), 0)  # the model is kept
        self.assertIsNotNone(r.inference([x], data_format="nchw"))

    def test_bad_model_files(self):
        with open(model("conv16.rknn"), "rb") as f:
            good = f.read()
        cases = {"empty": b"", "vendor": b"RKNN" + bytes(200), "truncated": good[:len(good) // 2],
                 "noise": os.urandom(4096), "flipped": good[:40] + bytes(b ^ 0xff for b in good[40:200]) + good[200:]}
        for name, content in cases.items():
            path = model("bad_%s.rknn" % name)
            with open(path, "wb") as f:
                f.write(content)
            r = RKNNLite()
            self.assertEqual(r.load_rknn(path), 0)  # read only; the runtime judges it
            self.expect_error(-1, r.init_runtime)
            self.expect_error(None, r.inference, [image(np.random.default_rng(8))])

    def test_bad_core_masks(self):
        r = RKNNLite()
        r.load_rknn(model("conv16.rknn"))
        for mask in (-1, 1 << 20, "0", 1.0, True):
            self.expect_error(-1, r.init_runtime, core_mask=mask)
        # A mask naming a core the SoC lacks is the runtime's to refuse.
        self.expect_error(-1, r.init_runtime, core_mask=8)

    def test_bad_inputs(self):
        r = lite(model("conv16.rknn"))
        rng = np.random.default_rng(9)
        x = image(rng)
        nhwc = x.transpose(0, 2, 3, 1)
        cases = [
            ([], {}),                                     # no input
            ([x, x], {}),                                 # too many
            (x, {}),                                      # an array, not a list
            ("x", {}),
            (None, {}),
            ([x.tolist()], {}),                           # a list, not an array
            ([x], {}),                                    # NCHW without saying so
            ([nhwc[:, :8]], {}),                          # wrong size
            ([np.zeros((1, 16, 16, 3), np.complex64)], {}),
            ([np.zeros((1, 16, 16, 3), object)], {}),
            ([np.zeros((1, 16, 16, 3), "U1")], {}),
            ([nhwc], {"data_format": "nwhc"}),
            ([nhwc], {"data_format": ["nhwc", "nchw"]}),
            ([nhwc], {"data_format": 3}),
            ([nhwc], {"data_type": "float64"}),
            ([nhwc], {"data_type": ["uint8", "uint8"]}),
            ([nhwc], {"inputs_pass_through": [2]}),
            ([nhwc], {"inputs_pass_through": "yes"}),
            ([nhwc.astype(np.uint8)[:, :, :, :2]], {}),
            ([nhwc.astype(np.int32)], {}),                # a dtype the runtime does not convert
            ([np.float32(1.0)], {}),
            ([np.array(1.0, np.float32)], {}),            # 0-d
            ([nhwc], {"data_type": [["uint8"]]}),
            ([nhwc], {"data_type": [{}]}),
            ([np.zeros((1, 16, 16, 3), "U1")], {"data_type": "float32"}),
            ([nhwc], {"inputs_pass_through": [np.array([1, 0])]}),
            ([nhwc], {"inputs_pass_through": [0.5]}),
        ]
        for inputs, kwargs in cases:
            with self.subTest(inputs=type(inputs).__name__, kwargs=kwargs):
                self.expect_error(None, r.inference, inputs, **kwargs)
        # Pass-through bytes of the wrong size are the runtime's to refuse.
        self.expect_error(None, r.inference, [np.zeros(7, np.uint8)], inputs_pass_through=[1])
        # The object still works after all of that.
        np.testing.assert_allclose(r.inference([nhwc])[0], small_models.conv_relu_reference(x), atol=FP16_TOLERANCE)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
