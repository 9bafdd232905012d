"""The one registry of metric names, read by the intervals, the scorers and the CLI.

Each scalar metric has one entry: its canonical name, the public function,
the *family* that tells :func:`~skcal.metrics.confidence_interval` how to
reduce it to resampleable per-row statistics (``"binned"``, ``"debiased"``,
``"smooth"``, ``"brier"``, ``"nll"``, ``"accuracy"``), the norm of a binned
family, its other accepted names, the name of its scorer (lower is
better; the scorer returns minus the metric) and the range of its values
(the bootstrap intervals are clipped to it).

The registry sits above every metric module and below
:mod:`skcal.metrics._intervals` and :mod:`skcal.metrics._scorers`, so it
creates no import cycle.
"""

from typing import Callable, NamedTuple, Optional

from ._calibration_error import (
    calibration_error,
    expected_calibration_error,
    maximum_calibration_error,
    rms_calibration_error,
)
from ._debiased import debiased_calibration_error
from ._scores import brier_score, negative_log_likelihood
from ._smooth import smooth_calibration_error

__all__ = ["METRICS", "NAMES", "metric_name", "resolve"]


class MetricSpec(NamedTuple):
    """One registered metric (see the module docstring)."""

    function: Optional[Callable]
    family: str
    norm: Optional[str]
    aliases: tuple
    scorer: Optional[str]
    bounds: tuple = (0.0, 1.0)


#: canonical name -> :class:`MetricSpec`.
METRICS = {
    "calibration_error": MetricSpec(calibration_error, "binned", None, (), None),
    "ece": MetricSpec(expected_calibration_error, "binned", "l1",
                      ("expected_calibration_error",),
                      "neg_expected_calibration_error"),
    "rmsce": MetricSpec(rms_calibration_error, "binned", "l2",
                        ("rms_calibration_error",), "neg_rms_calibration_error"),
    "mce": MetricSpec(maximum_calibration_error, "binned", "max",
                      ("maximum_calibration_error",),
                      "neg_maximum_calibration_error"),
    "debiased_calibration_error": MetricSpec(
        debiased_calibration_error, "debiased", "debiased", (),
        "neg_debiased_calibration_error"),
    "smooth_ece": MetricSpec(smooth_calibration_error, "smooth", None,
                             ("smooth_calibration_error",),
                             "neg_smooth_calibration_error"),
    "brier": MetricSpec(brier_score, "brier", None, ("brier_score",),
                        "neg_brier_score", (0.0, 2.0)),
    "nll": MetricSpec(negative_log_likelihood, "nll", None,
                      ("negative_log_likelihood", "log_loss"), "neg_log_likelihood",
                      (0.0, float("inf"))),
    "accuracy": MetricSpec(None, "accuracy", None, (), None),
}

#: every accepted name (canonical and aliases) -> canonical name.
NAMES = {
    **{name: name for name in METRICS},
    **{alias: name for name, spec in METRICS.items() for alias in spec.aliases},
}


def metric_name(metric):
    """The canonical registry name of ``metric`` (a name or a public metric function).

    Raises
    ------
    ValueError
        For anything else, listing the accepted names.
    """
    if isinstance(metric, str) and metric in NAMES:
        return NAMES[metric]
    if callable(metric):
        for name, spec in METRICS.items():
            if spec.function is metric:
                return name
    raise ValueError(
        f"metric must be one of {sorted(NAMES)} or the skcal.metrics function of "
        f"one of them, got {metric!r}."
    )


def resolve(metric):
    """``(canonical name, MetricSpec)`` of ``metric`` (see :func:`metric_name`)."""
    name = metric_name(metric)
    return name, METRICS[name]
