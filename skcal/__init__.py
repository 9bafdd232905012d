"""skcal: post-hoc probability calibration for scikit-learn and PyTorch.

Calibrators learn, on a held-out calibration set, a map from a classifier's
logits to honest probabilities, without retraining the classifier. Importing
skcal imports neither torch nor matplotlib.
"""

from .meta import CalibratedClassifier, ClassifierLogits, GroupedCalibrator
from .ovr import IsotonicScaler, PlattScaler
from .scaling import LocalTemperatureScaler, TemperatureScaler, VectorScaler

__version__ = "0.1.0"

__all__ = [
    "CalibratedClassifier",
    "ClassifierLogits",
    "GroupedCalibrator",
    "IsotonicScaler",
    "LocalTemperatureScaler",
    "PlattScaler",
    "TemperatureScaler",
    "VectorScaler",
    "__version__",
]
