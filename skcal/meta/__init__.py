"""Meta-estimators: cross-validated calibration, logits as a step, ensembles, group-wise calibration."""

from ._auto import AutoCalibrator, IdentityCalibrator
from ._calibrated import CalibratedClassifier
from ._ensemble import CalibratedEnsemble, calibrate_ensemble
from ._grouped import GroupedCalibrator
from ._logits import ClassifierLogits

__all__ = [
    "AutoCalibrator",
    "IdentityCalibrator",
    "CalibratedClassifier",
    "CalibratedEnsemble",
    "ClassifierLogits",
    "GroupedCalibrator",
    "calibrate_ensemble",
]
