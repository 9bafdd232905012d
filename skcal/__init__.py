"""skcal: post-hoc probability calibration for scikit-learn and PyTorch.

Calibrators learn, on a held-out calibration set, a map from a classifier's
logits to honest probabilities, without retraining the classifier. Importing
skcal imports neither torch nor matplotlib.
"""

from .meta import (
    AutoCalibrator,
    IdentityCalibrator,
    CalibratedClassifier,
    CalibratedEnsemble,
    ClassifierLogits,
    GroupedCalibrator,
    calibrate_ensemble,
)
from .ovr import (
    BBQCalibrator,
    BetaCalibrator,
    HistogramCalibrator,
    IsotonicScaler,
    PlattScaler,
    ScalingBinningCalibrator,
    SplineCalibrator,
    VennAbersCalibrator,
)
from .scaling import (
    BiasCorrectedTemperatureScaler,
    DirichletCalibrator,
    EnsembleTemperatureScaler,
    LocalTemperatureScaler,
    MatrixScaler,
    NoBiasVectorScaler,
    TemperatureScaler,
    VectorScaler,
    adapt_to_label_shift,
)

__version__ = "0.1.0"

__all__ = [
    "AutoCalibrator",
    "BBQCalibrator",
    "BetaCalibrator",
    "BiasCorrectedTemperatureScaler",
    "CalibratedClassifier",
    "CalibratedEnsemble",
    "ClassifierLogits",
    "DirichletCalibrator",
    "EnsembleTemperatureScaler",
    "GroupedCalibrator",
    "HistogramCalibrator",
    "IdentityCalibrator",
    "IsotonicScaler",
    "LocalTemperatureScaler",
    "MatrixScaler",
    "NoBiasVectorScaler",
    "PlattScaler",
    "ScalingBinningCalibrator",
    "SplineCalibrator",
    "TemperatureScaler",
    "VectorScaler",
    "VennAbersCalibrator",
    "adapt_to_label_shift",
    "calibrate_ensemble",
    "__version__",
]
