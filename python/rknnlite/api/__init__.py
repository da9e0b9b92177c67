"""The RKNNLite class, as RKNN-Toolkit-Lite2 offers it (docs/python.md)."""
from .rknn_lite import RKNNLite

__all__ = ["RKNNLite"]
