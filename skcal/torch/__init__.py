"""PyTorch integration: calibrators as modules, logit collection, calibrated models.

Importing this subpackage imports torch (``import skcal`` does not).
"""

from ._modules import AffineLogits, OneVsRestInterpolation, OneVsRestSigmoid

__all__ = [
    "AffineLogits",
    "OneVsRestInterpolation",
    "OneVsRestSigmoid",
]
