"""OpenRKNN's RKNN-Toolkit2 subset: convert ONNX models and run them.

    from rknn.api import RKNN
"""
