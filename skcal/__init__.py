"""skcal: post-hoc probability calibration for scikit-learn and PyTorch.

Calibrators learn, on a held-out calibration set, a map from a classifier's
logits to honest probabilities, without retraining the classifier. Importing
skcal imports neither torch nor matplotlib.
"""

from .meta import (
    CalibratedClassifier,
    CalibratedEnsemble,
    ClassifierLogits,
    CovariateShiftWeights,
    GroupedCalibrator,
    SmoothedCalibrator,
    TopVersusAllCalibrator,
    calibrate_ensemble,
    covariate_shift_weights,
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
    "BBQCalibrator",
    "BetaCalibrator",
    "BiasCorrectedTemperatureScaler",
    "CalibratedClassifier",
    "CalibratedEnsemble",
    "ClassifierLogits",
    "CovariateShiftWeights",
    "DirichletCalibrator",
    "EnsembleTemperatureScaler",
    "GroupedCalibrator",
    "HistogramCalibrator",
    "IsotonicScaler",
    "LocalTemperatureScaler",
    "MatrixScaler",
    "NoBiasVectorScaler",
    "PlattScaler",
    "ScalingBinningCalibrator",
    "SmoothedCalibrator",
    "SplineCalibrator",
    "TemperatureScaler",
    "TopVersusAllCalibrator",
    "VectorScaler",
    "VennAbersCalibrator",
    "adapt_to_label_shift",
    "calibrate_ensemble",
    "covariate_shift_weights",
    "__version__",
]
