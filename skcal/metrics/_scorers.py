"""Scorers for model selection (``GridSearchCV(scoring=...)``, ``cross_val_score``).

scikit-learn scorers (as :func:`sklearn.metrics.make_scorer` builds them)
that also pass the estimator's ``classes_`` as ``labels``; scikit-learn's own
registry of scoring strings is left untouched.
"""

import difflib
import functools
import inspect

import numpy as np

from sklearn.metrics import get_scorer as _sklearn_get_scorer
from sklearn.metrics import get_scorer_names as _sklearn_get_scorer_names
from sklearn.metrics._scorer import _Scorer

from ._calibration_error import calibration_error
from ._registry import METRICS as _REGISTRY
from ._validation import _obvious_positive

__all__ = [
    "get_scorer",
    "get_scorer_names",
    "neg_expected_calibration_error_scorer",
    "neg_rms_calibration_error_scorer",
    "neg_maximum_calibration_error_scorer",
    "neg_classwise_calibration_error_scorer",
    "neg_debiased_calibration_error_scorer",
    "neg_smooth_calibration_error_scorer",
    "neg_brier_score_scorer",
    "neg_log_likelihood_scorer",
]


def _classwise_calibration_error(y_true, y_prob, **kwargs):
    return calibration_error(y_true, y_prob, kind="classwise", **kwargs)


_classwise_calibration_error.__name__ = "classwise_calibration_error"

#: name -> metric (lower is better); every scorer returns minus the metric.
#: From the metric registry (:mod:`skcal.metrics._registry`), plus the
#: classwise view of the binned ECE.
_METRICS = {
    **{spec.scorer: spec.function for spec in _REGISTRY.values() if spec.scorer},
    "neg_classwise_calibration_error": _classwise_calibration_error,
}


def _check_keywords(name, kwargs):
    """Raise for a keyword argument that the metric of scorer ``name`` does not take."""
    classwise = name == "neg_classwise_calibration_error"
    metric = calibration_error if classwise else _METRICS[name]
    params = inspect.signature(metric).parameters
    allowed = sorted(p for p, v in params.items() if v.kind is v.KEYWORD_ONLY
                     and not (classwise and p == "kind"))
    for key in kwargs:
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise TypeError(
                f"get_scorer({name!r}) got an unexpected keyword argument "
                f"{key!r}; the accepted ones are {allowed}.{hint}"
            )


def _scorer_metric(metric):
    """``metric`` as a scorer calls it: a binary 1-D ``y_prob`` is ``classes_[1]``'s.

    That is the larger of two sorted labels, passed as ``pos_label`` when
    neither it nor ``labels`` is given (an estimator without ``classes_``)
    and the metric could not tell the positive class (text labels).
    """

    @functools.wraps(metric)
    def scored(y_true, y_prob, **kwargs):
        if np.ndim(y_prob) == 1 and all(kwargs.get(k) is None
                                        for k in ("pos_label", "labels")):
            present = np.unique(np.asarray(y_true))
            if len(present) == 2 and not _obvious_positive(present):
                kwargs["pos_label"] = present[1]
        return metric(y_true, y_prob, **kwargs)

    return scored


class _ClassesScorer(_Scorer):
    """A ``predict_proba`` scorer that passes ``labels=estimator.classes_``.

    A test fold may hold only some classes, which the metric cannot map to
    the columns by itself. ``labels`` given to :func:`get_scorer` or routed
    as metadata are kept.
    """

    def _score(self, method_caller, estimator, X, y_true, **kwargs):
        classes = getattr(estimator, "classes_", None)
        if classes is not None and "labels" not in self._kwargs and "labels" not in kwargs:
            kwargs = {**kwargs, "labels": np.asarray(classes)}
        return super()._score(method_caller, estimator, X, y_true, **kwargs)


