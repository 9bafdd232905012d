"""Per-class score maps combined one-vs-rest: Platt and isotonic scaling (and their family).

Every calibrator here is a :class:`~skcal.ovr.OneVsRestCalibrator`: it fits
one 1-D map per class on that class's one-vs-rest log-odds and renormalises
(see :mod:`skcal.ovr._base`).
"""

from ._base import OneVsRestCalibrator
from ._isotonic import IsotonicScaler
from ._platt import PlattScaler

__all__ = ["IsotonicScaler", "OneVsRestCalibrator", "PlattScaler"]
