"""Meta-estimators: cross-validated calibration, logits as a step, group-wise calibration."""

from ._calibrated import CalibratedClassifier
from ._grouped import GroupedCalibrator
from ._logits import ClassifierLogits

__all__ = ["CalibratedClassifier", "ClassifierLogits", "GroupedCalibrator"]