def _make(name, **kwargs):
    # the arguments of sklearn.metrics.make_scorer(..., greater_is_better=False,
    # response_method="predict_proba"), which builds a _Scorer the same way
    return _ClassesScorer(score_func=_scorer_metric(_METRICS[name]), sign=-1,
                          kwargs=kwargs, response_method="predict_proba")


_SCORERS = {name: _make(name) for name in _METRICS}
neg_expected_calibration_error_scorer = _SCORERS["neg_expected_calibration_error"]
neg_rms_calibration_error_scorer = _SCORERS["neg_rms_calibration_error"]
neg_maximum_calibration_error_scorer = _SCORERS["neg_maximum_calibration_error"]
neg_classwise_calibration_error_scorer = _SCORERS["neg_classwise_calibration_error"]
neg_debiased_calibration_error_scorer = _SCORERS["neg_debiased_calibration_error"]
neg_smooth_calibration_error_scorer = _SCORERS["neg_smooth_calibration_error"]
neg_brier_score_scorer = _SCORERS["neg_brier_score"]
neg_log_likelihood_scorer = _SCORERS["neg_log_likelihood"]


def get_scorer_names():
    """List the names accepted by :func:`skcal.metrics.get_scorer`.

    Returns
    -------
    names : list of str
        The skcal scorer names followed by the other names of
        :func:`sklearn.metrics.get_scorer_names`. ``"neg_brier_score"`` is in
        both; skcal's gives the same values as scikit-learn's.
    """
    return sorted(_SCORERS) + [
        name for name in _sklearn_get_scorer_names() if name not in _SCORERS
    ]


def get_scorer(scoring, **kwargs):
    """Return a scorer from its name.

    Parameters
    ----------
    scoring : str or callable
        One of skcal's names (``"neg_expected_calibration_error"``,
        ``"neg_rms_calibration_error"``, ``"neg_maximum_calibration_error"``,
        ``"neg_classwise_calibration_error"``,
        ``"neg_debiased_calibration_error"``, ``"neg_smooth_calibration_error"``,
        ``"neg_brier_score"``,
        ``"neg_log_likelihood"``); any other value is passed to
        :func:`sklearn.metrics.get_scorer`.
    **kwargs
        Keyword arguments for the skcal metric, e.g. ``n_bins=10`` or
        ``strategy="quantile"`` (``labels=`` is not needed, see Notes; one
        given here replaces ``classes_``). Only allowed with skcal's names;
        their names are checked here, their values when the scorer runs.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y)``: minus the metric of
        ``estimator.predict_proba(X)`` (greater is better), usable as
        ``scoring=`` in :class:`~sklearn.model_selection.GridSearchCV` and
        :func:`~sklearn.model_selection.cross_val_score`.

    Raises
    ------
    ValueError
        For an unknown name, or keyword arguments with a scikit-learn name.
    TypeError
        For a keyword argument that the skcal metric does not accept (the
        message names it and lists the accepted ones).

    Notes
    -----
    The metric gets ``labels=estimator.classes_`` (the labels of the
    ``predict_proba`` columns), so the score of a fold equals the metric
    computed by hand with those labels, whichever classes the fold holds. For
    a binary classifier scikit-learn hands the metric the probability of
    ``estimator.classes_[1]`` only, the probability of ``labels[1]``; an
    estimator without ``classes_`` is scored with the sorted labels of the fold.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_val_score
    >>> from skcal.metrics import get_scorer
    >>> X, y = load_iris(return_X_y=True)
    >>> scores = cross_val_score(LogisticRegression(max_iter=1000), X, y,
    ...                          scoring=get_scorer("neg_brier_score"))
    >>> bool((scores <= 0).all())
    True
    """
    if isinstance(scoring, str) and scoring in _SCORERS:
        if kwargs:
            _check_keywords(scoring, kwargs)
            return _make(scoring, **kwargs)
        return _SCORERS[scoring]
    if kwargs:
        raise ValueError(
            f"Keyword arguments are only accepted for skcal scorers "
            f"{sorted(_SCORERS)}, not {scoring!r}."
        )
    return _sklearn_get_scorer(scoring)
