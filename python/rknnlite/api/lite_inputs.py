"""What RKNNLite.inference hands to the runtime: each array checked against the
model's input and described by its rknn_tensor_type and rknn_tensor_format.

Raises InputError with a message for the user; nothing here touches the
runtime."""
import operator

import numpy as np

# rknn_tensor_type
FLOAT32, FLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, BOOL = range(10)
# rknn_tensor_format
NCHW, NHWC, NC1HWC2, UNDEFINED = range(4)

# The types rknn_inputs_set converts from (runtime's convert_input).
TYPE_OF_DTYPE = {
    np.dtype(np.float32): FLOAT32, np.dtype(np.float16): FLOAT16, np.dtype(np.int8): INT8,
    np.dtype(np.uint8): UINT8, np.dtype(np.int16): INT16,
}
# inference(data_type=...) names, as Lite2 takes them.
DATA_TYPES = {"float32": np.float32, "float16": np.float16, "int8": np.int8, "uint8": np.uint8,
              "int16": np.int16}
FORMATS = {"nhwc": NHWC, "nchw": NCHW}


class InputError(ValueError):
    pass


def per_input(value, count, what):
    """None, one value for every input, or a list with one per input."""
    if value is None or isinstance(value, (str, int, np.integer)):
        return [value] * count
    if isinstance(value, (list, tuple)):
        if len(value) != count:
            raise InputError("%s has %d entries; the model has %d input(s)" % (what, len(value), count))
        return list(value)
    raise InputError("%s must be a list with one entry per input, not %s" % (what, type(value).__name__))


def _flag(value, what):
    """0/1 (or a bool, or None for 0) as a bool."""
    if value is None:
        return False
    try:
        number = operator.index(value)
    except TypeError:
        number = None
    if number not in (0, 1):
        raise InputError("%s is %r; it takes 0 or 1" % (what, value))
    return number == 1


def _strip_ones(shape):
    shape = tuple(shape)
    while len(shape) > 1 and shape[0] == 1:
        shape = shape[1:]
    return shape


def _to_rank(shape, rank):
    """`shape` with leading 1s added or dropped to have `rank` dims, or None."""
    shape = tuple(shape)
    while len(shape) > rank and shape[0] == 1:
        shape = shape[1:]
    if len(shape) < rank:
        shape = (1,) * (rank - len(shape)) + shape
    return shape if len(shape) == rank else None


def _as_nhwc(shape, fmt):
    """A 4-D shape in `fmt` as NHWC."""
    n, a, b, c = shape
    return (n, b, c, a) if fmt == NCHW else (n, a, b, c)


def _array(array, i, data_type, passed):
    """The array in the type the runtime will read."""
    if not isinstance(array, np.ndarray):
        raise InputError("input %d is a %s, not a numpy array" % (i, type(array).__name__))
    if array.ndim == 0:
        raise InputError("input %d is a 0-d array (a scalar); give it the model's shape" % i)
    if data_type is not None:
        if not isinstance(data_type, str) or data_type not in DATA_TYPES:
            raise InputError("data_type %r is not one of %s" % (data_type, ", ".join(DATA_TYPES)))
        try:
            array = array.astype(DATA_TYPES[data_type], copy=False)
        except (TypeError, ValueError) as e:
            raise InputError("input %d (dtype %s) cannot become %s: %s" % (i, array.dtype, data_type, e)) from None
    elif array.dtype == np.float64 and not passed:
        array = array.astype(np.float32)  # numpy's default float; the runtime takes float32
    if passed:
        if array.dtype.kind not in "biuf":
            raise InputError("input %d: pass-through bytes must be a numeric array, not %s" % (i, array.dtype))
    elif array.dtype not in TYPE_OF_DTYPE:
        raise InputError("input %d has dtype %s; the runtime converts from %s" %
                         (i, array.dtype, ", ".join(str(t) for t in TYPE_OF_DTYPE)))
    # Aligned and C-contiguous: the runtime reads the buffer as the type says.
    return np.require(array, requirements=["C", "A"])


def prepare(attrs, dynamic, inputs, data_type=None, data_format=None, pass_through=None, native_sizes=None):
    """attrs: the runtime's input attrs (4-D dims as NHWC); dynamic: the model
    takes other shapes; native_sizes: per input, the bytes a pass-through input
    must have (needed only with pass_through). Returns (specs, shapes): specs as
    the runtime's run() takes them; shapes, for a dynamic model, each input's
    dims (4-D as NHWC) as rknn_set_input_shapes takes them, otherwise None."""
    if isinstance(inputs, np.ndarray) or not isinstance(inputs, (list, tuple)):
        raise InputError("inputs must be a list of numpy arrays, one per input, not %s" % type(inputs).__name__)
    count = len(attrs)
    if len(inputs) != count:
        raise InputError("%d input(s) given; the model has %d" % (len(inputs), count))
    types = per_input(data_type, count, "data_type")
    formats = per_input(data_format, count, "data_format")
    through = [_flag(v, "inputs_pass_through[%d]" % i)
               for i, v in enumerate(per_input(pass_through, count, "inputs_pass_through"))]
    specs, shapes = [], []
    for i, (array, attr) in enumerate(zip(inputs, attrs)):
        passed = through[i]
        array = _array(array, i, types[i], passed)
        rank = len(attr["dims"])
        fmt = attr["fmt"]
        if rank == 4:
            name = formats[i] if formats[i] is not None else "nhwc"
            if not isinstance(name, str) or name.lower() not in FORMATS:
                raise InputError("data_format %r is not 'nhwc' or 'nchw'" % (name,))
            fmt = FORMATS[name.lower()]
        if passed:
            if array.nbytes != native_sizes[i]:
                raise InputError("input %d: pass-through takes the input's native bytes, %d of them; the array "
                                 "has %d" % (i, native_sizes[i], array.nbytes))
            if dynamic:
                shapes.append(list(attr["dims"]))  # native bytes: the shape the runtime has now
            specs.append((array, TYPE_OF_DTYPE.get(array.dtype, UINT8), fmt, True))
            continue
        if dynamic:
            shape = _to_rank(array.shape, rank)
            if shape is None:
                raise InputError("input %d has shape %s; the model's inputs have %d dims" %
                                 (i, tuple(array.shape), rank))
            shapes.append(list(_as_nhwc(shape, fmt)) if rank == 4 else list(shape))
        else:
            expected = tuple(attr["dims"])
            if rank == 4 and attr["fmt"] == NCHW:
                expected = _as_nhwc(expected, NCHW)
            if rank == 4 and fmt == NCHW:
                expected = (expected[0], expected[3], expected[1], expected[2])
            if _strip_ones(array.shape) != _strip_ones(expected):
                layout = " as %s" % ("NCHW" if fmt == NCHW else "NHWC") if rank == 4 else ""
                raise InputError("input %d has shape %s; the model takes %s%s" %
                                 (i, tuple(array.shape), expected, layout))
        specs.append((array, TYPE_OF_DTYPE[array.dtype], fmt, False))
    return specs, (shapes if dynamic else None)
