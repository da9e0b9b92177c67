"""The target SoC an OpenRKNN model file names (docs/model-format.md), read
without the runtime, and the platforms each target runs on."""
import struct

# Chips that share an NPU take the same models (runtime-spec 10.3).
PLATFORMS_OF_TARGET = {
    "rk3566": ["RK3566", "RK3568"],
    "rk3568": ["RK3566", "RK3568"],
    "rk3562": ["RK3562"],
    "rk3576": ["RK3576"],
    "rk3588": ["RK3588", "RK3588S"],
}
# Model.target_soc's field number in src/model/rknn_model.fbs.
_TARGET_SOC_FIELD = 3


class ModelFileError(ValueError):
    pass


def _u32(data, at):
    if at < 0 or at + 4 > len(data):
        raise ModelFileError("truncated model file")
    return struct.unpack_from("<I", data, at)[0]


def target_soc(data):
    """The target_soc string of a model file's bytes ("" when it names none)."""
    if data[:4] == b"RKNN":
        raise ModelFileError("a Rockchip .rknn file: OpenRKNN loads its own format; convert the ONNX model "
                             "with rknn_convert")
    if len(data) < 12 or data[8:12] != b"ORKN":
        raise ModelFileError("not an OpenRKNN model file (no ORKN identifier)")
    # A size-prefixed FlatBuffer: the root table's offset follows the size.
    table = 4 + _u32(data, 4)
    vtable = table - struct.unpack("<i", data[table:table + 4])[0] if table + 4 <= len(data) else -1
    if vtable < 0 or vtable + 4 > len(data):
        raise ModelFileError("corrupt model file (root table)")
    vtable_size = struct.unpack_from("<H", data, vtable)[0]
    entry = 4 + 2 * _TARGET_SOC_FIELD
    if entry + 2 > vtable_size or vtable + entry + 2 > len(data):
        return ""
    offset = struct.unpack_from("<H", data, vtable + entry)[0]
    if offset == 0:
        return ""
    start = table + offset + _u32(data, table + offset)
    length = _u32(data, start)
    if start + 4 + length > len(data):
        raise ModelFileError("corrupt model file (target_soc)")
    return data[start + 4:start + 4 + length].decode("utf-8", errors="replace")
