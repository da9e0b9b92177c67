"""RKNN: the part of RKNN-Toolkit2's API that OpenRKNN offers: config,
load_onnx, build, export_rknn, load_rknn, init_runtime, inference, eval_perf,
accuracy_analysis, get_sdk_version and release.

Conversion is OpenRKNN's converter (the library rknn_convert is built on);
running is librknnrt through rknnlite, on the board's NPU or, on any other
host, on the emulated one, where Toolkit2 runs its simulator. Calls return
0 or -1 (None for outputs) and say why on an "E" line, as Toolkit2's do."""
import os

import numpy as np

from rknnlite.api.lite_log import LiteLog
from rknnlite.api.paths import is_path
from rknnlite.api.rknn_lite import RKNNLite

from . import toolkit_config
from ._rknn_convert import ConvertError, convert


class RKNN:
    NPU_CORE_AUTO = RKNNLite.NPU_CORE_AUTO
    NPU_CORE_0 = RKNNLite.NPU_CORE_0
    NPU_CORE_1 = RKNNLite.NPU_CORE_1
    NPU_CORE_2 = RKNNLite.NPU_CORE_2
    NPU_CORE_0_1 = RKNNLite.NPU_CORE_0_1
    NPU_CORE_0_1_2 = RKNNLite.NPU_CORE_0_1_2
    NPU_CORE_ALL = RKNNLite.NPU_CORE_ALL

    def __init__(self, verbose=False, verbose_file=None):
        self.log = LiteLog(verbose, verbose_file)
        self._lite = RKNNLite(verbose=verbose)
        self._lite.log = self.log  # one log for both halves
        self._config = toolkit_config.make_options()
        self._onnx = None      # (path, input shapes in ONNX order or None)
        self._options = None   # the converter's options of the last build
        self._model = None     # the model file's bytes

    # ---- conversion --------------------------------------------------------

    def config(self, mean_values=None, std_values=None, quant_img_RGB2BGR=False, quantized_dtype="w8a8",
               quantized_algorithm="normal", quantized_method="channel", float_dtype="float16",
               target_platform=None, custom_string=None, dynamic_input=None, **others):
        for name in others:
            why = "has no effect here" if name in toolkit_config.IGNORED else "is not a keyword this module knows"
            self.log.w("config: %s %s; ignored" % (name, why))
        try:
            self._config = toolkit_config.make_options(mean_values, std_values, quant_img_RGB2BGR, quantized_dtype,
                                                       quantized_algorithm, quantized_method, float_dtype,
                                                       target_platform, custom_string, dynamic_input)
        except Exception as e:  # noqa: BLE001 - Toolkit2 answers -1
            self.log.e("config: %s" % e)
            return -1
        self.log.d("config: %s" % self._config)
        return 0

    def load_onnx(self, model, inputs=None, input_size_list=None, input_initial_val=None, outputs=None):
        if not is_path(model) or not os.path.isfile(model):
            self.log.e("load_onnx: %r is not a file" % (model,))
            return -1
        if input_initial_val is not None:
            self.log.e("load_onnx: input_initial_val is not implemented")
            return -1
        try:
            shapes = self._onnx_input_shapes(model, inputs, input_size_list, outputs)
        except ImportError:
            self.log.e("load_onnx: naming inputs or outputs needs python3-onnx (to read the file's names)")
            return -1
        except Exception as e:  # noqa: BLE001 - a file onnx cannot parse, a list of the wrong kind
            self.log.e("load_onnx: %s" % e)
            return -1
        if shapes is not None and self._config.get("input_shapes"):
            self.log.w("load_onnx: config's dynamic_input sets the shapes; input_size_list is not used")
        self._onnx = (os.fspath(model), shapes)
        self.log.i("Loading : %s" % os.fspath(model))
        return 0

    def _onnx_input_shapes(self, model, inputs, input_size_list, outputs):
        """input_size_list in the ONNX file's input order (inputs names them)."""
        if input_size_list is not None and not isinstance(input_size_list, (list, tuple)):
            raise ValueError("input_size_list takes one shape per input")
        if inputs is not None and not isinstance(inputs, (list, tuple)):
            raise ValueError("inputs takes a list of input names")
        if outputs is not None and not isinstance(outputs, (list, tuple)):
            raise ValueError("outputs takes a list of output names")
        if inputs is None and outputs is None:
            return None if input_size_list is None else [toolkit_config._shape(s, "input_size_list")
                                                         for s in input_size_list]
        import onnx  # only to read the names
        graph = onnx.load(os.fspath(model), load_external_data=False).graph
        constants = {t.name for t in graph.initializer}
        names = [i.name for i in graph.input if i.name not in constants]
        if outputs is not None and list(outputs) != [o.name for o in graph.output]:
            raise ValueError("outputs other than the model's own (cutting the graph) are not implemented")
        if inputs is None:
            return self._onnx_input_shapes(model, None, input_size_list, None)
        if sorted(inputs) != sorted(names):
            raise ValueError("inputs %s are not the model's inputs %s (cutting the graph is not implemented)" %
                             (list(inputs), names))
        if input_size_list is None:
            return None
        if len(input_size_list) != len(inputs):
            raise ValueError("input_size_list has %d shapes for %d inputs" % (len(input_size_list), len(inputs)))
        by_name = dict(zip(inputs, input_size_list))
        return [toolkit_config._shape(by_name[n], "input_size_list") for n in names]

    def build(self, do_quantization=True, dataset=None, rknn_batch_size=None):
        if self._onnx is None:
            self.log.e("build: load a model with load_onnx first")
            return -1
        options = dict(self._config)
        onnx_path, shapes = self._onnx
        options["onnx_path"] = os.fsencode(onnx_path)  # bytes: any file name the system allows
        if options.get("input_shapes") is None:
            options["input_shapes"] = [shapes] if shapes else []
        if do_quantization:
            if not is_path(dataset) or not os.path.isfile(dataset):
                self.log.e("build: do_quantization needs dataset, a text file listing the calibration inputs")
                return -1
            options["dtype"] = "int8"
            options["dataset"] = os.fsencode(dataset)
        else:
            options["dtype"] = "fp16"
        if rknn_batch_size is not None:
            if not isinstance(rknn_batch_size, int) or isinstance(rknn_batch_size, bool) or \
                    not 1 <= rknn_batch_size <= 256:
                self.log.e("build: rknn_batch_size must be an int from 1 to 256")
                return -1
            options["batch"] = rknn_batch_size
        result = self._convert(options, "build")
        if result is None:
            return -1
        self._options, self._model = options, result["model"]
        self.log.i("rknn building done (%s, %d bytes)" % (options["dtype"], len(self._model)))
        return 0

    def _convert(self, options, step):
        try:
            result = convert(options)
        except ConvertError as e:
            self.log.e("%s: %s" % (step, e))
            return None
        except Exception as e:  # noqa: BLE001 - an option of the wrong kind
            self.log.e("%s: %s: %s" % (step, type(e).__name__, e))
            return None
        for line in result["log"]:
            self.log.d(line)
        return result

    def export_rknn(self, export_path, cpp_gen_cfg=None, **others):
        if self._model is None:
            self.log.e("export_rknn: there is no model; call build (or load_rknn) first")
            return -1
        if not is_path(export_path):
            self.log.e("export_rknn: export_path %r is not a path" % (export_path,))
            return -1
        if cpp_gen_cfg or others:
            self.log.w("export_rknn: cpp_gen_cfg and other keywords are not implemented; ignored")
        try:
            with open(export_path, "wb") as f:
                f.write(self._model)
        except (OSError, TypeError) as e:
            self.log.e("export_rknn: cannot write %r: %s" % (export_path, e))
            return -1
        return 0

    def load_rknn(self, path):
        ret = self._lite.load_rknn(path)
        if ret == 0:
            self._model, self._options = self._lite._model, None
        return ret

    # ---- running -----------------------------------------------------------

    def init_runtime(self, target=None, device_id=None, perf_debug=False, eval_mem=False, async_mode=False,
                     core_mask=NPU_CORE_AUTO):
        if self._model is None:
            self.log.e("init_runtime: there is no model; call build or load_rknn first")
            return -1
        if perf_debug or eval_mem:
            self.log.d("perf_debug and eval_mem need nothing more here (eval_perf reads the runtime's table)")
        self._lite._load_bytes(self._model)
        return self._lite.init_runtime(target=target, device_id=device_id, async_mode=async_mode,
                                       core_mask=core_mask)

    def inference(self, inputs, data_format=None, inputs_pass_through=None, get_frame_id=False):
        return self._lite.inference(inputs, data_format=data_format, inputs_pass_through=inputs_pass_through,
                                    get_frame_id=get_frame_id)

    def get_sdk_version(self):
        return self._lite.get_sdk_version()

    def eval_perf(self, is_print=True, fix_freq=True):
        """Runs zeros through the model once and returns the runtime's per-layer
        table (RKNN_QUERY_PERF_DETAIL); None on failure."""
        runtime = self._lite._runtime
        if runtime is None:
            self.log.e("eval_perf: call init_runtime first")
            return None
        zeros = [np.zeros(attr["dims"], np.float32) for attr in self._lite._input_attrs]
        if self._lite.inference(zeros) is None:
            return None
        try:
            table = runtime.perf_detail()
        except Exception as e:  # noqa: BLE001 - reported as Toolkit2 reports failures
            self.log.e("eval_perf: %s" % e)
            return None
        if is_print:
            print(table)
        return table

    def accuracy_analysis(self, inputs, output_dir="./snapshot", target=None, device_id=None):
        """Every layer of the built model against the float model on `inputs`
        (one image or .npy path per input): writes output_dir/error_analysis.txt."""
        if self._options is None:
            self.log.e("accuracy_analysis: build a model from load_onnx first (a loaded .rknn has no float model)")
            return -1
        if not isinstance(inputs, (list, tuple)) or not all(is_path(p) for p in inputs):
            self.log.e("accuracy_analysis: inputs takes a list of image or .npy paths, one per input")
            return -1
        if len(inputs) != 1:
            self.log.e("accuracy_analysis: models with %d inputs are not implemented (one input only)" % len(inputs))
            return -1
        if target is not None or device_id is not None:
            self.log.w("accuracy_analysis: target and device_id are for a connected board; ignored")
        options = dict(self._options, accuracy_input=os.fsencode(inputs[0]))
        result = self._convert(options, "accuracy_analysis")
        if result is None:
            return -1
        if result["model"] != self._model:
            self.log.w("accuracy_analysis: the analysed conversion differs from the built model")
        if not is_path(output_dir):
            self.log.e("accuracy_analysis: output_dir %r is not a path" % (output_dir,))
            return -1
        try:
            os.makedirs(output_dir, exist_ok=True)
            with open(os.path.join(output_dir, "error_analysis.txt"), "w") as f:
                f.write(result["accuracy_table"] + "\n")
        except (OSError, TypeError) as e:
            self.log.e("accuracy_analysis: cannot write to %r: %s" % (output_dir, e))
            return -1
        if self.log.verbose:
            print(result["accuracy_table"])
        self.accuracy = [dict(zip(("tensor", "op_type", "cosine", "euclidean"), row)) for row in result["accuracy"]]
        return 0

    def release(self):
        self._lite.release()
