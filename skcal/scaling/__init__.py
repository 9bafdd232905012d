"""Maps of the whole logit vector: temperature and vector scaling (and their family).

Each calibrator here transforms the logit vector ``z`` of a row as a whole
(``z / T``, ``w * z + b``, ...) and takes the softmax; the fits are convex
NLL minimisations solved with exact derivatives by the kernels in
:mod:`skcal._backend`.
"""

from ._temperature import TemperatureScaler
from ._vector import VectorScaler

__all__ = ["TemperatureScaler", "VectorScaler"]
