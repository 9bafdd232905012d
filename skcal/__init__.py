"""skcal: post-hoc probability calibration for scikit-learn and PyTorch.

Calibrators learn, on a held-out calibration set, a map from a classifier's
logits to honest probabilities, without retraining the classifier. Importing
skcal imports neither torch nor matplotlib.
"""

from .meta import (
    CalibratedClassifier,
    CalibratedEnsemble,
    ClassifierLogits,
    GroupedCalibrator,
    calibrate_ensemble,
)
from .ovr import (
    BBQCalibrator,
    BetaCalibrator,
    CenteredIsotonicScaler,
    HistogramCalibrator,
    IsotonicScaler,
    PlattScaler,
    QuadraticScaler,
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
    StructuredVectorScaler,
    TemperatureScaler,
    VectorScaler,
    adapt_to_label_shift,
)

__version__ = "0.1.0"

__all__ = [
    "BBQCalibrator",
    "BetaCalibrator",
    "BiasCorrectedTemperatureScaler",
    "CalibratedClassifier",
    "CalibratedEnsemble",
    "CenteredIsotonicScaler",
    "ClassifierLogits",
    "DirichletCalibrator",
    "EnsembleTemperatureScaler",
    "GroupedCalibrator",
    "HistogramCalibrator",
    "IsotonicScaler",
    "LocalTemperatureScaler",
    "MatrixScaler",
    "NoBiasVectorScaler",
    "PlattScaler",
    "QuadraticScaler",
    "ScalingBinningCalibrator",
    "SplineCalibrator",
    "StructuredVectorScaler",
    "TemperatureScaler",
    "VectorScaler",
    "VennAbersCalibrator",
    "adapt_to_label_shift",
    "calibrate_ensemble",
    "__version__",
]
