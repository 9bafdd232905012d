"""Meta-estimators around a fitted classifier: cross-validated calibration, logits as a step, ensembles."""

from ._calibrated import CalibratedClassifier
from ._ensemble import CalibratedEnsemble, calibrate_ensemble
from ._logits import ClassifierLogits

__all__ = ["CalibratedClassifier", "CalibratedEnsemble", "ClassifierLogits", "calibrate_ensemble"]
