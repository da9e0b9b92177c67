"""The RKNN class, the part of RKNN-Toolkit2's API that OpenRKNN offers (docs/python.md)."""
from .rknn_toolkit import RKNN

__all__ = ["RKNN"]
