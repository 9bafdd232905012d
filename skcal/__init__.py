"""skcal: post-hoc probability calibration for scikit-learn and PyTorch.

Calibrators learn, on a held-out calibration set, a map from a classifier's
logits to honest probabilities, without retraining the classifier. Importing
skcal imports neither torch nor matplotlib.
"""

from ._calibrated import CalibratedClassifier
from ._isotonic import IsotonicScaler
from ._logits import ClassifierLogits
from ._platt import PlattScaler
from ._temperature import TemperatureScaler
from ._vector import VectorScaler
from .scaling import LocalTemperatureScaler

__version__ = "0.1.0"

__all__ = [
    "CalibratedClassifier",
    "ClassifierLogits",
    "IsotonicScaler",
    "LocalTemperatureScaler",
    "PlattScaler",
    "TemperatureScaler",
    "VectorScaler",
    "__version__",
]
