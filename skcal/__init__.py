"""skcal: post-hoc probability calibration for scikit-learn and PyTorch.

Calibrators learn, on a held-out calibration set, a map from a classifier's
logits to honest probabilities, without retraining the classifier.
"""

from ._temperature import TemperatureScaler

__version__ = "0.1.0"

__all__ = [
    "TemperatureScaler",
    "__version__",
]
