"""ONNX export of fitted calibrators (needs the ``onnx`` extra).

:func:`to_onnx` writes a calibrator as a standalone ONNX model;
:func:`register_skl2onnx` teaches skl2onnx to convert skcal's estimators,
so that a scikit-learn ``Pipeline`` ending in one converts as a whole.
Importing this subpackage imports ``onnx`` (``import skcal`` does not).
"""

from ._export import to_onnx
from ._skl2onnx import register_skl2onnx

__all__ = ["register_skl2onnx", "to_onnx"]
