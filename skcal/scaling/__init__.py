"""Maps of the whole logit vector: temperature and vector scaling (and their family).

Each calibrator here transforms the logit vector ``z`` of a row as a whole
(``z / T``, ``w * z + b``, ``z / T(x)``, ...) and takes the softmax; the fits
of temperature and vector scaling are convex NLL minimisations solved with
exact derivatives by the kernels in :mod:`skcal._backend`; local temperature
scaling trains a small network for ``T(x)``.
"""

from ._local_temperature import LocalTemperatureScaler
from ._temperature import TemperatureScaler
from ._vector import VectorScaler

__all__ = ["LocalTemperatureScaler", "TemperatureScaler", "VectorScaler"]
