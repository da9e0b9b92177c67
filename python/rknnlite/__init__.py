"""OpenRKNN's RKNN-Toolkit-Lite2 module: run .rknn models from Python.

    from rknnlite.api import RKNNLite
"""
