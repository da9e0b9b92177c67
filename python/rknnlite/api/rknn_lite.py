"""RKNNLite: RKNN-Toolkit-Lite2's Python API over librknnrt.

Calls return what Lite2's do (0 or -1; None for a failed inference) and say
why on a line starting with "E". The runtime logs its own reasons too."""
import operator
import os
import threading

import numpy as np

from . import lite_inputs
from . import model_file
from .lite_log import LiteLog
from .paths import is_path
from ._rknnlite import RknnError, Runtime

_RKNN_FLAG_ASYNC_MASK = 0x4


def _output_shapes(runtime, current):
    return [runtime.output_attr(i, current)["dims"] for i in range(runtime.n_outputs)]


def _core_mask(value):
    """The mask as an int (numpy ints too), or None when it cannot be one."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        mask = operator.index(value)
    except TypeError:
        return None
    return mask if 0 <= mask <= 0xffff else None


class RKNNLite:
    NPU_CORE_AUTO = 0
    NPU_CORE_0 = 1
    NPU_CORE_1 = 2
    NPU_CORE_2 = 4
    NPU_CORE_0_1 = 3
    NPU_CORE_0_1_2 = 7
    NPU_CORE_ALL = 0xffff

    def __init__(self, verbose=False, verbose_file=None):
        self.log = LiteLog(verbose, verbose_file)
        self.verbose = self.log.verbose
        self._model = None
        self._runtime = None
        self._lock = threading.Lock()  # init_runtime and release against inference

    # ---- model and runtime -------------------------------------------------

    def load_rknn(self, path):
        # (An int would pass os.path.isfile as a file descriptor.)
        if not is_path(path) or not os.path.isfile(path):
            self.log.e("Invalid RKNN model path: %r" % (path,))
            return -1
        try:
            with open(path, "rb") as f:
                self._model = f.read()
        except OSError as e:
            self.log.e("Cannot read the RKNN model %s: %s" % (path, e.strerror))
            return -1
        self.log.d("loaded %s (%d bytes)" % (path, len(self._model)))
        return 0

    def _load_bytes(self, data):
        """A model already in memory (rknn.api.RKNN's build)."""
        self._model = bytes(data)

    def init_runtime(self, target=None, device_id=None, async_mode=False, core_mask=NPU_CORE_AUTO):
        if self._model is None:
            self.log.e("Model is not loaded yet, this interface should be called after load_rknn!")
            return -1
        if target is not None:
            self.log.w("target %r: RKNNLite runs on this machine's NPU (or the emulated one), "
                       "not on a connected board; the target is ignored" % (target,))
        if device_id is not None:
            self.log.w("device_id is for a connected board; ignored")
        mask = _core_mask(core_mask)
        if mask is None:
            self.log.e("core_mask %r is not a core mask (the NPU_CORE_* values)" % (core_mask,))
            return -1
        with self._lock:
            self._release_runtime()
            try:
                runtime = Runtime(self._model, _RKNN_FLAG_ASYNC_MASK if async_mode else 0)
            except RknnError as e:
                self.log.e("Init runtime environment failed: %s" % e)
                return -1
            try:
                if mask != self.NPU_CORE_AUTO:
                    runtime.set_core_mask(mask)
                attrs = [runtime.input_attr(i) for i in range(runtime.n_inputs)]
                shape_info = [runtime.input_shapes(i) for i in range(runtime.n_inputs)]
                dynamic = any(s["sets"] or s["min"] for s in shape_info)
                outputs = None if dynamic else _output_shapes(runtime, current=False)
            except RknnError as e:
                runtime.release()
                self.log.e("Init runtime environment failed: %s" % e)
                return -1
            self._runtime = runtime
            self._async = bool(async_mode)
            self._input_attrs = attrs
            self._dynamic = dynamic
            self._input_shapes = shape_info
            self._shapes_set = None  # a dynamic model's shapes chosen last
            self._output_shapes = outputs
            # Async mode hands out the frame before: its output shapes.
            self._frame_shapes = None
            self._runs = 0
        self.log.d("runtime ready: %d input(s), %d output(s)%s" %
                   (runtime.n_inputs, runtime.n_outputs, ", dynamic shapes" if self._dynamic else ""))
        return 0

    # ---- inference ---------------------------------------------------------

    def inference(self, inputs, data_type=None, data_format=None, inputs_pass_through=None, get_frame_id=False):
        with self._lock:
            if self._runtime is None:
                self.log.e("Runtime environment is not inited, please call init_runtime to init it first!")
                return None
            try:
                specs, shapes = self._prepare(inputs, data_type, data_format, inputs_pass_through)
            except lite_inputs.InputError as e:
                self.log.e("Invalid inputs: %s" % e)
                return None
            except Exception as e:  # noqa: BLE001 - Lite2 reports every failure as None
                self.log.e("Invalid inputs: %s: %s" % (type(e).__name__, e))
                return None
            try:
                if shapes is not None and shapes != self._shapes_set:
                    self._set_shapes(shapes)
                returned = self._frame_shapes if self._async and self._frame_shapes else self._output_shapes
                outputs, frame_id = self._runtime.run(specs, returned)
                self._frame_shapes = self._output_shapes
            except Exception as e:  # noqa: BLE001 - Lite2 reports every failure as None
                self._frame_shapes = None
                self.log.e("Inference failed: %s" % e)
                return None
            self._runs += 1
            if self._runs == 1 and self.log.verbose:
                self._log_layers()
        if get_frame_id:
            outputs.append(frame_id)
        return outputs

    def _prepare(self, inputs, data_type, data_format, pass_through):
        runtime = self._runtime
        current = self._dynamic and self._shapes_set is not None
        attrs = self._input_attrs
        if current:
            attrs = [runtime.input_attr(i, True) for i in range(runtime.n_inputs)]
        native_sizes = None
        if pass_through is not None:
            native_sizes = [runtime.input_attr(i, current, True)["size_with_stride"] for i in range(runtime.n_inputs)]
        return lite_inputs.prepare(attrs, self._dynamic, inputs, data_type, data_format, pass_through, native_sizes)

    def _log_layers(self):
        try:
            self.log.d("the first run, layer by layer:\n" + self._runtime.perf_detail())
        except RknnError as e:
            self.log.d("no per-layer table: %s" % e)

    def _set_shapes(self, shapes):
        try:
            self._runtime.set_input_shapes(shapes)
        except RknnError:
            self._shapes_set = None
            raise RknnError("the model takes none of the shapes %s; it takes %s" %
                            (shapes, self._describe_shapes()))
        self._shapes_set = shapes
        self._output_shapes = _output_shapes(self._runtime, current=True)
        self.log.d("input shapes set to %s" % (shapes,))

    def _describe_shapes(self):
        parts = []
        for i, info in enumerate(self._input_shapes):
            text = "input %d: sets %s" % (i, info["sets"])
            if info["min"]:
                text += ", and from %s to %s in steps of %s" % (info["min"], info["max"], info["step"])
            parts.append(text)
        return "; ".join(parts) + " (4-D shapes as NHWC)"

    # ---- information -------------------------------------------------------

    def get_sdk_version(self):
        with self._lock:
            if self._runtime is None:
                self.log.e("Runtime environment is not inited, please call init_runtime to init it first!")
                return None
            try:
                api, drv = self._runtime.sdk_version()
            except RknnError as e:
                self.log.e("Cannot get the SDK version: %s" % e)
                return None
        rule = "=" * 46
        return "%s\nRKNN VERSION:\n  API: %s\n  DRV: %s\n%s" % (rule, api, drv, rule)

    def list_support_target_platform(self, rknn_model=None):
        stars = "*" * 50
        if rknn_model is None:
            support = {"RK3566_RK3568": ["RK3566", "RK3568"], "RK3562": ["RK3562"], "RK3576": ["RK3576"],
                       "RK3588": ["RK3588", "RK3588S"]}
            print(stars)
            for npu, platforms in support.items():
                print("%-16s %s" % (npu, platforms))
            print(stars)
            return support
        if not is_path(rknn_model) or not os.path.isfile(rknn_model):
            self.log.e("The model %r does not exist." % (rknn_model,))
            return None
        try:
            with open(rknn_model, "rb") as f:
                soc = model_file.target_soc(f.read())
        except (OSError, model_file.ModelFileError) as e:
            self.log.e("Cannot read the target platform of %s: %s" % (rknn_model, e))
            return None
        filled = [soc] if soc else []
        supported = model_file.PLATFORMS_OF_TARGET.get(soc.lower(), [])
        print(stars)
        print("Target platforms filled in RKNN model:         %s" % filled)
        print("Target platforms supported by this RKNN model: %s" % supported)
        print(stars)
        return {"filled_target_platform": filled, "support_target_platform": supported}

    # ---- release -----------------------------------------------------------

    def _release_runtime(self):
        if self._runtime is not None:
            self._runtime.release()
            self._runtime = None

    def release(self):
        with self._lock:
            self._release_runtime()

    def __del__(self):
        runtime = getattr(self, "_runtime", None)
        if runtime is not None:
            runtime.release()
