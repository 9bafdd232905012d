"""Meta-estimators around a fitted classifier: cross-validated calibration and logits as a step."""

from ._calibrated import CalibratedClassifier
from ._logits import ClassifierLogits

__all__ = ["CalibratedClassifier", "ClassifierLogits"]
