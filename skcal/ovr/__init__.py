"""Per-class score maps combined one-vs-rest: Platt and isotonic scaling (and their family).

Every calibrator here is a :class:`~skcal.ovr.OneVsRestCalibrator`: it fits
one 1-D map per class on that class's one-vs-rest log-odds and renormalises
(see :mod:`skcal.ovr._base`).
"""

from ._base import OneVsRestCalibrator
from ._bbq import BBQCalibrator
from ._beta import BetaCalibrator
from ._centered_isotonic import CenteredIsotonicScaler
from ._histogram import HistogramCalibrator
from ._isotonic import IsotonicScaler
from ._platt import PlattScaler
from ._quadratic import QuadraticScaler
from ._scaling_binning import ScalingBinningCalibrator
from ._spline import SplineCalibrator
from ._venn_abers import VennAbersCalibrator

__all__ = [
    "BBQCalibrator",
    "BetaCalibrator",
    "CenteredIsotonicScaler",
    "HistogramCalibrator",
    "IsotonicScaler",
    "OneVsRestCalibrator",
    "PlattScaler",
    "QuadraticScaler",
    "ScalingBinningCalibrator",
    "SplineCalibrator",
    "VennAbersCalibrator",
]
