"""Meta-estimators: cross-validated calibration, logits as a step, ensembles, group-wise calibration,
mixture smoothing, top-versus-all, covariate-shift weights."""

from ._auto import AutoCalibrator, IdentityCalibrator
from ._calibrated import CalibratedClassifier
from ._covariate_shift import CovariateShiftWeights, covariate_shift_weights
from ._ensemble import CalibratedEnsemble, calibrate_ensemble
from ._grouped import GroupedCalibrator
from ._logits import ClassifierLogits
from ._smoothed import SmoothedCalibrator
from ._top_versus_all import TopVersusAllCalibrator

__all__ = [
    "AutoCalibrator",
    "IdentityCalibrator",
    "CalibratedClassifier",
    "CalibratedEnsemble",
    "ClassifierLogits",
    "CovariateShiftWeights",
    "GroupedCalibrator",
    "SmoothedCalibrator",
    "TopVersusAllCalibrator",
    "calibrate_ensemble",
    "covariate_shift_weights",
]
