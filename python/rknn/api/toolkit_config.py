"""RKNN.config's keywords turned into the converter's options. Raises
ConfigError with a message for a value the converter cannot honour."""

TARGETS = ("rk3588", "rk3576", "rk3568", "rk3566", "rk3562")
ALGORITHMS = {"normal": "normal", "mmse": "mmse", "kl_divergence": "kl_divergence"}
INT8_DTYPES = ("asymmetric_quantized-8", "w8a8")
# Toolkit2 keywords that change nothing here: the converter's passes are all
# exact rewrites, and what the others tune has no counterpart in this runtime.
IGNORED = ("optimization_level", "model_pruning", "enable_flash_attention", "compress_weight", "single_core_mode",
           "sparse_infer", "auto_hybrid", "op_target", "quantize_weight", "remove_reshape", "remove_weight",
           "npu_do_input_preprocess", "quant_img_RGB2BGR_list")


class ConfigError(ValueError):
    pass


def _per_input_lists(values, name):
    if values is None:
        return []
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, (list, tuple)) for v in values):
        raise ConfigError("%s takes one list per input, e.g. [[123.675, 116.28, 103.53]]" % name)
    try:
        return [[float(x) for x in v] for v in values]
    except (TypeError, ValueError):
        raise ConfigError("%s holds something that is not a number" % name) from None


def _shape(value, what):
    if not isinstance(value, (list, tuple)) or not value:
        raise ConfigError("%s is not a shape: %r" % (what, value))
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 < d < 2**31 for d in value):
        raise ConfigError("%s has a dim that is not an int from 1 to 2^31 - 1: %r" % (what, value))
    return [int(d) for d in value]


def _flag(value, name):
    """A bool, or one bool per input that are all the same (Toolkit2 takes both)."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values or not all(isinstance(v, bool) for v in values):
        raise ConfigError("%s takes True or False (or one per input)" % name)
    if len(set(values)) != 1:
        raise ConfigError("%s differing between inputs is not implemented" % name)
    return values[0]


def shape_sets(dynamic_input):
    """dynamic_input: one list per set, each with one shape per input."""
    if not isinstance(dynamic_input, (list, tuple)) or not dynamic_input:
        raise ConfigError("dynamic_input takes a list of shape sets, e.g. [[[1,3,224,224]], [[1,3,160,160]]]")
    sets = []
    for k, shapes in enumerate(dynamic_input):
        what = "dynamic_input[%d]" % k
        if isinstance(shapes, (list, tuple)) and shapes and all(isinstance(s, (list, tuple)) for s in shapes):
            sets.append([_shape(s, what) for s in shapes])
        else:
            sets.append([_shape(shapes, what)])  # a one-input model's shape, without the set's list
    return sets


def make_options(mean_values=None, std_values=None, quant_img_RGB2BGR=False, quantized_dtype="w8a8",
                 quantized_algorithm="normal", quantized_method="channel", float_dtype="float16",
                 target_platform=None, custom_string=None, dynamic_input=None):
    """The converter's options for these config keywords."""
    options = {"mean": _per_input_lists(mean_values, "mean_values"),
               "std": _per_input_lists(std_values, "std_values")}
    if options["mean"] and options["std"] and len(options["mean"]) != len(options["std"]):
        raise ConfigError("mean_values and std_values describe different numbers of inputs")
    options["rgb2bgr"] = _flag(quant_img_RGB2BGR, "quant_img_RGB2BGR")
    if not isinstance(quantized_dtype, str) or quantized_dtype not in INT8_DTYPES:
        raise ConfigError("quantized_dtype %r is not implemented (int8: %s)" % (quantized_dtype, " or ".join(INT8_DTYPES)))
    if not isinstance(quantized_algorithm, str) or quantized_algorithm not in ALGORITHMS:
        raise ConfigError("quantized_algorithm %r is not one of %s" % (quantized_algorithm, ", ".join(ALGORITHMS)))
    options["calib_method"] = ALGORITHMS[quantized_algorithm]
    if not isinstance(quantized_method, str) or quantized_method != "channel":
        raise ConfigError("quantized_method %r is not implemented: weights are quantised per output channel "
                          "('channel')" % (quantized_method,))
    if not isinstance(float_dtype, str) or float_dtype != "float16":
        raise ConfigError("float_dtype %r is not implemented ('float16')" % (float_dtype,))
    target = "rk3588" if target_platform is None else str(target_platform).lower()
    if target not in TARGETS:
        raise ConfigError("target_platform %r is not one of %s" % (target_platform, ", ".join(TARGETS)))
    options["target_soc"] = target
    if custom_string is not None:
        try:
            size = len(custom_string.encode()) if isinstance(custom_string, str) else None
        except UnicodeEncodeError:
            size = None
        if size is None or size > 1023:
            raise ConfigError("custom_string must be a str of at most 1023 UTF-8 bytes")
        options["custom_string"] = custom_string
    options["input_shapes"] = shape_sets(dynamic_input) if dynamic_input is not None else None
    return options
