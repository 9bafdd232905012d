"""Maps of the whole logit vector: temperature and vector scaling (and their family).

Each calibrator here transforms the logit vector ``z`` of a row as a whole
(``z / T``, ``w * z + b``, ``W z + b``, ``W log softmax(z) + b``, mixtures of
``softmax(z / T)``, ``z / T(x)``...) and takes the softmax; the fits (except
local temperature scaling, which trains a small network for ``T(x)``) are
convex NLL minimisations solved with exact derivatives by the kernels in
:mod:`skcal._backend`.
"""

from ._bcts import BiasCorrectedTemperatureScaler, NoBiasVectorScaler
from ._ets import EnsembleTemperatureScaler
from ._label_shift import adapt_to_label_shift
from ._local_temperature import LocalTemperatureScaler
from ._matrix import DirichletCalibrator, MatrixScaler
from ._svs import StructuredVectorScaler
from ._temperature import TemperatureScaler
from ._vector import VectorScaler

__all__ = [
    "BiasCorrectedTemperatureScaler",
    "DirichletCalibrator",
    "EnsembleTemperatureScaler",
    "LocalTemperatureScaler",
    "MatrixScaler",
    "NoBiasVectorScaler",
    "StructuredVectorScaler",
    "TemperatureScaler",
    "VectorScaler",
    "adapt_to_label_shift",
]
