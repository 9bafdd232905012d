"""Calibration metrics, proper scores and scorers.

Binned calibration errors (:func:`calibration_error` and its ECE / RMSCE /
MCE shortcuts) and the reliability diagram data (:func:`reliability_curve`)
share one binning code path. :func:`brier_score` and
:func:`negative_log_likelihood` are proper scoring rules. Scorer objects for
model selection come from :func:`get_scorer`.

Every function accepts NumPy arrays and array-likes, and ``torch.Tensor``
inputs, which are computed with torch on their device (torch is imported
only when a tensor is passed). ``y_prob`` is never up-cast as a whole: the
metrics walk it in row chunks converted to float64, so their extra memory is
a few chunks plus a few ``(n_samples,)`` float64 vectors.
"""

from ._calibration_error import (
    calibration_error,
    expected_calibration_error,
    maximum_calibration_error,
    reliability_curve,
    rms_calibration_error,
)
from ._calibration_tests import (
    kolmogorov_smirnov_calibration_test,
    kuiper_calibration_test,
    spiegelhalter_test,
)
from ._debiased import debiased_calibration_error
from ._decomposition import brier_decomposition, log_loss_decomposition
from ._intervals import (
    binomial_interval,
    confidence_interval,
    paired_difference_interval,
)
from ._smooth import smooth_calibration_error, smooth_reliability_curve
from ._scorers import (
    get_scorer,
    get_scorer_names,
    neg_brier_score_scorer,
    neg_classwise_calibration_error_scorer,
    neg_debiased_calibration_error_scorer,
    neg_expected_calibration_error_scorer,
    neg_log_likelihood_scorer,
    neg_maximum_calibration_error_scorer,
    neg_rms_calibration_error_scorer,
    neg_smooth_calibration_error_scorer,
)
from ._scores import brier_score, negative_log_likelihood
from ._validation import PROBA_SUM_TOL

__all__ = [
    "PROBA_SUM_TOL",
    "binomial_interval",
    "brier_decomposition",
    "brier_score",
    "calibration_error",
    "confidence_interval",
    "debiased_calibration_error",
    "expected_calibration_error",
    "get_scorer",
    "get_scorer_names",
    "kolmogorov_smirnov_calibration_test",
    "kuiper_calibration_test",
    "log_loss_decomposition",
    "maximum_calibration_error",
    "neg_brier_score_scorer",
    "neg_classwise_calibration_error_scorer",
    "neg_debiased_calibration_error_scorer",
    "neg_expected_calibration_error_scorer",
    "neg_log_likelihood_scorer",
    "neg_maximum_calibration_error_scorer",
    "neg_rms_calibration_error_scorer",
    "neg_smooth_calibration_error_scorer",
    "negative_log_likelihood",
    "paired_difference_interval",
    "reliability_curve",
    "rms_calibration_error",
    "smooth_calibration_error",
    "smooth_reliability_curve",
    "spiegelhalter_test",
]
